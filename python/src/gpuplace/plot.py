"""Plots (needs the [plot] extra, matplotlib): JCT CDF per policy, learning curves, and a cluster
occupancy timeline."""

from __future__ import annotations

import csv
from typing import Mapping, Sequence

import numpy as np

from .render import job_colors


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("plots need matplotlib: pip install './python[plot]'") from e
    return plt


def jct_cdf(jcts: Mapping[str, np.ndarray], out: str, title: str = "JCT CDF") -> str:
    """Empirical CDF of job completion times (hours), one line per policy."""
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
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def read_learning_curve(path: str, x: str = "timesteps", y: str = "episode_return") -> tuple[np.ndarray, np.ndarray]:
    """Reads a learning-curve CSV (train-sb3's episodes.csv, or any CSV with the two columns)."""
    xs, ys = [], []
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames is None or x not in r.fieldnames or y not in r.fieldnames:
            raise ValueError(f"{path}: needs columns {x!r} and {y!r}, has {r.fieldnames}")
        for row in r:
            xs.append(float(row[x]))
            ys.append(float(row[y]))
    return np.asarray(xs), np.asarray(ys)


def learning_curves(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]], out: str, ylabel: str = "episode return", window: int = 20
) -> str:
    """Learning curves (x, y) with a moving average of `window` episodes."""
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
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def occupancy_timeline(jobs: Mapping[str, np.ndarray], num_gpus: int, out: str, title: str = "cluster occupancy",
                       gpus_per_node: int | None = None) -> str:
    """One row per GPU, a bar per job from its start to its end, coloured by job (the same colours
    as the rgb_array render)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, max(3.0, num_gpus * 0.06 + 1.5)))
    ids = np.asarray(jobs["id"])
    colors = job_colors(ids) / 255.0
    gpus, off, k = np.asarray(jobs["gpus"]), np.asarray(jobs["gpu_offset"]), np.asarray(jobs["num_gpus"])
    start, end = np.asarray(jobs["start"]) / 3600.0, np.asarray(jobs["end"]) / 3600.0
    for j in range(ids.size):
        for g in gpus[off[j] : off[j] + k[j]]:
            ax.broken_barh([(start[j], end[j] - start[j])], (g - 0.4, 0.8), facecolors=[colors[j]], linewidth=0)
    if gpus_per_node:
        for b in range(gpus_per_node, num_gpus, gpus_per_node):
            ax.axhline(b - 0.5, color="0.8", linewidth=0.5)
    ax.set_ylim(-0.5, num_gpus - 0.5)
    ax.invert_yaxis()
    ax.set_xlabel("time (h)")
    ax.set_ylabel("GPU")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
