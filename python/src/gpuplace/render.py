"""Pictures of the cluster drawn with numpy only."""

from __future__ import annotations

import numpy as np

FREE = np.array([225, 225, 225], dtype=np.uint8)
BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)
PICKED = np.array([20, 20, 20], dtype=np.uint8)


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


def occupancy_image(topology: dict, holders: np.ndarray, picked=(), cell: int | None = None) -> np.ndarray:
    """RGB image (H, W, 3) of the cluster: racks side by side, one row per node, one cell per GPU;
    a busy GPU has its job's colour, a free one is light grey, a GPU picked for the current job is
    dark."""
    R = int(topology["racks"])
    N = int(topology["nodes_per_rack"])
    S = int(topology["gpus_per_node"])
    holders = np.asarray(holders)
    G = R * N * S
    if holders.shape != (G,):
        raise ValueError(f"holders must have shape ({G},), got {holders.shape}")
    if cell is None:
        cell = int(max(4, min(16, 1024 // max(1, R * S))))
    gap = 1 if cell < 8 else 2
    rack_gap = 3 * gap
    colors = np.empty((G, 3), dtype=np.uint8)
    busy = holders >= 0
    colors[~busy] = FREE
    if busy.any():
        colors[busy] = job_colors(holders[busy])
    picked = np.asarray(list(picked), dtype=np.int64)
    if picked.size:
        colors[picked] = PICKED
    g = np.arange(G)
    rack, node_in_rack, slot = g // (N * S), (g // S) % N, g % S
    H = N * cell + (N + 1) * gap
    W = R * S * cell + R * (S - 1) * gap + (R + 1) * rack_gap
    img = np.empty((H, W, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    y0 = gap + node_in_rack * (cell + gap)
    x0 = rack_gap + rack * (S * cell + (S - 1) * gap + rack_gap) + slot * (cell + gap)
    dy, dx = np.meshgrid(np.arange(cell), np.arange(cell), indexing="ij")
    ys = (y0[:, None, None] + dy[None]).reshape(G, -1)
    xs = (x0[:, None, None] + dx[None]).reshape(G, -1)
    img[ys, xs] = colors[:, None, :]
    return img
