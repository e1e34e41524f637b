"""Pictures of the cluster drawn with numpy only (a built-in 5x7 pixel font for the labels)."""

from __future__ import annotations

import numpy as np

RENDER_MODES = ("ansi", "rgb_array")


def check_render_mode(mode, who: str) -> None:
    """Refuses, at construction, a render mode the envs do not have, with the supported list."""
    if mode is not None and mode not in RENDER_MODES:
        hint = (" (no window: print render() of 'ansi', or show the 'rgb_array' image, e.g. with "
                "matplotlib's plt.imshow)") if mode == "human" else ""
        raise ValueError(f"{who}: render_mode {mode!r} is not supported; supported: 'ansi' (text), 'rgb_array' "
                         f"(an image) or None{hint}")


FREE = np.array([225, 225, 225], dtype=np.uint8)
BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)
PICKED = np.array([20, 20, 20], dtype=np.uint8)
FAILED = np.array([150, 40, 40], dtype=np.uint8)  # out of service after a hardware failure (holder -2)


def job_colors(job_ids: np.ndarray) -> np.ndarray:
    """A stable, well-spread colour per job id (golden-ratio hues), uint8 RGB."""
    ids = np.asarray(job_ids, dtype=np.int64)
    h = (ids * 0.618033988749895) % 1.0
    s, v = 0.55, 0.85
    i = np.floor(h * 6).astype(np.int64) % 6
    f = h * 6 - np.floor(h * 6)
    p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
    vv = np.full_like(h, v)
    pp = np.full_like(h, p)
    r = np.choose(i, [vv, q, pp, pp, t, vv])
    g = np.choose(i, [t, vv, vv, q, pp, pp])
    b = np.choose(i, [pp, pp, t, vv, vv, q])
    return (np.stack([r, g, b], axis=-1) * 255).astype(np.uint8)


# The 5x7 font (with a descender row below): per character five columns, bit k of a column is row k
# (top first).
_FONT_COLUMNS = {
    "0": (0x3E, 0x51, 0x49, 0x45, 0x3E), "1": (0x00, 0x42, 0x7F, 0x40, 0x00), "2": (0x42, 0x61, 0x51, 0x49, 0x46),
    "3": (0x21, 0x41, 0x45, 0x4B, 0x31), "4": (0x18, 0x14, 0x12, 0x7F, 0x10), "5": (0x27, 0x45, 0x45, 0x45, 0x39),
    "6": (0x3C, 0x4A, 0x49, 0x49, 0x30), "7": (0x01, 0x71, 0x09, 0x05, 0x03), "8": (0x36, 0x49, 0x49, 0x49, 0x36),
    "9": (0x06, 0x49, 0x49, 0x29, 0x1E), "a": (0x20, 0x54, 0x54, 0x54, 0x78), "b": (0x7F, 0x48, 0x44, 0x44, 0x38),
    "c": (0x38, 0x44, 0x44, 0x44, 0x20), "d": (0x38, 0x44, 0x44, 0x48, 0x7F), "e": (0x38, 0x54, 0x54, 0x54, 0x18),
    "f": (0x08, 0x7E, 0x09, 0x01, 0x02), "g": (0x18, 0xA4, 0xA4, 0xA4, 0x7C), "h": (0x7F, 0x08, 0x04, 0x04, 0x78),
    "i": (0x00, 0x44, 0x7D, 0x40, 0x00), "j": (0x40, 0x80, 0x84, 0x7D, 0x00), "k": (0x7F, 0x10, 0x28, 0x44, 0x00),
    "l": (0x00, 0x41, 0x7F, 0x40, 0x00), "m": (0x7C, 0x04, 0x18, 0x04, 0x78), "n": (0x7C, 0x08, 0x04, 0x04, 0x78),
    "o": (0x38, 0x44, 0x44, 0x44, 0x38), "p": (0xFC, 0x24, 0x24, 0x24, 0x18), "q": (0x18, 0x24, 0x24, 0x18, 0xFC),
    "r": (0x7C, 0x08, 0x04, 0x04, 0x08), "s": (0x48, 0x54, 0x54, 0x54, 0x20), "t": (0x04, 0x3F, 0x44, 0x40, 0x20),
    "u": (0x3C, 0x40, 0x40, 0x20, 0x7C), "v": (0x1C, 0x20, 0x40, 0x20, 0x1C), "w": (0x3C, 0x40, 0x30, 0x40, 0x3C),
    "x": (0x44, 0x28, 0x10, 0x28, 0x44), "y": (0x9C, 0xA0, 0xA0, 0xA0, 0x7C), "z": (0x44, 0x64, 0x54, 0x4C, 0x44),
    "A": (0x7E, 0x11, 0x11, 0x11, 0x7E), "G": (0x3E, 0x41, 0x49, 0x49, 0x7A), "P": (0x7F, 0x09, 0x09, 0x09, 0x06),
    "U": (0x3F, 0x40, 0x40, 0x40, 0x3F), "R": (0x7F, 0x09, 0x19, 0x29, 0x46), "N": (0x7F, 0x04, 0x08, 0x10, 0x7F),
    " ": (0, 0, 0, 0, 0), "-": (0x08, 0x08, 0x08, 0x08, 0x08), ".": (0x00, 0x60, 0x60, 0x00, 0x00),
    ":": (0x00, 0x36, 0x36, 0x00, 0x00), "/": (0x20, 0x10, 0x08, 0x04, 0x02), "(": (0x00, 0x1C, 0x22, 0x41, 0x00),
    ")": (0x00, 0x41, 0x22, 0x1C, 0x00), ",": (0x00, 0x50, 0x30, 0x00, 0x00), "+": (0x08, 0x08, 0x3E, 0x08, 0x08),
    "=": (0x14, 0x14, 0x14, 0x14, 0x14), "#": (0x14, 0x7F, 0x14, 0x7F, 0x14),
}
_GLYPHS = {c: (np.array(cols, dtype=np.uint8)[None, :] >> np.arange(8, dtype=np.uint8)[:, None] & 1).astype(bool)
           for c, cols in _FONT_COLUMNS.items()}
TEXT = np.array([40, 40, 40], dtype=np.uint8)
_SCALE = 2  # pixels per font dot
_CHAR_W, _CHAR_H = 6 * _SCALE, 9 * _SCALE  # a character's cell, spacing included


def text_width(text: str) -> int:
    return len(text) * _CHAR_W


def draw_text(img: np.ndarray, x: int, y: int, text: str, color=TEXT) -> None:
    """Writes ``text`` with its top-left corner at (x, y), clipped to the image; characters the
    font lacks are drawn as their lower-case form, or blank."""
    for k, ch in enumerate(text):
        g = _GLYPHS.get(ch, _GLYPHS.get(ch.lower(), _GLYPHS[" "]))
        mask = np.kron(g, np.ones((_SCALE, _SCALE), dtype=bool))
        x0 = x + k * _CHAR_W
        h = min(mask.shape[0], img.shape[0] - y)
        w = min(mask.shape[1], img.shape[1] - x0)
        if h <= 0 or w <= 0 or x0 < 0 or y < 0:
            continue
        region = img[y : y + h, x0 : x0 + w]
        region[mask[:h, :w]] = color


def _cells(topology: dict):
    """Per GPU its block (a domain of level 2), its row in the block (a domain of level 1) and its
    column (its place in that domain); the blocks, the most rows of a block and the most columns
    of a row; the two levels' names. From ``topology["hierarchy"]``, else a tree's keys."""
    h = topology.get("hierarchy")
    if h is None:
        R, N, S = int(topology["racks"]), int(topology["nodes_per_rack"]), int(topology["gpus_per_node"])
        g = np.arange(R * N * S)
        return g // (N * S), (g // S) % N, g % S, R, N, S, ("node", "rack")
    node_sizes = np.asarray(h[0]["sizes"], dtype=np.int64)
    block_sizes = np.asarray(h[1]["sizes"], dtype=np.int64)  # the root's one domain when there are two levels
    node_first = np.concatenate([[0], np.cumsum(node_sizes)[:-1]])
    node = np.repeat(np.arange(node_sizes.size), node_sizes)
    slot = np.arange(node.size) - node_first[node]
    block_of_node = np.searchsorted(np.cumsum(block_sizes), node_first, side="right")
    first_node_of_block = np.searchsorted(block_of_node, np.arange(block_sizes.size))
    node_in_block = np.arange(node_sizes.size) - first_node_of_block[block_of_node]
    return (block_of_node[node], node_in_block[node], slot, int(block_sizes.size), int(node_in_block.max()) + 1,
            int(node_sizes.max()), (str(h[0]["name"]), str(h[1]["name"])))


def occupancy_image(topology: dict, holders: np.ndarray, picked=(), cell: int | None = None,
                    title: str | None = None, max_width: int = 1600) -> np.ndarray:
    """RGB image (H, W, 3) of the cluster, labelled: one block per rack ("rack r" above it; racks
    side by side, wrapped into rows of blocks to keep the image within about ``max_width`` pixels),
    one row per node ("node n" on the left), one cell per GPU (GPU numbers within the node below
    the block); a busy GPU has its job's colour, a free one is light grey, a GPU picked for the
    current job is dark, one out of service after a hardware failure (holder -2) dark red. A colour key under the racks names the colours (a few running jobs by
    id); ``title`` (e.g. the time and job counts) heads the image. On any level hierarchy
    (``topology["hierarchy"]``, e.g. an env's ``topology()``) the blocks are the domains of level 2
    and the rows those of level 1, labelled by the levels' names; domains may differ in size."""
    rack, node_in_rack, slot, R, N, S, names = _cells(topology)
    holders = np.asarray(holders)
    G = rack.size
    if holders.shape != (G,):
        raise ValueError(f"holders must have shape ({G},), got {holders.shape}")
    if cell is None:
        cell = int(max(6, min(24, max_width // max(1, min(R, 4) * S))))
    gap = 1 if cell < 8 else 2
    colors = np.empty((G, 3), dtype=np.uint8)
    busy = holders >= 0
    colors[~busy] = FREE
    colors[holders == -2] = FAILED
    if busy.any():
        colors[busy] = job_colors(holders[busy])
    picked = np.asarray(list(picked), dtype=np.int64)
    if picked.size:
        colors[picked] = PICKED

    pad = 8
    label_w = text_width(f"{names[0]} {N - 1}") + pad  # the node labels left of each row of racks
    rack_w = S * cell + (S - 1) * gap
    rack_gap = max(min(text_width(f"{names[1]} {R - 1}") - rack_w, 4 * _CHAR_W) + pad, 2 * pad)
    per_row = max(1, min(R, (max_width - label_w) // (rack_w + rack_gap)))
    block_rows = -(-R // per_row)
    rack_h = N * cell + (N - 1) * gap
    gpu_labels = cell >= _CHAR_W * len(str(S - 1)) + gap  # GPU numbers fit under their column
    band_h = _CHAR_H + 4 + rack_h + (_CHAR_H + 4 if gpu_labels else 0) + pad  # a row of rack blocks
    title_h = _CHAR_H + pad if title else 0

    # the colour key: free, picked, and a few running jobs by id
    jobs = [int(j) for j in dict.fromkeys(holders[busy].tolist())][:6]
    key = [(FREE, "free"), (PICKED, "picked for the current job")] + [
        (job_colors(np.array([j]))[0], f"job {j}") for j in jobs]
    if busy.any() and len(set(holders[busy].tolist())) > len(jobs):
        key.append((None, "..."))
    W = max(pad + label_w + per_row * (rack_w + rack_gap), pad + text_width(title or "") + pad, 320)
    key_rows, x, row = [], pad, []
    for c, lab in key:  # lay the key out in lines that fit the width
        w = _CHAR_H + 4 + text_width(lab) + 2 * _CHAR_W
        if row and x + w > W - pad:
            key_rows.append(row)
            row, x = [], pad
        row.append((x, c, lab))
        x += w
    key_rows.append(row)
    key_h = len(key_rows) * (_CHAR_H + 6) + pad
    H = pad + title_h + block_rows * band_h + key_h
    img = np.empty((H, W, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    if title:
        draw_text(img, pad, pad, title)

    band_y = pad + title_h + (rack // per_row) * band_h
    y0 = band_y + _CHAR_H + 4 + node_in_rack * (cell + gap)
    x0 = pad + label_w + (rack % per_row) * (rack_w + rack_gap) + slot * (cell + gap)
    dy, dx = np.meshgrid(np.arange(cell), np.arange(cell), indexing="ij")
    ys = (y0[:, None, None] + dy[None]).reshape(G, -1)
    xs = (x0[:, None, None] + dx[None]).reshape(G, -1)
    img[ys, xs] = colors[:, None, :]

    # labels: racks above their blocks, nodes on the left (every k-th when rows are thin), GPUs below
    node_every = max(1, -(-(_CHAR_H // 2 + 2) // (cell + gap)))
    for b in range(block_rows):
        by = pad + title_h + b * band_h
        for n in range(0, N, node_every):
            draw_text(img, pad, by + _CHAR_H + 4 + n * (cell + gap) + (cell - _CHAR_H) // 2, f"{names[0]} {n}")
        for r in range(b * per_row, min(R, (b + 1) * per_row)):
            rx = pad + label_w + (r % per_row) * (rack_w + rack_gap)
            draw_text(img, rx, by, f"{names[1]} {r}")
            if gpu_labels:
                for s in range(S):
                    draw_text(img, rx + s * (cell + gap) + (cell - text_width(str(s))) // 2,
                              by + _CHAR_H + 4 + rack_h + 3, str(s))
    ky = pad + title_h + block_rows * band_h
    for i, row in enumerate(key_rows):
        y = ky + i * (_CHAR_H + 6)
        for x, c, lab in row:
            if c is not None:
                img[y : y + _CHAR_H, x : x + _CHAR_H] = c
                img[y : y + _CHAR_H, [x, x + _CHAR_H - 1]] = TEXT  # a frame, so that "free" shows on white
                img[[y, y + _CHAR_H - 1], x : x + _CHAR_H] = TEXT
                draw_text(img, x + _CHAR_H + 4, y, lab)
            else:
                draw_text(img, x, y, lab)
    return img


def status_title(info: dict) -> str:
    """A render title from an env's ``info()``: simulated time, jobs finished, queued, running."""
    return (f"t = {info['time'] / 3600:.2f} h   jobs done {info['jobs_done']}/{info['jobs_total']}   "
            f"queued {info['queued']}   running {info['running']}")
