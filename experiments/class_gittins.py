#!/usr/bin/env python3
"""The round policy class_gittins (include/gpuplace/rounds/gittins.hpp) on hidden-duration Philly
against the event-driven LAS, 2D-LAS and Gittins, and writes its section of docs/rounds.md.

    experiments/class_gittins.py [--seeds 20] [--validation-seeds 40] [--threads 2] [--print]

Two tables. Validation, where the policy was designed: the two validation files (103959, b436b2)
with the size sample taken from the other five training files only, on validation seeds. Held
out: the four held-out files with the preset's sample (all seven training files), on held-out
seeds. Every row sees the same jobs; LAS, 2D-LAS and Gittins are the preset's event-driven
disciplines (preemption, 30 s restart overhead) and the round rows run in 360 s rounds (30 s
restores). Each discipline is shown under pack and under its best placer on the file (of pack,
pack_wait and topology_greedy, chosen on the same seeds: the strongest baseline, a little
flattered). About a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "rounds.md"
HELD_OUT = ["0e4a51", "6c71a0", "7f04ca", "e13805"]   # data/presets.hpp philly_heldout_files()
VALIDATION = ["103959", "b436b2"]                    # the PPO recipes' validation files
TRAINING = ["11cb48", "2869ce", "6214e9", "ed69ec", "ee9e8c"]  # the other training files
DISCIPLINES = [("LAS", "las"), ("2D-LAS (Tiresias)", "2d_las"), ("Gittins", "gittins")]
PLACERS = ["pack", "pack_wait", "topology_greedy"]


def hours(rep, name):
    return [m["avg_jct"] / 3600.0 for m in rep.per_seed(name)]


def paired(a, b):
    d = [x - y for x, y in zip(a, b)]
    m, s = mean_sem(d)
    mark = " **" if m + 2 * s < 0 else ""
    return f"{m:+.2f} ± {s:.2f} ({sum(x < 0 for x in d)}/{len(d)}){mark}"


def run_file(f, seeds, sample, threads):
    """Mean JCT per seed (hours) of every row on file f."""
    from gpuplace import _core
    from gpuplace.config import load_scenario
    from gpuplace.registration import ROUND_OVERRIDES

    over = {"durations": {"sample_files": [f"$GPUPLACE_DATA/philly/{t}.trace" for t in sample]}} if sample else {}
    event = load_scenario(f"philly_hidden:{f}", over or None)
    rounds = load_scenario(f"philly_hidden:{f}", {**ROUND_OVERRIDES, **over})
    names = [f"{p}+{q}" for _, q in DISCIPLINES for p in PLACERS]
    rep = _core.evaluate(event, names, seeds, threads)
    rows = {}
    for label, q in DISCIPLINES:
        per = {p: hours(rep, f"{p}+{q}") for p in PLACERS}
        best = min(PLACERS, key=lambda p: statistics.fmean(per[p]))
        rows[f"{label}, pack"] = per["pack"]
        rows[f"{label}, its best placer"] = per[best]
        rows.setdefault("_best", []).append(f"{label} {best}")
    rr = _core.evaluate(rounds, ["pack+max_min_fairness_perf", "pack+class_gittins"], seeds, threads)
    rows["max_min_fairness_perf (Gavel, rounds)"] = hours(rr, "pack+max_min_fairness_perf")
    fill = _core.evaluate(load_scenario(f"philly_hidden:{f}", {**ROUND_OVERRIDES, **over}, action_mode="round"), ["pack"], seeds, threads)
    rows["greedy LAS fill of each round"] = hours(fill, "pack")
    rows["class_gittins (rounds)"] = hours(rr, "pack+class_gittins")
    return rows


def table(files, per_file, seeds_text):
    out = ["| policy | " + " | ".join(files) + " |", "|---" * (len(files) + 1) + "|"]
    labels = [lab for lab in per_file[files[0]] if not lab.startswith("_")]
    for lab in labels:
        cells = []
        for f in files:
            m, s = mean_sem(per_file[f][lab])
            cells.append(f"{m:.2f} ± {s:.2f}")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    out += ["", "Best placer (of " + ", ".join(PLACERS) + ", by mean JCT on the same seeds): " +
            "; ".join(f"{f}: " + ", ".join(per_file[f]["_best"]) for f in files) + ".",
            "", f"class_gittins minus each row, paired on the same {seeds_text} (hours; x/y: class_gittins lower on x of y "
                "seeds; ** more than 2 standard errors below):", "",
            "| minus | " + " | ".join(files) + " |", "|---" * (len(files) + 1) + "|"]
    for lab in labels:
        if lab == "class_gittins (rounds)":
            continue
        out.append(f"| {lab} | " + " | ".join(paired(per_file[f]["class_gittins (rounds)"], per_file[f][lab]) for f in files) + " |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="held-out seeds per held-out file")
    ap.add_argument("--validation-seeds", type=int, default=40, help="validation seeds (2000000 on) per validation file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--print", action="store_true", help="print the section instead of writing docs/rounds.md")
    args = ap.parse_args()
    import gpuplace  # noqa: F401  (sets the data folder)
    from tqdm import tqdm

    val_seeds = list(range(2_000_000, 2_000_000 + args.validation_seeds))
    val, held = {}, {}
    for f in tqdm(VALIDATION + HELD_OUT, desc="files", unit="file", file=sys.stderr):
        if f in VALIDATION:
            val[f] = run_file(f, val_seeds, TRAINING, args.threads)
        else:
            held[f] = run_file(f, args.seeds, None, args.threads)
    out = [f"Validation files, the size sample from the five other training files ({', '.join(TRAINING)}), "
           f"{args.validation_seeds} validation seeds each; mean JCT in hours, mean ± standard error. "
           "Generated by `experiments/class_gittins.py`.", ""]
    out += table(VALIDATION, val, f"{args.validation_seeds} validation seeds")
    out += ["", f"Held-out files (`philly_hidden:<file>`, the preset's sample: all seven training files), {args.seeds} "
                "held-out seeds each:", ""]
    out += table(HELD_OUT, held, f"{args.seeds} held-out seeds")
    return finish(out, DOC, ROOT, args.print, section="class-gittins")


if __name__ == "__main__":
    sys.exit(main())
