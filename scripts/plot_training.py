#!/usr/bin/env python3
"""Plots of a gpuplace-train run (matplotlib, optional dependency).

    python3 scripts/plot_training.py --dir out/train

reads DIR/learning.csv (and DIR/compare.csv when present) and writes
DIR/learning_curve.png (mean JCT of training episodes and greedy validation JCT vs env steps)
and DIR/jct_comparison.png (mean JCT +- standard error of PPO and every heuristic on held-out seeds).
"""
import argparse
import csv
import math
import os
import sys


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    try:
        v = float(x)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="output directory of gpuplace-train")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_training.py: matplotlib is not installed; no plots written", file=sys.stderr)
        return 1

    learning = os.path.join(a.dir, "learning.csv")
    compare = os.path.join(a.dir, "compare.csv")
    heur = {}
    if os.path.exists(compare):
        for r in read_csv(compare):
            heur.setdefault(r["policy"], []).append(float(r["avg_jct"]) / 3600)

    if os.path.exists(learning):
        rows = read_csv(learning)
        steps = [int(r["env_steps"]) for r in rows]
        jct = [num(r["mean_jct"]) for r in rows]
        fig, ax = plt.subplots(figsize=(7, 4.2))
        pts = [(s, j / 3600) for s, j in zip(steps, jct) if j]
        if pts:
            ax.plot(*zip(*pts), color="tab:blue", alpha=0.6, label="training episodes (sampled actions)")
        val = [(s, num(r["val_jct"]) / 3600) for s, r in zip(steps, rows) if num(r["val_jct"])]
        if val:
            ax.plot(*zip(*val), "o-", color="tab:red", ms=3, label="greedy, validation seeds")
        imit = [s for s, r in zip(steps, rows) if r.get("phase") == "imitation"]
        if imit:
            ax.axvspan(0, max(imit), color="0.9", label="imitating the teacher heuristic")
        # heuristics on the same validation seeds as the curve (written by gpuplace-train), else held-out
        vh = os.path.join(a.dir, "validation_heuristics.csv")
        lines = {r["policy"]: [float(r["avg_jct"]) / 3600] for r in read_csv(vh)} if os.path.exists(vh) else heur
        where = "validation seeds" if os.path.exists(vh) else "held-out"
        for i, (name, v) in enumerate(sorted(lines.items())):
            if name == "ppo":
                continue
            ax.axhline(sum(v) / len(v), ls="--", lw=1, color=f"C{(i + 2) % 10}", label=f"{name} ({where})")
        ax.set_xlabel("env steps")
        ax.set_ylabel("mean JCT (h)")
        ax.set_title("PPO learning curve")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(a.dir, "learning_curve.png"), dpi=120)
        print("wrote", os.path.join(a.dir, "learning_curve.png"))

    if heur:
        names = sorted(heur, key=lambda n: sum(heur[n]) / len(heur[n]))
        means = [sum(heur[n]) / len(heur[n]) for n in names]
        sems = []
        for n, m in zip(names, means):
            v = heur[n]
            sems.append(math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else 0)
        fig, ax = plt.subplots(figsize=(7, 4))
        colors = ["tab:red" if n == "ppo" else "tab:gray" for n in names]
        ax.bar(names, means, yerr=sems, color=colors, capsize=4)
        ax.set_ylabel("mean JCT (h), mean +- s.e.")
        ax.set_title(f"held-out seeds ({len(next(iter(heur.values())))})")
        ax.grid(axis="y", alpha=0.3)
        plt.setp(ax.get_xticklabels(), rotation=20)
        fig.tight_layout()
        fig.savefig(os.path.join(a.dir, "jct_comparison.png"), dpi=120)
        print("wrote", os.path.join(a.dir, "jct_comparison.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
