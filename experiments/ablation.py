#!/usr/bin/env python3
"""The action-mode ablation (docs/ablation.md): trains the reference C++ PPO in each action mode
(gpu: one GPU at a time; placement: a whole placement among candidates; job: which waiting job
starts next, placed by pack) with the same recipe and budget and several training seeds, on each
scenario (default, proximity_drl, philly), evaluates every training seed on the held-out seeds
(philly: the held-out trace files), and writes one table.

    python3 experiments/ablation.py                      # the whole ablation (about 40 min of CPU)
    python3 experiments/ablation.py --scenarios default --restarts 2 --steps 20000 --imitation 20000 --seeds 4

Each (scenario, mode) run is gpuplace-train in its own folder out/ablation/<scenario>/<mode>/; a
finished run is not run again and a stopped one resumes (--resume), so the script can be stopped and
started again. Outputs: out/ablation/ablation.csv, ablation.md (the table), ablation.png (with
matplotlib: each mode's median training seed minus the best heuristic, paired on the held-out seeds). Standard library only; tqdm and matplotlib are used when installed.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("gpu", "placement", "job")
SCENARIOS = ("default", "proximity_drl", "philly")
METRICS = ("avg_jct", "p95_jct", "avg_comm_cost")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help="recipes to train (each trains on its scenario)")
    p.add_argument("--modes", default=",".join(MODES), help="action modes")
    p.add_argument("--restarts", type=int, default=5, help="training seeds per run")
    p.add_argument("--seeds", type=int, default=20, help="held-out seeds (per held-out trace file for philly)")
    p.add_argument("--steps", type=int, default=0, help="PPO env steps (default: the recipe's)")
    p.add_argument("--imitation", type=int, default=-1, help="imitation env steps (default: the recipe's)")
    p.add_argument("--threads", type=int, default=1, help="env threads per training seed")
    p.add_argument("--jobs", type=int, default=1, help="runs at a time")
    p.add_argument("--binary", default=str(ROOT / "build" / "apps" / "gpuplace-train"), help="gpuplace-train")
    p.add_argument("--out", default="out/ablation", help="output folder")
    p.add_argument("--fresh", action="store_true", help="delete the output folder first (no run is reused)")
    a = p.parse_args(argv)
    a.scenarios = [s for s in a.scenarios.split(",") if s]
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in MODES:
            p.error(f"--modes: unknown action mode {m!r} (allowed: {', '.join(MODES)})")
    if "gpu" not in a.modes:
        p.error("--modes must include gpu: the table compares every mode with it")
    if not Path(a.binary).is_file():
        p.error(f"--binary: {a.binary} does not exist (build it: cmake --build build --target gpuplace-train)")
    return a


def recipe(binary: str, name: str) -> dict:
    out = subprocess.run([binary, "--print-config", "--config", name], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_one(a, scenario: str, mode: str) -> Path:
    """Trains and compares one (scenario, mode); returns its folder. Skips a finished run."""
    d = Path(a.out) / scenario / mode
    if list(d.glob("compare*.csv")):
        return d
    d.mkdir(parents=True, exist_ok=True)
    cfg = recipe(a.binary, scenario)
    cfg["restarts"] = a.restarts
    if a.steps:
        cfg["ppo"]["total_steps"] = a.steps
    if a.imitation >= 0:
        cfg["ppo"]["imitation_steps"] = a.imitation
    cfg["ppo"]["threads"] = a.threads
    (d / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    cmd = [a.binary, "--config", str(d / "config.json"), "--action-mode", mode, "--compare", "--seeds", str(a.seeds),
           "--no-plot", "--out", str(d)]
    if (d / "run.json").exists():
        cmd.append("--resume")
    with open(d / "train.log", "a") as log:
        r = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {r.returncode}); see {d / 'train.log'}")
    return d


def episodes(d: Path) -> dict[str, list[dict]]:
    """Per policy, its held-out episodes (every compare file, in order)."""
    per: dict[str, list[dict]] = {}
    for f in sorted(d.glob("compare*.csv")):
        with open(f) as fh:
            for row in csv.DictReader(fh):
                per.setdefault(row["policy"], []).append({m: float(row[m]) for m in METRICS})
    return per


def mean_se(xs: list[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    return m, (statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0)


def seed_rows(per: dict[str, list[dict]]) -> dict[str, list[dict]]:
    return {k: v for k, v in per.items() if "[seed " in k}


def training_stats(d: Path) -> dict:
    secs, steps, eps = [], [], []
    for lc in sorted(d.glob("seed_*/learning.csv")):
        with open(lc) as fh:
            rows = list(csv.DictReader(fh))
        last = rows[-1]
        secs.append(float(last["seconds"]))
        steps.append(float(last["env_steps"]))
        eps.append(float(last["episodes"]))
    return {"train_seconds": statistics.fmean(secs), "env_steps": statistics.fmean(steps),
            "steps_per_sec": sum(steps) / sum(secs), "decisions_per_episode": sum(steps) / max(1.0, sum(eps))}


def summarize(a) -> list[dict]:
    rows = []
    for scenario in a.scenarios:
        base = episodes(Path(a.out) / scenario / "gpu")
        heur = {k: v for k, v in base.items() if not k.startswith("ppo")}
        best = min(heur, key=lambda k: statistics.fmean(e["avg_jct"] for e in heur[k]))
        gpu_seeds = seed_rows(base)
        gpu_median = sorted(gpu_seeds, key=lambda k: statistics.fmean(e["avg_jct"] for e in gpu_seeds[k]))[(len(gpu_seeds) - 1) // 2]
        for mode in a.modes:
            d = Path(a.out) / scenario / mode
            seeds = seed_rows(episodes(d))
            means = {k: statistics.fmean(e["avg_jct"] for e in v) for k, v in seeds.items()}
            med = sorted(means, key=means.get)[(len(means) - 1) // 2]
            eps = seeds[med]
            row = {"scenario": scenario, "mode": mode, "training_seeds": len(seeds), "heldout_episodes": len(eps),
                   "median_seed": med}
            for m in METRICS:
                row[m], row[m + "_se"] = mean_se([e[m] for e in eps])
            row["jct_min_seed"], row["jct_max_seed"] = min(means.values()), max(means.values())
            diff = [x["avg_jct"] - y["avg_jct"] for x, y in zip(eps, heur[best])]
            row["best_heuristic"] = best
            row["best_heuristic_jct"] = statistics.fmean(e["avg_jct"] for e in heur[best])
            row["vs_best"], row["vs_best_se"] = mean_se(diff)
            diff = [x["avg_jct"] - y["avg_jct"] for x, y in zip(eps, gpu_seeds[gpu_median])]
            row["vs_gpu"], row["vs_gpu_se"] = mean_se(diff)
            row.update(training_stats(d))
            rows.append(row)
    return rows


def write_outputs(a, rows: list[dict]) -> None:
    out = Path(a.out)
    with open(out / "ablation.csv.tmp", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(out / "ablation.csv.tmp", out / "ablation.csv")
    h = 3600.0
    lines = ["| scenario | mode | mean JCT (h) | p95 JCT (h) | comm cost | training seeds' mean JCT (h) | minus best heuristic (h) | "
             "minus gpu mode (h) | decisions / episode | training (s / seed) | env steps/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['scenario']} | {r['mode']} | {r['avg_jct'] / h:.3f} ± {r['avg_jct_se'] / h:.3f} | "
                     f"{r['p95_jct'] / h:.2f} ± {r['p95_jct_se'] / h:.2f} | {r['avg_comm_cost']:.3f} ± {r['avg_comm_cost_se']:.3f} | "
                     f"{r['jct_min_seed'] / h:.3f} – {r['jct_max_seed'] / h:.3f} | {r['vs_best'] / h:+.3f} ± {r['vs_best_se'] / h:.3f} | "
                     f"{r['vs_gpu'] / h:+.3f} ± {r['vs_gpu_se'] / h:.3f} | {r['decisions_per_episode']:.0f} | "
                     f"{r['train_seconds']:.0f} | {r['steps_per_sec']:,.0f} |")
    best = sorted({(r["scenario"], r["best_heuristic"], r["best_heuristic_jct"]) for r in rows})
    lines.append("")
    lines.append("Best heuristic (every heuristic under every queue policy): " +
                 "; ".join(f"{s}: {b} {j / h:.3f} h" for s, b, j in best) + ".")
    (out / "ablation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("ablation.png skipped: matplotlib is not installed")
        return
    scen = list(dict.fromkeys(r["scenario"] for r in rows))
    fig, axes = plt.subplots(1, len(scen), figsize=(4 * len(scen), 3.4), squeeze=False)
    for ax, s in zip(axes[0], scen):  # paired differences: the held-out seeds' spread cancels out
        rs = [r for r in rows if r["scenario"] == s]
        ax.bar([r["mode"] for r in rs], [r["vs_best"] / h for r in rs], yerr=[r["vs_best_se"] / h for r in rs],
               color="#4c72b0", capsize=4)
        ax.axhline(0.0, color="#c44e52", lw=1)
        ax.set_title(f"{s}: minus {rs[0]['best_heuristic']}", fontsize=9)
        ax.set_ylabel("mean JCT minus the best heuristic (h)", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "ablation.png.tmp.png", dpi=120)
    os.replace(out / "ablation.png.tmp.png", out / "ablation.png")


def main(argv=None) -> int:
    a = parse_args(argv if argv is not None else sys.argv[1:])
    if a.fresh and Path(a.out).exists():
        import shutil

        shutil.rmtree(a.out)
    runs = [(s, m) for s in a.scenarios for m in a.modes]
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    bar = tqdm(total=len(runs), unit="run") if tqdm else None
    start = time.time()
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = [(s, m, pool.submit(run_one, a, s, m)) for s, m in runs]
        for s, m, f in futures:
            f.result()
            if bar:
                bar.set_postfix_str(f"{s}/{m}")
                bar.update(1)
            else:
                print(f"done {s}/{m} ({time.time() - start:.0f} s)", flush=True)
    if bar:
        bar.close()
    write_outputs(a, summarize(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
