#!/usr/bin/env python3
"""Gavel's heterogeneity-aware LAS against the agnostic one (docs/fidelity.md): mean JCT in steady
state against the input job rate on 36 V100 + 36 P100 + 36 K80 GPUs, as the Gavel paper's figure
(Narayanan et al., OSDI'20) plots it, run in gpuplace's round env.

The workload follows Gavel's generator (its scheduler/utils.py, read for the definitions): Poisson
arrivals at the given rate (jobs per hour); a duration of 10^U(1.5, 3) minutes with probability 0.8,
else 10^U(3, 4) minutes; 1 GPU with probability 0.7, 2 with 0.1, 4 with 0.15, 8 with 0.05; the job
type uniform among the measured models (for several GPUs, those measured at that count); its steps
the duration times its consolidated V100 throughput at that count. The metric is the mean JCT of
jobs WINDOW_START .. WINDOW_END - 1 (a steady-state window: the jobs before it warm the cluster up,
those after it keep it loaded while the window's finish). Each point is the mean over seeds.

Usage: python3 experiments/fidelity.py [--rates 0.5,1,...] [--seeds 2] [--jobs 6000] [--window 4000,5000]
           [--threads 2] [--out docs/fidelity.png] [--json docs/fidelity.json]
Needs the Python package with the LP solver (gpuplace.have_lp_solver(); scripts/setup.sh) and matplotlib.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = {"max_min_fairness": "LAS (heterogeneity-agnostic)", "max_min_fairness_perf": "Gavel's LAS (heterogeneity-aware)"}


def v100_throughputs():
    """(model, GPUs) -> consolidated V100 steps/s, Gavel's measurements (data/gavel/)."""
    with open(os.path.join(ROOT, "data", "gavel", "simulation_throughputs.json")) as f:
        v100 = json.load(f)["v100"]
    out = {}
    for key, val in v100.items():
        model, k = key.strip("()").rsplit(",", 1)
        out[(model.strip().strip("'"), int(k))] = val["null"]
    return out


def gavel_jobs(rate_per_hour, n, seed, tput):
    """n jobs of Gavel's generator (see the module's docstring) at `rate_per_hour`, as scenario jobs."""
    rng = random.Random(seed)
    by_count = {k: sorted(m for (m, kk) in tput if kk == k) for k in (1, 2, 4, 8)}
    jobs, t = [], 0.0
    for _ in range(n):
        t += rng.expovariate(rate_per_hour / 3600.0)
        u = rng.random()
        k = 1 if u < 0.7 else 2 if u < 0.8 else 4 if u < 0.95 else 8
        minutes = 10 ** rng.uniform(3, 4) if rng.random() >= 0.8 else 10 ** rng.uniform(1.5, 3)
        model = rng.choice(by_count[k])
        jobs.append({"submit_time": t, "num_gpus": k, "model": model, "work": 60 * minutes * tput[(model, k)]})
    return jobs


def scenario(jobs, restore):
    """36 GPUs of each type in servers of 4 (one rack a type) on the zoo's measurement hardware."""
    return {
        "name": "gavel_fidelity",
        "topology": {"preset": "custom", "racks": 3, "nodes_per_rack": 9, "gpus_per_node": 4, "node_bandwidth": 100,
                     "rack_bandwidth": 3.125, "spine_bandwidth": 3.125, "node_latency": 2e-6, "rack_latency": 20e-6,
                     "spine_latency": 20e-6, "gpu_types": ["v100", "p100", "k80"]},
        "comm": {"model": "ring_allreduce"},
        "workload": {"kind": "jobs", "jobs": jobs},
        "env": {"placer": "pack"},
        "rounds": {"length": 360, "restore": {"seconds": restore}},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="0.5,1,1.5,2,2.5,3,3.5", help="input job rates (jobs per hour)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=6000, help="jobs per episode")
    ap.add_argument("--window", default="4000,5000", help="the steady-state window: first job, end job (Gavel's)")
    ap.add_argument("--restore", type=float, default=30.0, help="seconds a move or resume costs (Gavel's simulator: 0)")
    ap.add_argument("--threads", type=int, default=2, help="episodes run at once")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "fidelity.png"))
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "fidelity.json"), help="the numbers plotted")
    a = ap.parse_args()
    import gpuplace
    from gpuplace.progress import progress_bar

    if not gpuplace._core.have_lp_solver():
        sys.exit("fidelity.py: this gpuplace core has no LP solver (install coinor-libclp-dev, reinstall the package)")
    rates = [float(r) for r in a.rates.split(",")]
    first, end = (int(x) for x in a.window.split(","))
    if not 0 <= first < end <= a.jobs:
        sys.exit(f"fidelity.py: --window {a.window} must lie within the {a.jobs} jobs")
    tput = v100_throughputs()
    runs = [(r, s, p) for r in rates for s in range(a.seeds) for p in POLICIES]

    def one(run):
        rate, seed, policy = run
        jobs = gavel_jobs(rate, a.jobs, 1000 + seed, tput)
        recs = gpuplace.run_rounds(scenario(jobs, a.restore), policy, seed)
        window = [r["jct"] for r in recs if first <= r["id"] < end]
        if len(window) != end - first:
            raise RuntimeError(f"rate {rate}, seed {seed}, {policy}: {len(window)} window jobs finished of {end - first}")
        return run, statistics.fmean(window)

    t0 = time.time()
    results = {}
    with progress_bar(total=len(runs), desc="episodes") as bar, ThreadPoolExecutor(a.threads) as ex:
        for run, jct in ex.map(one, runs):
            results[run] = jct
            bar.update(1)
    seconds = time.time() - t0
    table = {p: [statistics.fmean(results[(r, s, p)] for s in range(a.seeds)) / 3600 for r in rates] for p in POLICIES}
    print(f"{len(runs)} episodes of {a.jobs} jobs in {seconds:.0f} s ({a.threads} threads); window jobs {first}..{end - 1}")
    print("| jobs/hour | " + " | ".join(POLICIES[p] for p in POLICIES) + " | aware / agnostic |")
    print("|---|" + "---|" * (len(POLICIES) + 1))
    agn, aware = table["max_min_fairness"], table["max_min_fairness_perf"]
    for i, r in enumerate(rates):
        print(f"| {r:g} | {agn[i]:.1f} h | {aware[i]:.1f} h | {aware[i] / agn[i]:.2f} |")
    with open(a.json, "w") as f:
        json.dump({"rates": rates, "seeds": a.seeds, "jobs": a.jobs, "window": [first, end], "restore": a.restore,
                   "mean_jct_hours": table, "per_seed_hours": {p: [[results[(r, s, p)] / 3600 for s in range(a.seeds)]
                                                                    for r in rates] for p in POLICIES},
                   "seconds": round(seconds, 1)}, f, indent=1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for p, style in (("max_min_fairness", "o--"), ("max_min_fairness_perf", "s-")):
        ax.plot(rates, table[p], style, label=POLICIES[p])
    ax.set_xlabel("input job rate (jobs/hour)")
    ax.set_ylabel("mean JCT, steady state (hours)")
    ax.set_title("36 V100 + 36 P100 + 36 K80, Gavel's multi-GPU workload")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out} and {a.json}")


if __name__ == "__main__":
    main()
