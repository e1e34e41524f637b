#!/usr/bin/env python3
"""Writes the headroom table of docs/planning.md: on each scenario (placement action mode), every
heuristic under every queue policy, then the rollout planners over the best of them: hindsight (the
episode's own future: NOT causal) and the fair planner with 1, 4 and more forked futures (causal);
hours, mean +- standard error over the held-out seeds, paired differences against the best
heuristic on the same seeds, and each planner's wall-clock cost per decision (one thread).

    experiments/planning.py [--eval build/apps/gpuplace-eval] [--seeds 20] [--threads 2]
                        [--only default,philly]

The table replaces the part of docs/planning.md between `<!-- results:begin -->` and
`<!-- results:end -->`. The held-out Philly files are taken together too (every file and seed one
pair). Sixteen futures are run on the default and co-location scenarios, and 16, 32 and 64 on the
heterogeneous cluster, where the planner's gain grows with every doubling of them; not on the
Philly files (there 16 take about four times the four-future run).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "planning.md"
HELD_OUT = ["0e4a51", "6c71a0", "7f04ca", "e13805"]  # data/presets.hpp philly_heldout_files()
QUEUES = ["fifo", "backfill", "sjf", "fewest_gpus"]
HEURISTICS = ["random", "first_fit", "pack", "load_balance", "topology_greedy", "pack_wait"]
TYPE_RULES = ["fastest_type", "throughput_greedy"]  # the type-aware heuristics of a heterogeneous cluster
# scenario group -> (presets, planners' future counts, the heuristics compared)
GROUPS = {
    "default": (["default"], [1, 4, 16], HEURISTICS),
    "philly": ([f"philly:{f}" for f in HELD_OUT], [1, 4], HEURISTICS),
    "heterogeneous": (["heterogeneous"], [1, 4, 16, 32, 64], HEURISTICS + [f"{r}:{h}" for r in TYPE_RULES for h in HEURISTICS]),
    "colocation": (["colocation"], [1, 4, 16], HEURISTICS + ["coloc_packer"]),  # the co-location heuristic there too
}



def run_eval(exe, scenario, policies, seeds, threads):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "r.json"
        cmd = [exe, "--scenario", scenario, "--action-mode", "placement", "--seeds", str(seeds), "--threads", str(threads),
               "--policies", ",".join(policies), "--json", str(out)]
        t0 = time.time()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        j = json.loads(out.read_text())
    print(f"  {scenario}: {len(policies)} policies x {seeds} seeds in {time.time() - t0:.0f} s", file=sys.stderr)
    return {name: [m["avg_jct"] / 3600.0 for m in p["per_seed"]] for name, p in j["policies"].items()}


def seconds_per_decision(scenario, policy, seed=1_000_000):
    """Wall-clock seconds per decision of one episode (one thread)."""
    from gpuplace import _core

    sc = _core.Scenario(scenario, None, "placement")
    t0 = time.perf_counter()
    ep = _core.run_episode(sc, policy, seed, record=False)
    return (time.perf_counter() - t0) / max(1, len(ep["actions"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval", default=str(ROOT / "build" / "apps" / "gpuplace-eval"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", help=f"groups, comma-separated ({', '.join(GROUPS)}); the others keep their rows of the table")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/planning.md")
    args = ap.parse_args()
    groups = args.only.split(",") if args.only else list(GROUPS)
    rows_out = []
    for g in groups:
        scenarios, futures, heuristics = GROUPS[g]
        variants = [f"{h}+{q}" for h in heuristics for q in QUEUES]
        print(f"{g}:", file=sys.stderr)
        per = {}  # scenario -> {policy: [JCT h per seed]}
        for sc in scenarios:
            r = run_eval(args.eval, sc, variants, args.seeds, args.threads)
            best = min(variants, key=lambda n: statistics.fmean(r[n]))
            planners = [f"hindsight:{best}"] + [f"rollout{f}:{best}" for f in futures]
            r.update(run_eval(args.eval, sc, planners, args.seeds, args.threads))
            per[sc] = (best, r, planners)
        # the rows: the best heuristic, then each planner kind (over each scenario's best heuristic)
        kinds = ["hindsight"] + [f"rollout{f}" for f in futures]
        cost = {k: statistics.fmean(seconds_per_decision(sc, f"{k}:{per[sc][0]}") for sc in scenarios[:1]) for k in kinds}
        for label, pick in [("best heuristic", None)] + [(k, k) for k in kinds]:
            cells, pairs = [], []
            for sc in scenarios:
                best, r, _ = per[sc]
                v = r[best] if pick is None else r[f"{pick}:{best}"]
                m, s = mean_sem(v)
                d = [a - b for a, b in zip(v, r[best])]
                dm, ds = mean_sem(d)
                lower = sum(x < 0 for x in d)
                cells.append((sc, m, s, dm, ds, lower, len(d), best))
                pairs += d
            rows_out.append((g, label, cells, pairs, None if pick is None else cost[pick]))
    out = [f"Placement action mode; {args.seeds} held-out seeds per scenario; mean JCT in hours (mean ± standard error) "
           "and the paired difference against the best heuristic of the scenario (every heuristic under every queue "
           "policy, chosen on these seeds; named in the first row); x/y: lower on x of y seeds. The planners play over "
           "that heuristic. **hindsight rows are not causal**: they plan on the episode's own future. Seconds per "
           "decision: one episode, one thread. Generated by `experiments/planning.py`.", "",
           "| scenario | policy | mean JCT (h) | minus the best heuristic (h) | s / decision |", "|---|---|---|---|---|"]
    text = DOC.read_text()
    current = text[text.index("<!-- results:begin -->"):text.index("<!-- results:end -->")].splitlines()
    for g in GROUPS:  # a group not run (--only) keeps its rows of the current table
        if g in groups:
            out += group_rows([r for r in rows_out if r[0] == g])
        else:
            prefixes = tuple(f"| {sc} |" for sc in GROUPS[g][0]) + (f"| {g}: ",)  # its scenarios' rows, its files together
            out += [ln for ln in current if ln.startswith(prefixes)]
    return finish(out, DOC, ROOT, args.print)


def group_rows(rows_out):
    """The table's lines of one group's rows."""
    out = []
    for g, label, cells, pairs, cost in rows_out:
        if label == "hindsight":
            name = "hindsight (not causal)"
        elif label.startswith("rollout"):
            f = label[len("rollout"):]
            name = f"fair rollout, {f} future{'' if f == '1' else 's'}"
        else:
            name = label
        for sc, m, s, dm, ds, lower, n, best in cells:
            lab = f"{name}: `{best}`" if label == "best heuristic" else name
            diff = "" if label == "best heuristic" else f"{dm:+.3f} ± {ds:.3f} ({lower}/{n})"
            c = "" if cost is None else f"{cost:.4f}"
            out.append(f"| {sc} | {lab} | {m:.3f} ± {s:.3f} | {diff} | {c} |")
        if len(cells) > 1 and label != "best heuristic":
            dm, ds = mean_sem(pairs)
            lower = sum(x < 0 for x in pairs)
            out.append(f"| {g}: the {len(cells)} files together | {name} | | {dm:+.3f} ± {ds:.3f} ({lower}/{len(pairs)}) | |")
    return out


if __name__ == "__main__":
    sys.exit(main())
