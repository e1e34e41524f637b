"""Plots (matplotlib, in the package's ``plot`` extra): a training run's learning curve and JCT
comparison (:func:`training_plots`, ``python -m gpuplace plot RUN_FOLDER``), JCT CDF per policy,
learning curves of train-sb3 and a cluster occupancy timeline. Every plot file is written
atomically."""

from __future__ import annotations

import csv
import glob
import math
import os
from typing import Mapping

import numpy as np

from ._files import atomic_target, check_input_file
from .render import job_colors

MISSING_MATPLOTLIB = ("the plots need matplotlib, which is in gpuplace's 'plot' extra: pip install 'gpuplace[plot]' "
                      "(from a clone of the repository: pip install './python[plot]')")


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(MISSING_MATPLOTLIB) from e
    return plt


def _save(fig, out: str) -> str:
    plt = _plt()
    try:
        with atomic_target(out) as tmp:
            # "tight": the legend outside the axes and every label are inside the image
            fig.savefig(tmp, dpi=120, format=os.path.splitext(out)[1].lstrip(".") or "png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return out


#: Legends with more entries than this go outside the axes, on the right.
LEGEND_INSIDE_MAX = 6


def _legend(ax, fontsize: float = 8) -> None:
    """The legend inside the axes when it is short, else outside on the right (never over the curves)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) <= LEGEND_INSIDE_MAX:
        ax.legend(fontsize=fontsize)
    else:
        ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def jct_cdf(jcts: Mapping[str, np.ndarray], out: str, title: str = "JCT CDF") -> str:
    """Empirical CDF of job completion times (hours), one line per policy."""
    if not any(np.asarray(v).size for v in jcts.values()):
        raise ValueError(f"JCT CDF: no finished jobs to plot ({', '.join(jcts) or 'no policies'})")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, v in jcts.items():
        x = np.sort(np.asarray(v, dtype=float)) / 3600.0
        if x.size == 0:
            continue
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=f"{name} (mean {x.mean():.2f} h)")
    ax.set_xlabel("job completion time (h)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend(ax)
    fig.tight_layout()
    return _save(fig, out)


def read_learning_curve(path: str, x: str = "timesteps", y: str = "episode_return") -> tuple[np.ndarray, np.ndarray]:
    """Reads a learning-curve CSV (train-sb3's episodes.csv, or any CSV with the two columns). A
    missing or empty file, or one without the columns or rows, is an error naming it (a plot of
    nothing would look like a result)."""
    cols, rows = read_rows(path)
    if x not in cols or y not in cols:
        raise ValueError(f"{path}: needs columns {x!r} and {y!r}, has {', '.join(cols)}")
    xs, ys = [], []
    for i, row in enumerate(rows, 2):
        try:
            xs.append(float(row[x]))
            ys.append(float(row[y]))
        except (TypeError, ValueError):
            raise ValueError(f"{path}:{i}: {x} {row[x]!r}, {y} {row[y]!r}: not numbers") from None
    return np.asarray(xs), np.asarray(ys)


def learning_curves(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]], out: str, ylabel: str = "episode return", window: int = 20
) -> str:
    """Learning curves (x, y) with a moving average of `window` episodes."""
    if not any(len(y) for _, y in curves.values()):
        raise ValueError(f"learning curves: no points to plot in {', '.join(curves) or 'no curves'}")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (x, y) in curves.items():
        if len(y) == 0:
            continue
        w = max(1, min(window, len(y)))
        smooth = np.convolve(y, np.ones(w) / w, mode="valid")
        ax.plot(x, y, alpha=0.2)
        ax.plot(x[w - 1 :], smooth, label=name)
    ax.set_xlabel("timesteps")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    _legend(ax)
    fig.tight_layout()
    return _save(fig, out)


def occupancy_timeline(jobs: Mapping[str, np.ndarray], num_gpus: int, out: str, title: str = "cluster occupancy",
                       gpus_per_node: int | None = None) -> str:
    """One row per GPU, a bar per job from its start to its end, coloured by job and numbered by its
    id where the bar has room (the colours and numbers of the rgb_array render's key: "job N")."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, max(3.0, num_gpus * 0.06 + 1.5)))
    ids = np.asarray(jobs["id"])
    colors = job_colors(ids) / 255.0
    gpus, off, k = np.asarray(jobs["gpus"]), np.asarray(jobs["gpu_offset"]), np.asarray(jobs["num_gpus"])
    start, end = np.asarray(jobs["start"]) / 3600.0, np.asarray(jobs["end"]) / 3600.0
    span = max(float(end.max() - start.min()), 1e-9) if ids.size else 1.0
    for j in range(ids.size):
        for g in gpus[off[j] : off[j] + k[j]]:
            ax.broken_barh([(start[j], end[j] - start[j])], (g - 0.4, 0.8), facecolors=[colors[j]], linewidth=0)
        # its number on its first GPU's bar, where the bar is long enough for it (about 2% of the axis)
        if k[j] and (end[j] - start[j]) > 0.02 * span * max(1, len(str(ids[j]))) / 2 and num_gpus <= 256:
            ax.text(start[j], gpus[off[j]], f" {ids[j]}", va="center", ha="left", fontsize=5, color="black")
    if gpus_per_node:
        for b in range(gpus_per_node, num_gpus, gpus_per_node):
            ax.axhline(b - 0.5, color="0.8", linewidth=0.5)
    ax.set_ylim(-0.5, num_gpus - 0.5)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (hours since the episode began)")
    ax.set_ylabel("GPU index" + (f" (lines between nodes of {gpus_per_node} GPUs)" if gpus_per_node else ""))
    ax.set_title(title)
    fig.tight_layout()
    return _save(fig, out)


# ---- a training run's plots (gpuplace-train, python -m gpuplace train) ---------------------------

LEARNING_COLUMNS = ("env_steps", "mean_jct")  # learning.csv (include/gpuplace/rl/run.hpp)
EPISODE_COLUMNS = ("timesteps", "avg_jct")  # train-sb3's episodes.csv (one row per training episode)
COMPARE_COLUMNS = ("policy", "avg_jct")  # compare.csv, an EvalReport's csv()


def read_rows(path: str) -> tuple[list[str], list[dict]]:
    """A CSV file's columns and rows; a missing, special (a FIFO), empty or header-only file is an
    error naming it."""
    path = check_input_file(path, "CSV file")
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.DictReader(f)
        rows = list(r)
        cols = list(r.fieldnames or [])
    if not cols:
        raise ValueError(f"{path}: an empty CSV file (no header, no rows): nothing to plot")
    if not rows:
        raise ValueError(f"{path}: no rows under its header ({', '.join(cols)}): nothing to plot")
    return cols, rows


def _num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _policy_jcts(path: str) -> dict[str, list[float]]:
    """Per policy, its avg_jct (hours) on every seed of an EvalReport CSV."""
    out: dict[str, list[float]] = {}
    for r in read_rows(path)[1]:
        v = _num(r.get("avg_jct"))
        if v is not None:
            out.setdefault(r["policy"], []).append(v / 3600)
    return out


#: The rows of a comparison that are a trained agent (the C++ PPO, train-sb3's, RLlib's), not heuristics.
_AGENTS = ("ppo", "maskable_ppo", "rllib_ppo")

#: Heuristics a learning curve names in its legend (the best); the others share one entry.
LEARNING_HEURISTICS_NAMED = 5


def learning_curve(learning_csv: str, out: str, heuristics: Mapping[str, float] | None = None,
                   where: str = "validation seeds") -> str:
    """A training run's learning curve: the mean JCT of training episodes and the greedy validation
    JCT against env steps (learning.csv), the imitation phase shaded, and ``heuristics`` (name ->
    mean JCT in hours) as dashed lines."""
    return _learning_curve_rows(read_rows(learning_csv)[1], out, heuristics, where)


def _sb3_learning_rows(episodes_csv: str, validation_csv: str | None) -> list[dict]:
    """train-sb3's episodes.csv (and validation.csv) as learning.csv rows: one per training episode
    (env_steps, mean_jct) and one per validation (env_steps, val_jct), in env-step order."""
    rows = [{"env_steps": r["timesteps"], "mean_jct": r["avg_jct"]} for r in read_rows(episodes_csv)[1]]
    if validation_csv and os.path.exists(validation_csv):
        rows += [{"env_steps": r["timesteps"], "val_jct": r["val_jct"]} for r in read_rows(validation_csv)[1]]
    return sorted(rows, key=lambda r: float(r["env_steps"]))


def _learning_curve_rows(rows: list[dict], out: str, heuristics: Mapping[str, float] | None = None,
                         where: str = "validation seeds") -> str:
    plt = _plt()
    steps = [int(float(r["env_steps"])) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    pts = [(s, j / 3600) for s, r in zip(steps, rows) if (j := _num(r.get("mean_jct")))]
    if pts:
        ax.plot(*zip(*pts), color="tab:blue", alpha=0.6, label="training episodes (sampled actions)")
    val = [(s, v / 3600) for s, r in zip(steps, rows) if (v := _num(r.get("val_jct")))]
    if val:
        ax.plot(*zip(*val), "o-", color="tab:red", ms=3, label="greedy, validation seeds")
    imit = [s for s, r in zip(steps, rows) if r.get("phase") == "imitation"]
    if imit:
        ax.axvspan(0, max(imit), color="0.9", label="imitating the teacher heuristic")
    # the best heuristics by name, the others grouped as one legend entry (their lines thin and grey)
    ranked = sorted(((v, n) for n, v in (heuristics or {}).items() if not n.startswith(_AGENTS)))
    for i, (v, name) in enumerate(ranked[:LEARNING_HEURISTICS_NAMED]):
        ax.axhline(v, ls="--", lw=1, color=f"C{(i + 2) % 10}", label=f"{name} {v:.3f} h")
    rest = ranked[LEARNING_HEURISTICS_NAMED:]
    for k, (v, _) in enumerate(rest):
        ax.axhline(v, ls=":", lw=0.7, color="0.6", label=f"{len(rest)} other heuristics, {rest[0][0]:.3f} to {rest[-1][0]:.3f} h"
                   if k == 0 else None)
    shown = [y for _, y in pts + val] + [v for v, _ in ranked[:LEARNING_HEURISTICS_NAMED]]
    if shown and rest:  # the axis spans the curves and the named heuristics, not the worst ones far above
        lo, hi = min(shown), max(shown)
        ax.set_ylim(lo - 0.08 * (hi - lo or lo or 1), hi + 0.08 * (hi - lo or lo or 1))
    ax.set_xlabel("env steps")
    ax.set_ylabel("mean JCT (h)")
    ax.set_title(f"PPO learning curve (heuristics: mean JCT on the {where})" if ranked else "PPO learning curve")
    ax.grid(alpha=0.3)
    _legend(ax, fontsize=7)
    fig.tight_layout()
    return _save(fig, out)


def jct_comparison(jcts: Mapping[str, list[float]], out: str, title: str | None = None) -> str:
    """Bars of every policy's mean JCT (hours) +- its standard error over seeds, best first; PPO
    ("ppo" or a name starting with it) in red."""
    plt = _plt()
    names = sorted(jcts, key=lambda n: float(np.mean(jcts[n])))
    means = [float(np.mean(jcts[n])) for n in names]
    sems = [float(np.std(jcts[n], ddof=1) / math.sqrt(len(jcts[n]))) if len(jcts[n]) > 1 else 0.0 for n in names]
    fig, ax = plt.subplots(figsize=(max(7.0, 0.45 * len(names)), 4))
    colors = ["tab:red" if n.startswith(_AGENTS) else "tab:gray" for n in names]
    ax.bar(names, means, yerr=sems, color=colors, capsize=4)
    ax.set_ylabel("mean JCT (h), mean +- s.e.")
    seeds = max((len(v) for v in jcts.values()), default=0)
    ax.set_title(title or f"held-out seeds ({seeds})")
    ax.grid(axis="y", alpha=0.3)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    return _save(fig, out)


def training_plots(source: str, out_dir: str | None = None) -> list[str]:
    """The plots of a training run: ``source`` is a run folder (gpuplace-train's or
    ``python -m gpuplace train``'s: learning.csv, compare*.csv, validation_heuristics.csv; or
    ``train-sb3``'s: episodes.csv, validation.csv, compare.csv), a learning.csv, an episodes.csv, or a
    compare.csv. Writes learning_curve.png (from learning.csv, with every
    heuristic's JCT on the validation seeds, else on the held-out seeds) and jct_comparison.png
    (jct_comparison_K.png for compare_K.csv: PPO and every heuristic on the held-out seeds) into
    ``out_dir`` (default: the run folder). Returns the files written."""
    source = os.fspath(source)
    if os.path.isdir(source):
        folder, learning = source, os.path.join(source, "learning.csv")
        if not os.path.exists(learning):
            learning = os.path.join(source, "episodes.csv")  # a train-sb3 run folder
            if not os.path.exists(learning):
                learning = None
        compares = sorted(glob.glob(os.path.join(glob.escape(folder), "compare*.csv")))
    elif os.path.exists(source):
        folder = os.path.dirname(os.path.abspath(source))
        cols = read_rows(source)[0]
        if all(c in cols for c in LEARNING_COLUMNS) or all(c in cols for c in EPISODE_COLUMNS):
            learning, compares = source, []  # the learning curve only (the folder's compare.csv gives its lines)
        elif all(c in cols for c in COMPARE_COLUMNS):
            learning, compares = None, [source]
        else:
            raise ValueError(f"{source}: not a learning.csv (columns {', '.join(LEARNING_COLUMNS)}), an episodes.csv "
                             f"(columns {', '.join(EPISODE_COLUMNS)}) nor a compare.csv (columns "
                             f"{', '.join(COMPARE_COLUMNS)}); its columns are {', '.join(cols) or 'none'}")
    else:
        raise FileNotFoundError(f"{source}: no such run folder or CSV file")
    if learning is None and not compares:
        raise ValueError(f"{source}: nothing to plot: no learning.csv, episodes.csv or compare.csv in it (a run "
                         "folder of gpuplace-train, python -m gpuplace train or train-sb3 has them)")
    _plt()  # the error naming the extra before anything is read further
    out_dir = out_dir or folder
    os.makedirs(out_dir, exist_ok=True)
    written = []
    if learning:
        sibling = os.path.join(folder, "compare.csv")
        held_out = _policy_jcts(compares[0] if compares else sibling) if compares or os.path.exists(sibling) else {}
        vh = os.path.join(folder, "validation_heuristics.csv")
        if os.path.exists(vh):
            lines = {r["policy"]: v / 3600 for r in read_rows(vh)[1] if (v := _num(r.get("avg_jct"))) is not None}
            where = "validation seeds"
        else:
            lines = {n: float(np.mean(v)) for n, v in held_out.items()}
            where = "held-out seeds"
        target = os.path.join(out_dir, "learning_curve.png")
        if all(c in read_rows(learning)[0] for c in LEARNING_COLUMNS):
            written.append(learning_curve(learning, target, lines, where))
        else:  # train-sb3's episodes.csv, with its validation.csv when there is one
            rows = _sb3_learning_rows(learning, os.path.join(os.path.dirname(os.path.abspath(learning)), "validation.csv"))
            written.append(_learning_curve_rows(rows, target, lines, where))
    for path in compares:
        jcts = _policy_jcts(path)
        if not jcts:
            raise ValueError(f"{path}: no rows with an avg_jct")
        stem = os.path.splitext(os.path.basename(path))[0]
        name = "jct_comparison" + stem[len("compare"):] + ".png" if stem.startswith("compare") else f"{stem}_jct.png"
        written.append(jct_comparison(jcts, os.path.join(out_dir, name)))
    return written
