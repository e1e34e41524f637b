"""Plots the cost of one env step against the cluster size from perf_env's JSON output.

Two panels, log-log: time per step, and time per step divided by the number of GPUs, for each
action source measured (BM_step_random, BM_step_first_fit, BM_step_random_policy), with a line of
slope 1 (cost proportional to G) through the smallest size for reference. A curve below that line
grows sub-linearly. With repetitions in the JSON, the median is plotted and the spread shaded.

    build-perf/benchmarks/perf_env --benchmark_filter='BM_step_' --benchmark_repetitions=5 \\
        --benchmark_out=perf_env.json --benchmark_out_format=json
    python benchmarks/python/plot_scaling.py perf_env.json --out step_scaling.png

Needs matplotlib (pip install './python[plot]').
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict

LABELS = {
    "BM_step_random": "random valid actions (word-wise sampler)",
    "BM_step_first_fit": "first-fit actions",
    "BM_step_random_policy": "gpuplace::random_policy (word-wise count and select)",
}


def load(path: str) -> dict[str, dict[int, list[float]]]:
    """{benchmark: {gpus: [ns per step, one per repetition]}} from a Google Benchmark JSON file."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot_scaling: cannot read {path}: {e}")
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    runs = data.get("benchmarks", [])
    # the repetitions themselves; with --benchmark_report_aggregates_only, their median
    iterations = [b for b in runs if b.get("run_type") != "aggregate"]
    if not iterations:
        iterations = [b for b in runs if b.get("aggregate_name") == "median"]
    for b in iterations:
        m = re.fullmatch(r"(BM_step_[a-z_]+)/gpus:(\d+)(?:/.*)?", b.get("run_name", b.get("name", "")))
        if not m or m.group(1) not in LABELS:
            continue
        out[m.group(1)][int(m.group(2))].append(float(b["cpu_time"]) * scale[b.get("time_unit", "ns")])
    if not out:
        sys.exit(f"plot_scaling: {path} has no BM_step_<policy>/gpus:<G> results (run perf_env with --benchmark_filter='BM_step_')")
    return out


def plot(results: dict[str, dict[int, list[float]]], out: str, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_scaling: needs matplotlib (pip install './python[plot]')")
    fig, (ax, axg) = plt.subplots(1, 2, figsize=(10, 4))
    for name, by_g in sorted(results.items()):
        gs = sorted(by_g)
        med = [statistics.median(by_g[g]) for g in gs]
        lo = [min(by_g[g]) for g in gs]
        hi = [max(by_g[g]) for g in gs]
        line = ax.plot(gs, med, marker="o", label=LABELS[name])[0]
        ax.fill_between(gs, lo, hi, color=line.get_color(), alpha=0.2)
        axg.plot(gs, [m / g for m, g in zip(med, gs)], marker="o", color=line.get_color(), label=LABELS[name])
        if name == "BM_step_random":
            ax.plot(gs, [med[0] * g / gs[0] for g in gs], "k--", lw=1, label="proportional to G (from the smallest)")
    for a in (ax, axg):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("GPUs in the cluster")
        a.grid(alpha=0.3, which="both")
    ax.set_ylabel("CPU time per step (ns)")
    axg.set_ylabel("CPU time per step per GPU (ns)")
    ax.set_title("env step cost")
    axg.set_title("per GPU: falls as G grows (sub-linear)")
    ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="perf_env --benchmark_out=... --benchmark_out_format=json")
    ap.add_argument("--out", default="step_scaling.png")
    ap.add_argument("--title", default="gpuplace: C++ env step vs cluster size (median of the repetitions, spread shaded)")
    args = ap.parse_args(argv)
    plot(load(args.json), args.out, args.title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
