#!/usr/bin/env python3
"""Trains the reference PPO in the round action mode on hidden-duration Philly (the philly_hidden
preset with rounds instead of preemption: gpuplace/PhillyHiddenRound-v0's scenario, with
class_gittins as the round advisor: env.round_advisor), 3 training seeds, and writes its table in
docs/rounds.md: on each held-out Philly-derived file, the network of
each training seed (median over the seeds, with their range) against LAS, 2D-LAS and Gittins (the
event-driven disciplines of philly_hidden:<file>, placer pack, 30 s restart overhead), Gavel's
max_min_fairness_perf and class_gittins (round policies, placer pack), on the same held-out seeds and
so the same jobs; paired differences with standard errors.

    experiments/round_agent.py [--teacher NAME] [--dagger N] [--skip-train] [--seeds 20] [--threads 2] [--ship] [--print]

Training is `gpuplace-train --config <the config below> --out out/models/philly_hidden_round` (its
progress display); `--skip-train` evaluates an existing run. The network kept by the run (the best
validation JCT) is the one shipped as data/models/philly_hidden_round.json (`--ship` copies it).

`--teacher rollout8h20:pack+class_gittins` clones the round planner instead (round_slot_teacher.hpp:
each round the planner's allocation, chosen through the slots; the network sees only its actions,
never its choice), the recipe otherwise the same: the run goes to out/models/philly_hidden_round_planner
and its table to docs/rounds.md's section round-agent-planner. With `--dagger N` the planner labels, after
the cloning, the states of N rollouts of the network (DAgger: "dagger_teacher", "dagger_iterations"), and the
run goes to out/models/philly_hidden_round_planner_dagger (section round-agent-planner-dagger).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "rounds.md"
FILES = ["0e4a51", "6c71a0", "7f04ca", "e13805"]  # data/presets.hpp philly_heldout_files()
MODELS = ROOT / "out" / "models"
BASELINES = [("LAS", "pack+las", "event"), ("2D-LAS (Tiresias)", "pack+2d_las", "event"), ("Gittins", "pack+gittins", "event"),
             ("max_min_fairness_perf (Gavel, rounds)", "pack+max_min_fairness_perf", "round"),
             ("class_gittins (rounds)", "pack+class_gittins", "round")]
# The recipe: the round advisor class_gittins orders the slots and shows its choice (slot features
# advised, advice_rank); clone the first valid slot (the advisor's fill of each round, which is
# class_gittins's allocation), fit the value head, then PPO; the defaults of gpuplace-train's
# "philly" recipe otherwise (docs/ppo.md).
ADVISOR = "class_gittins"  # env.round_advisor
PPO_ITER = 16 * 128  # env steps an iteration: gpuplace-train's envs x steps
PPO = {"teacher": "pack", "imitation_steps": 204800, "total_steps": 819200, "learning_rate": 0.0001, "value_warmup": 50}


def hours(v):
    return [x / 3600.0 for x in v]


def paired(a, b):
    m, s = mean_sem([x - y for x, y in zip(a, b)])
    lower = sum(x < y for x, y in zip(a, b))
    return f"{m:+.2f} ± {s:.2f} ({lower}/{len(a)})"


def advised(round_overrides):
    """The round overrides with the advisor (env merged)."""
    return {**round_overrides, "env": {**round_overrides.get("env", {}), "round_advisor": ADVISOR}}


def run_name(teacher: str, dagger: int) -> str:
    """The run's name: philly_hidden_round for the advisor's fill, philly_hidden_round_planner for the planner
    (with _dagger when it labels the network's states too)."""
    return "philly_hidden_round" if teacher == PPO["teacher"] else "philly_hidden_round_planner" + ("_dagger" if dagger else "")


def recipe(args) -> dict:
    """The PPO config: PPO's with the teacher, and with --dagger the planner labelling the network's states."""
    ppo = {**PPO, "teacher": args.teacher}
    if args.dagger:
        ppo.update(dagger_teacher=args.teacher, dagger_iterations=args.dagger)
    return ppo


def train(args, round_overrides, run: pathlib.Path) -> float:
    from gpuplace.config import load_scenario

    sc = load_scenario("philly_hidden", advised(round_overrides), action_mode="round")
    sc["name"] = run.name
    cfg = {"scenario": sc, "queue": "", "restarts": 3, "validation_seeds": 8, "validate_every": 10, "checkpoint_every": 10,
           "ppo": recipe(args)}
    run.parent.mkdir(parents=True, exist_ok=True)
    path = run.parent / f"{run.name}.config.json"
    path.write_text(json.dumps(cfg, indent=1))
    t = time.time()
    subprocess.run([str(ROOT / "build" / "apps" / "gpuplace-train"), "--config", str(path), "--no-plot", "--out", str(run),
                    "--overwrite"], check=True)
    return time.time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", default=PPO["teacher"],
                    help="the policy cloned: pack (the first valid slot: the advisor's fill) or the round planner, "
                         "e.g. rollout8h20:pack+class_gittins")
    ap.add_argument("--dagger", type=int, default=0, metavar="N",
                    help="with a planner teacher: N DAgger iterations after the cloning, the planner labelling the network's states")
    ap.add_argument("--skip-train", action="store_true", help="evaluate the existing run in out/models/<the run's name>")
    ap.add_argument("--seeds", type=int, default=20, help="held-out seeds per file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ship", action="store_true", help="copy the run's kept network to data/models/philly_hidden_round.json")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/rounds.md")
    args = ap.parse_args()
    import gpuplace  # noqa: F401  (sets the data folder)
    from gpuplace import _core
    from gpuplace.config import load_scenario
    from gpuplace.registration import ROUND_OVERRIDES
    from tqdm import tqdm

    planner = args.teacher != PPO["teacher"]
    if args.dagger and not planner:
        sys.exit("--dagger: with a planner teacher (--teacher rollout8h20:pack+class_gittins)")
    run = MODELS / run_name(args.teacher, args.dagger)
    if args.ship and planner:
        sys.exit("--ship: only the advisor's-fill recipe ships (data/models/philly_hidden_round.json)")
    if not args.skip_train:
        print(f"trained in {train(args, ROUND_OVERRIDES, run):.0f} s", file=sys.stderr)
    nets = sorted(run.glob("seed_*/ppo.json"), key=lambda p: int(p.parent.name.split("_")[1]))
    if not nets:
        sys.exit(f"{run}: no seed_<k>/ppo.json (run without --skip-train)")
    if args.ship:
        shutil.copy(run / "ppo.json", ROOT / "data" / "models" / "philly_hidden_round.json")
    times = []
    for p in nets:  # each seed's training time: the last row of its learning curve
        rows = (p.parent / "learning.csv").read_text().splitlines()
        times.append(float(rows[-1].split(",")[2]) if len(rows) > 1 else float("nan"))

    per_file = {}
    bar = tqdm(total=len(FILES) * (len(BASELINES) + len(nets)), desc="evaluating", unit="policy", file=sys.stderr)
    for f in FILES:
        base = {}
        for label, name, kind in BASELINES:
            sc = load_scenario(f"philly_hidden:{f}") if kind == "event" else load_scenario(f"philly_hidden:{f}", ROUND_OVERRIDES)
            rep = _core.evaluate(sc, [name], args.seeds, args.threads)
            base[label] = hours([m["avg_jct"] for m in rep.per_seed(name)])
            bar.update()
        sc = load_scenario(f"philly_hidden:{f}", ROUND_OVERRIDES, action_mode="round")
        greedy = _core.evaluate(sc, ["pack"], args.seeds, args.threads)
        base["greedy LAS fill of each round"] = hours([m["avg_jct"] for m in greedy.per_seed("pack")])
        sc = load_scenario(f"philly_hidden:{f}", advised(ROUND_OVERRIDES), action_mode="round")
        fill = hours([m["avg_jct"] for m in _core.evaluate(sc, ["pack"], args.seeds, args.threads).per_seed("pack")])
        if fill != base["class_gittins (rounds)"]:  # the teacher is class_gittins's rounds exactly (tests/round_mode_test.cpp)
            sys.exit(f"{f}: the advisor's fill ({statistics.fmean(fill):.4f} h) differs from class_gittins's rounds "
                     f"({statistics.fmean(base['class_gittins (rounds)']):.4f} h)")
        ppo = []
        for p in nets:
            net = _core.load_checkpoint(str(p))
            r = _core.evaluate_network(sc, net, args.seeds, p.parent.name, args.threads)
            ppo.append(hours([m["avg_jct"] for m in r.per_seed(p.parent.name)]))
            bar.update()
        per_file[f] = (base, ppo)
    bar.close()

    k = len(nets)
    overall = [statistics.fmean([x for f in FILES for x in per_file[f][1][i]]) for i in range(k)]
    med = sorted(range(k), key=lambda i: overall[i])[k // 2]
    labels = list(per_file[FILES[0]][0])
    out = [f"Held-out Philly-derived files (`philly_hidden:<file>`: 200-job windows at offered load 1.0, durations "
           f"hidden), {args.seeds} held-out seeds each, the same jobs for every row; mean JCT in hours, mean ± standard "
           "error over the seeds. LAS, 2D-LAS and Gittins are the event-driven disciplines (preemption, 30 s restart "
           "overhead), max_min_fairness_perf, class_gittins and the agent run in 360 s rounds (30 s restores), the "
           "agent's rounds filled (it chooses which jobs run; a round runs once none fits) with class_gittins as "
           "its advisor (the slots in its order, its choice shown; its fill is the class_gittins row "
           "exactly: the script checks it); the greedy LAS fill is the first valid slot without the advisor. Every "
           "row places with pack. "
           + (f"The PPO teacher: the round planner `{args.teacher}` (causal), each round its allocation chosen through the "
              "slots, nothing of it observed. " if planner else "The PPO teacher: the advisor's fill. ")
           + f"PPO: {k} training seeds ({', '.join(p.parent.name for p in nets)}) of `experiments/round_agent.py"
           + (f" --teacher {args.teacher}" if planner else "") + (f" --dagger {args.dagger}" if args.dagger else "") + "`, "
           + (f"{args.dagger} DAgger iterations of {PPO_ITER:,} env steps (the planner labelling the network's states) after the cloning, " if args.dagger else "")
           + f"each trained for {PPO['imitation_steps'] + args.dagger * PPO_ITER + PPO['total_steps']:,} env steps "
           f"({', '.join(f'{t / 60:.1f}' for t in times)} min on a shared 2-core machine); the median over the seeds "
           "with their range [min, max] of per-seed means. Generated by `experiments/round_agent.py`.", ""]
    out += ["| policy | " + " | ".join(FILES) + " |", "|---" * (len(FILES) + 1) + "|"]
    for lab in labels:
        cells = []
        for f in FILES:
            m, s = mean_sem(per_file[f][0][lab])
            cells.append(f"{m:.2f} ± {s:.2f}")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    cells = []
    for f in FILES:
        means = sorted(statistics.fmean(v) for v in per_file[f][1])
        cells.append(f"{statistics.median(means):.2f} [{means[0]:.2f}, {means[-1]:.2f}]")
    out.append(f"| PPO, round mode (median of {k} seeds [range]) | " + " | ".join(cells) + " |")
    out += ["", f"Paired differences on the same seeds, PPO minus each row (hours, mean ± standard error; x/y: PPO lower on "
                f"x of y seeds), for the median training seed by mean JCT over all files ({nets[med].parent.name}) and for "
                "each seed:", "",
            "| PPO seed | " + " | ".join(f"− {lab}" for lab in labels) + " |", "|---" * (len(labels) + 1) + "|"]
    for i in [med] + [j for j in range(k) if j != med]:
        for f in FILES:
            row = [paired(per_file[f][1][i], per_file[f][0][lab]) for lab in labels]
            tag = " (median)" if i == med else ""
            out.append(f"| {nets[i].parent.name}{tag}, {f} | " + " | ".join(row) + " |")
    return finish(out, DOC, ROOT, args.print, section=("round-agent-planner" + ("-dagger" if args.dagger else "")) if planner else "round-agent")


if __name__ == "__main__":
    sys.exit(main())
