#!/usr/bin/env python3
"""Measures the newcomer recipe of docs/python.md ("MaskablePPO in ten minutes"):
MaskablePPO with gpuplace.sb3.PerGpuPolicy on the default scenario, trained with
gpuplace.sb3.NEWCOMER_RECIPE for several training seeds, one at a time, each run timed; every kept model, random, first_fit
and pack then on the same held-out seeds under the same queue policy (the scenario's own,
backfill). Prints per training seed the held-out mean JCT and the paired differences, then the
median and range over the training seeds.

    python experiments/sb3_recipe.py [--train-seeds 1,2,3] [--seeds 20] [--out out/sb3_recipe]

Progress: a bar per phase (cloning, value warm-up, PPO) of each run, then one line per run.
The numbers go to OUT/recipe.json too.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import time

import gpuplace
from gpuplace.evaluation import evaluate_agent, maskable_policy
from gpuplace.sb3 import NEWCOMER_RECIPE as RECIPE
from gpuplace.sb3 import train_per_gpu

BASELINES = ["random", "first_fit", "pack"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--train-seeds", default="1,2,3")
    ap.add_argument("--seeds", type=int, default=20, help="held-out evaluation seeds (1000000 + i)")
    ap.add_argument("--out", default="out/sb3_recipe")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    train_seeds = [int(s) for s in a.train_seeds.split(",")]
    seeds = gpuplace.held_out_seeds(a.seeds)
    runs = []
    for ts in train_seeds:
        model, info = train_per_gpu(a.scenario, seed=ts, log_dir=os.path.join(a.out, f"seed{ts}"), **RECIPE)
        rep = gpuplace.evaluate(info["scenario"], BASELINES, seeds)
        evaluate_agent(maskable_policy(model), info["scenario"], seeds, name="recipe", report=rep)
        jct, sem = rep.summary("recipe", "avg_jct")
        paired = {p["other"]: p for p in rep.paired("recipe", "avg_jct")}
        run = {"train_seed": ts, "seconds": info["seconds"], "env_steps": info["env_steps"],
               "agreement": info["pretrain"].get("agreement"), "jct_h": jct / 3600, "sem_h": sem / 3600,
               "paired_h": {o: {"mean": p["mean"] / 3600, "sem": p["sem"] / 3600, "lower": p["lower"]}
                            for o, p in paired.items()}}
        for b in BASELINES:
            m, s = rep.summary(b, "avg_jct")
            run.setdefault("baselines_h", {})[b] = [m / 3600, s / 3600]
        runs.append(run)
        pr = "  ".join(f"vs {o} {p['mean']:+.3f} +- {p['sem']:.3f} h (lower on {p['lower']}/{len(seeds)})"
                       for o, p in run["paired_h"].items())
        print(f"train seed {ts}: {info['seconds'] / 60:.1f} min, {info['env_steps']} env steps, "
              f"held-out mean JCT {run['jct_h']:.3f} +- {run['sem_h']:.3f} h; {pr}", flush=True)
        print(rep.table(), flush=True)
    jcts = [r["jct_h"] for r in runs]
    mins = [r["seconds"] / 60 for r in runs]
    summary = {"recipe": {k: list(v) if isinstance(v, tuple) else v for k, v in RECIPE.items()},
               "scenario": a.scenario, "held_out_seeds": a.seeds, "runs": runs,
               "median_jct_h": statistics.median(jcts), "min_jct_h": min(jcts), "max_jct_h": max(jcts),
               "baselines_h": runs[0]["baselines_h"], "minutes": [min(mins), statistics.median(mins), max(mins)]}
    pathlib.Path(a.out, "recipe.json").write_text(json.dumps(summary, indent=1))
    b = summary["baselines_h"]
    print(f"\nrecipe over {len(runs)} training seeds: held-out mean JCT median {summary['median_jct_h']:.3f} h "
          f"(range {summary['min_jct_h']:.3f}-{summary['max_jct_h']:.3f}); random {b['random'][0]:.3f}, "
          f"first_fit {b['first_fit'][0]:.3f}, pack {b['pack'][0]:.3f} h; wall time per run "
          f"{summary['minutes'][0]:.1f}-{summary['minutes'][2]:.1f} min (median {summary['minutes'][1]:.1f})")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"total {(time.perf_counter() - t0) / 60:.1f} min")
