#!/usr/bin/env python3
"""The rollout planner in rounds (include/gpuplace/rounds/rollout.hpp) under hidden durations,
against LAS, 2D-LAS and Gittins (the event-driven disciplines of philly_hidden:<file>, 30 s
restart overhead) and its base class_gittins, all placing with pack, on the same seeds; paired
differences with standard errors. Writes the table in docs/planning.md ("Planning in rounds").

    experiments/round_planner.py [--split held-out|validation] [--seeds N] [--skip K] [--planners NAMES] [--threads 2]
                                 [--print]
    experiments/round_planner.py --planners hindsighth20v:pack+class_gittins      # the round-hindsight section

With several --planners, each after the first is also compared with the first, paired (a
setting screened against another: rollout8h20:... against rollout8h20m0.5:...).

A planner named hindsight<...>: (hindsighth20v:pack+class_gittins) plays its rollouts on the
episode's own future: NOT causal, the headroom of the planner's candidates, labelled so in every
row. Its held-out table goes into its own section (round-hindsight) of docs/planning.md.

--split held-out (the default): the four held-out Philly-derived files, held-out seeds (20).
--split validation: the choice of the planner's settings, on the training files alone: each
training file in turn with class_gittins's (and Gittins's) size sample drawn from the other six
(leave one file out, as a held-out file is unseen), on validation seeds (5,000,000 on; --skip K
starts at the K-th, to confirm a setting on seeds it was not screened on), printed, not written. The planner's futures are causal: they redraw the jobs to come (round_env::fork())
and draw the active jobs' hidden durations from class_gittins's belief (base_durations).
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "planning.md"
HELD_OUT = ["0e4a51", "6c71a0", "7f04ca", "e13805"]  # data/presets.hpp philly_heldout_files()
TRAINING = ["103959", "11cb48", "2869ce", "6214e9", "b436b2", "ed69ec", "ee9e8c"]  # philly_hidden's durations.sample_files
PLANNER = "rollout8h20v:pack+class_gittins"  # the setting chosen on the validation split (docs/planning.md)
EVENT = [("LAS", "pack+las"), ("2D-LAS (Tiresias)", "pack+2d_las"), ("Gittins", "pack+gittins")]
BASE = ("class_gittins (rounds)", "pack+class_gittins")
VALIDATION_SEED = 5_000_000


def hours(rep, name):
    return [m["avg_jct"] / 3600.0 for m in rep.per_seed(name)]


def paired(a, b):
    m, s = mean_sem([x - y for x, y in zip(a, b)])
    lower = sum(x < y for x, y in zip(a, b))
    return m, s, f"{m:+.2f} ± {s:.2f} ({lower}/{len(a)}){' **' if m < -2 * s else ''}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["held-out", "validation"], default="held-out")
    ap.add_argument("--seeds", type=int, default=20, help="seeds per file")
    ap.add_argument("--skip", type=int, default=0, help="validation seeds to skip: the first is 5,000,000 + K")
    ap.add_argument("--planners", default=PLANNER, help="comma-separated planner names (rollout<F>h<H>:pack+class_gittins)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/planning.md")
    args = ap.parse_args()
    import gpuplace  # noqa: F401  (sets the data folder)
    from gpuplace import _core
    from gpuplace.config import load_scenario
    from gpuplace.registration import ROUND_OVERRIDES
    from tqdm import tqdm

    held = args.split == "held-out"
    if args.skip < 0 or (held and args.skip):
        ap.error(f"--skip {args.skip}: takes a count of validation seeds (>= 0), with --split validation")
    files = HELD_OUT if held else TRAINING
    seeds = list(_core.held_out_seeds(args.seeds)) if held else [VALIDATION_SEED + args.skip + i for i in range(args.seeds)]
    planners = [p for p in args.planners.split(",") if p]
    seer = [p.startswith("hindsight") for p in planners]  # gpuplace.is_hindsight_policy: plans on the true future
    if held and any(seer) and not all(seer):
        ap.error(f"--planners {args.planners}: held out, the causal planners and hindsight (not causal) go to sections of "
                 "their own: name one kind")
    section = "round-hindsight" if any(seer) else "round-planner"
    sample = load_scenario("philly_hidden")["durations"]["sample_files"]
    rows: dict[str, dict[str, list[float]]] = {}
    secs: dict[str, float] = {}
    bar = tqdm(total=len(files) * (1 + len(planners)), desc=f"{args.split} files", unit="policy set", file=sys.stderr)
    for f in files:
        over = {} if held else {"durations": {"sample_files": [x for x in sample if f not in x]}}  # leave the file out
        rep = _core.evaluate(load_scenario(f"philly_hidden:{f}", over), [n for _, n in EVENT], seeds, args.threads)
        rows[f] = {label: hours(rep, n) for label, n in EVENT}
        rounds = load_scenario(f"philly_hidden:{f}", {**ROUND_OVERRIDES, **over})
        rep = _core.evaluate(rounds, [BASE[1]], seeds, args.threads)
        rows[f][BASE[0]] = hours(rep, BASE[1])
        bar.update()
        for p in planners:
            t = time.time()
            rep = _core.evaluate(rounds, [p], seeds, args.threads)
            secs[p] = secs.get(p, 0.0) + time.time() - t
            rows[f][p] = hours(rep, p)
            bar.update()
    bar.close()

    labels = [lab for lab, _ in EVENT] + [BASE[0]]
    causal = ("The planners are causal: their futures redraw the jobs to come (round_env::fork()) and draw the active "
              "jobs' durations from class_gittins's belief, each job's class's sizes above what it has done "
              "(round_rollout_options::base_durations); with `v`, each rollout's cut is charged what the jobs still active "
              "must cost at least, from the same belief (round_rollout_options::terminal_value). ")
    seeing = ("**The hindsight planner is not causal**: it plays each alternative on the episode's own future (a copy of "
              "the env: the true arrivals and durations to come, round_rollout_options::hindsight) and takes the best "
              "wherever it returns more than class_gittins's allocation; with `v`, each rollout's cut is charged what the jobs "
              "still active must cost at least from their true work left. What it gains measures the headroom of the "
              "planner's alternatives, not a policy. ")
    if held:
        head = (f"The {len(files)} held-out Philly-derived files (`philly_hidden:<file>`: 200-job windows at offered load 1.0, "
                f"durations hidden), {args.seeds} held-out seeds each, the same jobs for every row; mean JCT in hours (mean ± "
                "standard error). LAS, 2D-LAS and Gittins are the event-driven disciplines (preemption, 30 s restart overhead); "
                "class_gittins and the planners run in 360 s rounds (30 s restores). Every row places with pack. " +
                (seeing if any(seer) else causal) + "Generated by `experiments/round_planner.py`.")
    else:
        head = (f"Validation split: each training file with the size sample of the other six, {args.seeds} validation seeds "
                f"each (from {VALIDATION_SEED + args.skip:,}); mean JCT in hours. " + (seeing if any(seer) else "") +
                "Generated by `experiments/round_planner.py --split validation`.")
    out = [head, "", "| policy | " + " | ".join(files) + " |", "|---" * (len(files) + 1) + "|"]
    for lab in labels + planners:
        cells = []
        for f in files:
            m, s = mean_sem(rows[f][lab])
            cells.append(f"{m:.2f} ± {s:.2f}")
        name = lab if lab not in planners else f"`{lab}` (NOT causal)" if lab.startswith("hindsight") else f"`{lab}` (causal)"
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "Paired differences, planner minus each row (hours, mean ± standard error; x/y: the planner lower on x of y "
                "seeds; **: more than two standard errors below), then the files beyond two standard errors of each of LAS, "
                "2D-LAS and Gittins, and the files together:", "",
            "| planner | file | " + " | ".join(f"− {lab}" for lab in labels) + " |", "|---" * (len(labels) + 2) + "|"]
    for p in planners:
        beyond = 0
        pooled: dict[str, list[float]] = {lab: [] for lab in labels}
        for f in files:
            cells, ok = [], True
            for lab in labels:
                m, s, text = paired(rows[f][p], rows[f][lab])
                cells.append(text)
                pooled[lab] += [x - y for x, y in zip(rows[f][p], rows[f][lab])]
                if lab != BASE[0]:
                    ok = ok and m < -2 * s
            beyond += ok
            out.append(f"| `{p}` | {f} | " + " | ".join(cells) + " |")
        tog = []
        for lab in labels:
            m, s = mean_sem(pooled[lab])
            tog.append(f"{m:+.2f} ± {s:.2f}{' **' if m < -2 * s else ''}")
        out.append(f"| `{p}` | the {len(files)} files together ({beyond} of {len(files)} beyond all three) | " + " | ".join(tog) + " |")
    if len(planners) > 1:  # the settings screened against each other: each planner minus the first, paired
        first = planners[0]
        out += ["", f"Each planner minus `{first}` on the same episodes (hours, mean ± standard error; x/y: lower on x of y "
                    "seeds; **: more than two standard errors below):", "",
                "| planner | " + " | ".join(files) + " | together |", "|---" * (len(files) + 2) + "|"]
        for p in planners[1:]:
            cells = [paired(rows[f][p], rows[f][first])[2] for f in files]
            _, _, tog = paired([x for f in files for x in rows[f][p]], [x for f in files for x in rows[f][first]])
            out.append(f"| `{p}` | " + " | ".join(cells) + f" | {tog} |")
    out += ["", f"Seconds of wall time per episode ({args.threads} at a time on the run's 2-core machine): " +
            ", ".join(f"`{p}` {secs[p] / (len(files) * len(seeds)) * args.threads:.1f} s" for p in planners) + "."]
    return finish(out, DOC, ROOT, args.print or not held, section=section)


if __name__ == "__main__":
    sys.exit(main())
