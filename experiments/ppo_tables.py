#!/usr/bin/env python3
"""Writes the reference PPO's result tables of docs/ppo.md from the recipes' training runs with
--compare: on the default scenario, the kept network against the ten best of the 24 heuristic
variants and each training seed (held-out mean JCT, best validation JCT, time to quality, the
median seed paired against the best heuristic); on the Philly preset, the kept network on each
held-out file against that file's best heuristic and pack+fifo, paired.

    build/apps/gpuplace-train --config default --compare --seeds 20 --out out/ppo/default
    build/apps/gpuplace-train --config philly --compare --seeds 20 --out out/ppo/philly
    experiments/ppo_tables.py [--runs out/ppo] [--print]

The tables replace the parts of docs/ppo.md between `<!-- ppo-default:begin -->` and
`<!-- ppo-default:end -->`, and `<!-- ppo-philly:begin -->` and `<!-- ppo-philly:end -->`.
"""
from __future__ import annotations

import argparse
import csv
import json
import pathlib
import re
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "ppo.md"
METRICS = [("mean JCT", "avg_jct", 3600.0, 3), ("p95 JCT", "p95_jct", 3600.0, 2), ("makespan", "makespan", 3600.0, 2),
           ("comm cost", "avg_comm_cost", 1.0, 3)]


def read(path: pathlib.Path) -> dict[str, dict[str, list[float]]]:
    """policy -> metric -> per-seed values (in seed order)."""
    rows: dict[str, list[dict[str, str]]] = {}
    with path.open() as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["policy"], []).append(r)
    return {p: {k: [float(r[k]) for r in sorted(v, key=lambda r: int(r["seed"]))] for k in v[0] if k not in ("policy", "seed")}
            for p, v in rows.items()}


def read_restarts(run: pathlib.Path) -> list[dict[str, str]]:
    """The rows of a run's restarts.csv (one per training seed)."""
    with (run / "restarts.csv").open() as f:
        return list(csv.DictReader(f))


def paired(a: list[float], b: list[float], scale: float = 3600.0, digits: int = 3) -> str:
    d = [(x - y) / scale for x, y in zip(a, b)]
    m, s = mean_sem(d)
    return f"{m:+.{digits}f} ± {s:.{digits}f} ({sum(x < 0 for x in d)}/{len(d)})"


def seed_of(name: str) -> str:
    """The training seed of a network's name in a comparison ("ppo+sjf[seed 3]" -> "3")."""
    return re.search(r"(\d+)\]$", name).group(1)


def networks(data):
    """(the kept network's name, its training seed, the training seeds' names in seed order)."""
    seeds = sorted((p for p in data if re.match(r"ppo\+\w+\[seed \d+\]$", p)), key=lambda p: int(seed_of(p)))
    kept = next(p for p in data if re.match(r"ppo\+\w+$", p))
    kept_seed = next((seed_of(p) for p in seeds if data[p]["avg_jct"] == data[kept]["avg_jct"]), "?")
    return kept, kept_seed, seeds


def default_table(run: pathlib.Path) -> list[str]:
    data = read(run / "compare.csv")
    kept, kept_seed, seeds = networks(data)
    heur = sorted((p for p in data if not p.startswith("ppo")), key=lambda p: statistics.fmean(data[p]["avg_jct"]))
    best = heur[0]
    out = [f"| policy | {' | '.join(lab for lab, *_ in METRICS)} |", "|---" * (len(METRICS) + 1) + "|"]
    for p in [kept] + heur[:10]:
        cells = []
        for _, key, scale, digits in METRICS:
            m, s = mean_sem([x / scale for x in data[p][key]])
            cells.append(f"{m:.{digits}f} ± {s:.{digits}f}")
        label = f"**{p}** (kept: training seed {kept_seed})" if p == kept else f"{p} (the best heuristic)" if p == best else p
        if p == kept:
            cells[0] = f"**{cells[0]}**"
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    restarts = {r["seed"]: r for r in read_restarts(run)}
    num = [seed_of(p) for p in seeds]
    held = {p: statistics.fmean(data[p]["avg_jct"]) / 3600 for p in seeds}
    median = sorted(seeds, key=lambda p: held[p])[len(seeds) // 2]

    def ttq(r):
        if int(r["beat_iteration"]) == 0:
            return "never"
        return f"{int(r['beat_env_steps']) / 1e6:.2f}M, {float(r['beat_seconds']):.0f} s"

    out += ["", f"**Training seeds.** Each seed's own network on the same held-out seeds; time to quality: its first "
                f"validation below the best heuristic's (env steps, wall seconds since its restart began):", "",
            "| training seed | " + " | ".join(num) + " |", "|---" * (len(num) + 1) + "|",
            "| held-out mean JCT (h) | " + " | ".join(f"{held[p]:.3f}" for p in seeds) + " |",
            "| best validation JCT (h) | " + " | ".join(f"{float(restarts[n]['best_val_jct']) / 3600:.3f}" for n in num) + " |",
            "| time to quality | " + " | ".join(ttq(restarts[n]) for n in num) + " |", "",
            f"The median seed ({seed_of(median)}) minus {best}: "
            f"{paired(data[median]['avg_jct'], data[best]['avg_jct'])} h; the kept seed "
            f"{paired(data[kept]['avg_jct'], data[best]['avg_jct'])} h (lower on x of y held-out seeds). "
            "Generated by `experiments/ppo_tables.py`."]
    return out


def philly_table(run: pathlib.Path) -> list[str]:
    out = ["| held-out file | PPO | the best heuristic | its JCT | PPO minus the best | PPO minus pack+fifo |",
           "|---|---|---|---|---|---|"]
    for f in sorted(run.glob("compare_*.csv")):
        scenario = json.loads(f.with_suffix(".json").read_text())["scenario"]
        data = read(f)
        kept, _, _ = networks(data)
        heur = [p for p in data if not p.startswith("ppo")]
        best = min(heur, key=lambda p: statistics.fmean(data[p]["avg_jct"]))
        jct = lambda p: statistics.fmean(data[p]["avg_jct"]) / 3600  # noqa: E731
        out.append(f"| {scenario.split(':', 1)[-1]} | {jct(kept):.2f} | {best} | {jct(best):.2f} | "
                   f"{paired(data[kept]['avg_jct'], data[best]['avg_jct'])} | "
                   f"{paired(data[kept]['avg_jct'], data['pack+fifo']['avg_jct'], digits=2)} |")
    restarts = read_restarts(run)
    beat = [r["seed"] for r in restarts if int(r["beat_iteration"]) > 0]
    out += ["", f"Time to quality: {len(beat)} of {len(restarts)} training seeds beat the best heuristic on validation"
                + (f" (seeds {', '.join(beat)})" if beat else "") + ". Generated by `experiments/ppo_tables.py`."]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=str(ROOT / "out" / "ppo"), help="folder of the runs (default/, philly/)")
    ap.add_argument("--print", action="store_true", help="print the tables instead of writing docs/ppo.md")
    args = ap.parse_args()
    runs = pathlib.Path(args.runs)
    for name, make in (("default", default_table), ("philly", philly_table)):
        if not (runs / name / "restarts.csv").exists():
            sys.exit(f"{runs / name}: no run (gpuplace-train --config {name} --compare --seeds 20 --out {runs / name})")
        finish(make(runs / name), DOC, ROOT, args.print, section=f"ppo-{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
