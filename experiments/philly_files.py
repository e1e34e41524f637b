#!/usr/bin/env python3
"""Writes the per-file table of docs/ppo.md: the shipped Philly network `philly_distilled`, alone and with its guards
(`philly_distilled@hold_from:24@place:pack:1`, include/gpuplace/rl/hold_guard.hpp), and the planner it learned from
(its recipe's `dagger_teacher`, causal), on each held-out Philly file against that file's best heuristic (every placer
under every queue policy, chosen on the same seeds) and the networks against their teacher: mean JCT, paired
differences and how many standard errors they are, each file and the four together. About 4 minutes (the planner's
episodes).

    experiments/philly_files.py [--split held-out|validation] [--seeds 20] [--gpus 64] [--planners NAME,...] [--hybrids]
                                [--holds] [--model FILE] [--print]

`--planners` adds rows of other rollout planners (causal: the fair planner forks futures), each over its base
heuristics and queue policy as named (several bases: `rollout16:pack_wait/topology_greedy+sjf`, docs/planning.md).
`--hybrids` adds two rows where the unguarded network and its teacher share the decisions, to show which of them
carries the teacher's lead: the teacher deciding whether to hold each job (DEFER), the network placing the jobs it
does not hold; and the network deciding whether to hold, the teacher placing (where the teacher would hold a job the
network places, the network's placement). Each asks the teacher at every decision of its own, as many as the
teacher's episodes (causal: the teacher forks futures). `--holds` counts, along the teacher's own episodes, the
decisions by whether the teacher, its base pack_wait, the unguarded network and the teacher with other futures (another
seed) would hold the job, with the network's mean probability of DEFER, and prints them under the table. `--model
FILE` plays a checkpoint of one's own (a `gpuplace-train` run's `ppo.json`, say) in the shipped network's rows, with
the shipped network's guards, and prints the table. `--split validation` plays the two validation files (103959,
b436b2) on the validation seeds (2000000 onwards), where choices are made, and prints the table.

The episodes are experiments/idle_waiting.py's: DGX-A100 nodes, windows of 200 jobs per 64 GPUs at offered load 1.0,
DEFER allowed, the networks under sjf; held-out seeds 1000000 onwards. The table replaces the part of docs/ppo.md
between `<!-- philly_files:begin -->` and `<!-- philly_files:end -->`.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402
from idle_waiting import (HOLD_FROM, NEVER, PHILLY_FILES, PLACE_MARGIN, SHAPES, episode, guard_of,  # noqa: E402
                          heuristic_variants, philly_scenario, with_queue)

from gpuplace import _core, ppo  # noqa: E402
from gpuplace.progress import progress_bar  # noqa: E402

DOC = ROOT / "docs" / "ppo.md"
NET = "philly_distilled"
ROWS = [NET, f"{NET}@hold_from:{HOLD_FROM[NET]}@place:pack:{PLACE_MARGIN[NET]:g}"]  # as the benchmark names them
# the planner the network learned from: its recipe's labeller
TEACHER = json.loads((ROOT / "data" / "recipes" / f"{NET}.json").read_text())["ppo"]["dagger_teacher"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["held-out", "validation"], default="held-out",
                    help="the held-out files and seeds (default; the table of docs/ppo.md), or the validation ones (printed)")
    ap.add_argument("--seeds", type=int, default=20, help="seeds a file (default 20)")
    ap.add_argument("--gpus", type=int, default=64, choices=sorted(SHAPES), help="cluster size (default 64)")
    ap.add_argument("--planners", default="", help="rollout planners to add, comma-separated (e.g. rollout16:pack_wait+sjf)")
    ap.add_argument("--hybrids", action="store_true",
                    help="add the network and its teacher sharing decisions: one holds, the other places (printed)")
    ap.add_argument("--holds", action="store_true",
                    help="count the teacher's decisions by whether it, pack_wait, the network and the teacher with other futures "
                         "would hold the job (printed)")
    ap.add_argument("--model", help="a checkpoint file to play in the shipped network's rows (printed)")
    ap.add_argument("--json", help="also write every episode's mean JCT (h), by file and policy, to this JSON file")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/ppo.md")
    args = ap.parse_args()
    if args.seeds < 2:
        ap.error(f"--seeds: at least 2 (a standard error needs two), got {args.seeds}")
    planners = [TEACHER] + [p for p in args.planners.split(",") if p and p != TEACHER]
    for name in planners:
        if not name.startswith("rollout"):
            ap.error(f"--planners: a causal rollout planner (rollout<F>...:<heuristic>[+queue]), got {name!r}")
        _core.Heuristic(name.partition("+")[0])  # a malformed name is refused before any episode
    files = list(PHILLY_FILES[args.split])
    first = 1_000_000 if args.split == "held-out" else 2_000_000
    seeds = [first + i for i in range(args.seeds)]
    net_name = args.model or NET
    net = ppo.load_model(net_name)
    net_rows = [r.replace(NET, net_name, 1) for r in ROWS]
    heuristics = heuristic_variants()
    out = [f"The {len(files)} {args.split} Philly files on {args.gpus} DGX-A100 GPUs (200-job windows per 64 GPUs, offered "
           f"load 1.0, DEFER allowed), {args.seeds} {args.split} seeds a file (from {first}); mean ± standard error. Each file's best "
           f"heuristic: the lowest mean JCT of every placer under every queue policy ({len(heuristics)} variants) on "
           f"these seeds; the network acts under sjf; its teacher, `{TEACHER}`, is the planner its recipe's labels "
           "come from (causal); minus: paired differences, in standard errors after them (** beyond two). Together: "
           "every file's episodes against its own best heuristic. Generated by `experiments/philly_files.py`.", "",
           "| file | policy | mean JCT (h) | minus the file's best heuristic (h) | minus the teacher (h) |",
           "|---|---|---|---|---|"]
    hybrids = list(HYBRIDS) if args.hybrids else []
    # file -> (teacher holds, pack_wait holds) -> [decisions, network holds, the teacher with other futures holds,
    # the sum of the network's probabilities of DEFER]
    holds: dict[str, dict[tuple[bool, bool], list[float]]] = {}
    rows = net_rows + planners + hybrids
    together: dict[str, list[float]] = {name: [] for name in rows}
    against_teacher: dict[str, list[float]] = {name: [] for name in rows if name != TEACHER}
    episodes: dict[str, dict[str, list[float]]] = {}
    with progress_bar(total=len(files) * len(seeds) * (len(heuristics) + len(rows)), desc="episodes") as bar:
        for f in files:
            res: dict[str, list[float]] = {}

            def play(name: str, sc: dict, act, **guard) -> None:
                res[name] = []
                for s in seeds:
                    res[name].append(episode(sc, act, s, **guard)[0])
                    bar.update(1)

            for name in heuristics:
                placer, _, queue = name.partition("+")
                play(name, with_queue(philly_scenario(args.gpus, "gpu", f), queue), _core.Heuristic(placer))
            for name in net_rows:
                play(name, philly_scenario(args.gpus, "placement", f), net, **guard_of(name)[1])
            for name in planners:
                base, _, queue = name.partition("+")
                act = _core.Heuristic(base)
                if args.holds and name == TEACHER:
                    act = HoldCounter(act, _core.Heuristic(base), net, holds.setdefault(f, {}))
                play(name, with_queue(philly_scenario(args.gpus, "placement", f), queue or "sjf"), act)
            for name in hybrids:
                play(name, philly_scenario(args.gpus, "placement", f), Shared(net, TEACHER, teacher_holds=name == HYBRIDS[0]))
            episodes[f] = res
            best = min(heuristics, key=lambda h: statistics.fmean(res[h]))
            m, se = mean_sem(res[best])
            out.append(f"| {f} | the best heuristic, `{best}` | {m:.3f} ± {se:.3f} |  |  |")
            for name in rows:
                d = [a - b for a, b in zip(res[name], res[best])]
                together[name] += d
                t = ""
                if name in against_teacher:
                    dt = [a - b for a, b in zip(res[name], res[TEACHER])]
                    against_teacher[name] += dt
                    t = diff(dt)
                m, se = mean_sem(res[name])
                out.append(f"| {f} | {row_label(name, net_name)} | {m:.3f} ± {se:.3f} | {diff(d)} | {t} |")
    for name, d in together.items():
        t = diff(against_teacher[name]) if name in against_teacher else ""
        out.append(f"| the {len(files)} together | {row_label(name, net_name)} |  | {diff(d)} | {t} |")
    if holds:
        out += ["", f"Along the teacher's own episodes (the same seeds), its decisions by whether the teacher and its base "
                "pack_wait hold the job (DEFER), and how many of them the unguarded network would hold too (and its mean "
                "probability of DEFER there), and the teacher itself with other futures (another seed):", "",
                "| file | the teacher holds, pack_wait holds | the teacher holds, pack_wait places | "
                "the teacher places, pack_wait holds | both place |", "|---|---|---|---|---|"]
        for f, c in holds.items():
            cells = [c.get(k, [0, 0, 0, 0.0]) for k in ((True, True), (True, False), (False, True), (False, False))]
            out.append(f"| {f} | " + " | ".join(f"{n:,} (network holds {h:,}, probability {p / max(n, 1):.3f}; the teacher with "
                                                 f"other futures {o:,})" for n, h, o, p in cells) + " |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"seeds": seeds, "gpus": args.gpus, "episodes": episodes}, indent=1) + "\n")
    return finish(out, DOC, ROOT, args.print or args.split == "validation" or args.hybrids or args.holds or bool(args.model),
                  "philly_files")


HYBRIDS = ("the teacher holding, the network placing", "the network holding, the teacher placing")


OTHER_FUTURES = 777_777  # HoldCounter: the second teacher's seed is the episode's plus this (other futures)


class HoldCounter:
    """The teacher, acting as it does, counting each of its decisions in `counts` by (the teacher holds, pack_wait
    holds) as [decisions, those the network (unguarded, greedy) would hold, those a second teacher of the same name
    with other futures would hold, the sum of the network's probabilities of DEFER (the softmax of its logits)]. How
    often the teacher with other futures repeats a hold tells how much of it the state decides and how much the
    futures the teacher drew; the network's probability, how far it tells the teacher's own holds from its
    placements."""

    def __init__(self, teacher, second, net, counts: dict):
        self.teacher, self.second, self.net, self.counts = teacher, second, net, counts
        self.base = _core.Heuristic("pack_wait")

    def reset(self, seed: int) -> None:
        self.teacher.reset(seed)
        self.second.reset(seed + OTHER_FUTURES)
        self.base.reset(seed)

    def act(self, env) -> int:
        hold = env.defer_action
        a = self.teacher.act(env)
        c = self.counts.setdefault((a == hold, self.base.act(env) == hold), [0, 0, 0, 0.0])
        c[0] += 1
        c[1] += self.net.act(env) == hold
        c[2] += self.second.act(env) == hold
        c[3] += defer_probability(self.net, env)
        return a


def defer_probability(net, env) -> float:
    """The network's probability of DEFER in env's state: the softmax of its logits over the valid actions."""
    logits = net.logits(env).astype(np.float64)
    p = np.exp(logits - logits.max())
    return float(p[env.defer_action] / p.sum())


class Shared:
    """The network (unguarded, greedy) and its teacher sharing each decision: with `teacher_holds`, the teacher
    decides whether to hold the job (DEFER) and the network places it otherwise (its best placement); without, the
    network decides whether to hold and the teacher places (the network's placement where the teacher would hold)."""

    def __init__(self, net, teacher: str, teacher_holds: bool):
        self.net, self.teacher_holds = net, teacher_holds
        self.teacher = _core.Heuristic(teacher.partition("+")[0])  # it acts under the scenario's queue policy (sjf)

    def reset(self, seed: int) -> None:
        self.teacher.reset(seed)

    def act(self, env) -> int:
        hold = env.defer_action
        if self.teacher_holds:
            return hold if self.teacher.act(env) == hold else self.net.act(env, hold_from=NEVER)
        a = self.net.act(env)
        if a == hold:
            return a
        t = self.teacher.act(env)
        return a if t == hold else t


def row_label(name: str, net: str) -> str:
    """A row's policy cell: its name, the teacher's marked as such (`net`: the network the hybrids play)."""
    if name in HYBRIDS:
        return f"`{net}` and its teacher: {name}"
    return f"teacher: `{name}`" if name == TEACHER else f"`{name}`"


def diff(d: list[float]) -> str:
    """A paired difference, its standard error and how many standard errors it is (** beyond two)."""
    m, se = mean_sem(d)
    z = m / se if se else 0.0
    return f"{m:+.3f} ± {se:.3f} ({z:+.1f}{' **' if abs(z) > 2 else ''})"


if __name__ == "__main__":
    sys.exit(main())
