#!/usr/bin/env python3
"""Writes the idle-while-waiting tables of docs/ppo.md: on the default workload or Philly at 16 to 1,024 GPUs,
the shipped networks, alone and with a hold guard (include/gpuplace/rl/hold_guard.hpp: holding a job
only where pack_wait would, or only on clusters of at least some number of GPUs; and then placing a job elsewhere than
pack only where the network prefers its placement by more than a margin in logits), against every heuristic variant:
mean JCT, the GPU-hours left idle while a waiting job would have fit (include/gpuplace/idle_waiting.hpp), the JCT
paired against the best heuristic, and what a network's holds gain against the same network never holding.

    experiments/idle_waiting.py [--seeds N[,N...]] [--sizes 16,64,...] [--workload default|philly]
                                [--split held-out|validation] [--margins 0.3,1,...] [--print]

The clusters and workloads are experiments/size_transfer.sh's (DGX-A100 nodes, 2.5 jobs per GPU, DEFER allowed,
sjf). Held-out seeds are 1000000 onwards, validation seeds 2000000 onwards (--split validation: the seeds, and on
Philly the validation files, on which the hold guards are chosen). Sizes: 16, 64, 256 and 1,024 GPUs; with
--split validation 24, 32 and 48 as well, where a guard's cluster size is chosen. By default 400 seeds on up to
64 GPUs and 40 on more (--seeds: one count, or one per size). With --workload philly the 4 held-out Philly files (or the 2
validation files) instead, the seeds split among them: by default 1,000 on up to 64 GPUs, where single episodes
differ by tens of hours, and 80 on more, where a file's window is most or all of it. A file shorter than its
window is replayed whole, the same episode for every seed, so it counts once (on 1,024 GPUs every file: one
episode a file). --margins compares placement margins (validation: where the margin is chosen). The table
replaces the part of docs/ppo.md between `<!-- idle:begin -->` and `<!-- idle:end -->` (`idle_philly` for Philly,
`..._validation` for the validation split).
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

from gpuplace import ppo  # noqa: E402
from gpuplace import _core  # noqa: E402
from gpuplace.config import make_core_env  # noqa: E402
from gpuplace.progress import progress_bar  # noqa: E402

DOC = ROOT / "docs" / "ppo.md"
SHAPES = {16: (1, 2), 24: (1, 3), 32: (1, 4), 48: (2, 3), 64: (2, 4), 256: (4, 8), 1024: (8, 16)}  # racks, nodes per rack
# shipped network -> its action mode
NETWORKS = {"default": "gpu", "sizes_distilled": "placement", "philly_distilled": "placement"}
PHILLY_NETWORKS = {"philly_distilled": "placement", "sizes_distilled": "placement"}  # those compared on Philly
# network -> the smallest cluster (GPUs) on which it holds jobs: chosen on the Philly validation files, where
# philly_distilled's holds cost on 16 GPUs (2 nodes) and pay on 24 (3 nodes) and more (docs/ppo.md)
HOLD_FROM = {"philly_distilled": 24}
# network -> the margin (logits) by which it must prefer a placement to pack's to depart from it: chosen on the
# validation seeds, where philly_distilled's small departures from pack cost on 1,024 GPUs of the default workload
# and the margin keeps its lead on Philly (docs/ppo.md)
PLACE_MARGIN = {"philly_distilled": 1.0}
NEVER = 1 << 40  # hold_from: a cluster size no cluster reaches, so the network never holds a job that fits

PHILLY_FILES = {  # split -> file -> its jobs
    "held-out": {"0e4a51": 1181, "6c71a0": 2000, "7f04ca": 972, "e13805": 607},
    "validation": {"103959": 986, "b436b2": 2000},
}
PHILLY_JOBS = {f: n for files in PHILLY_FILES.values() for f, n in files.items()}


def window(gpus: int, file: str) -> int:
    """The jobs of a Philly episode on `gpus` GPUs: 200 per 64 GPUs, or the whole file when shorter."""
    return min(PHILLY_JOBS[file], 200 * gpus // 64)


def philly_scenario(gpus: int, mode: str, file: str) -> dict:
    """A Philly file on `gpus` GPUs at offered load 1.0: windows of 200 jobs per 64 GPUs (the whole file when
    shorter), DEFER allowed, sjf."""
    from gpuplace.config import scenario_of

    d = scenario_of(f"philly:{file}").to_dict()
    racks, nodes = SHAPES[gpus]
    d["name"] = f"philly:{file}@{gpus}"
    d["topology"] = {"preset": "dgx_a100", "racks": racks, "nodes_per_rack": nodes}
    d["workload"]["episode_jobs"] = window(gpus, file)
    d["env"].update(queue_policy="sjf", backfill=True, allow_defer=True, action_mode=mode)
    return d


def scenario(gpus: int, mode: str) -> dict:
    racks, nodes = SHAPES[gpus]
    return {"name": f"default@{gpus}", "topology": {"preset": "dgx_a100", "racks": racks, "nodes_per_rack": nodes},
            "workload": {"kind": "synthetic", "num_jobs": gpus * 5 // 2, "load": 1.0,
                         "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2}, "duration_min": 600, "duration_max": 14400},
            "env": {"queue_policy": "sjf", "backfill": True, "allow_defer": True, "queue_window": 8, "action_mode": mode},
            "reward": {"jct": 1.0, "time_scale": 3600}}


def episode(sc: dict, act, seed: int, **guard) -> tuple[float, float]:
    """Mean JCT (h) and idle-while-waiting GPU-hours of one episode of `act.act(env) -> action` (a network with
    the guards `guard`: Network.act's hold_with, hold_from, place_with and place_margin)."""
    e = make_core_env(sc)
    e.reset(seed)
    reset = getattr(act, "reset", None)
    if reset:
        reset(seed)
    while not e.done:
        e.step(int(act.act(e, **guard)))
    return e.metrics()["avg_jct"] / 3600.0, e.idle_while_waiting_gpu_hours()


def with_queue(sc: dict, queue: str) -> dict:
    """The scenario under a non-preemptive queue policy as `<placer>+<queue>` names it."""
    env = dict(sc["env"], queue_policy="fifo" if queue in ("fifo", "backfill") else queue, backfill=queue != "fifo")
    return dict(sc, env=env)


def heuristic_variants() -> list[str]:
    """Every placer under every non-preemptive queue policy, as `<placer>+<queue>` (with_queue())."""
    return [f"{p}+{q}" for p in _core.heuristic_names() for q in ("fifo", "backfill", "sjf", "fewest_gpus")]


def guard_of(name: str) -> tuple[str, dict]:
    """A network row's name (`<net>[@hold:<heuristic>|@hold_from:<gpus>][@place:<heuristic>:<margin>]`, as the
    benchmark names it) -> (network, its guards as episode() keywords)."""
    net, *guards = name.split("@")
    out: dict = {}
    for g in guards:
        kind, _, arg = g.partition(":")
        if kind == "hold":
            out["hold_with"] = arg
        elif kind == "hold_from":
            out["hold_from"] = int(arg)
        else:
            heuristic, _, margin = arg.rpartition(":")
            out.update(place_with=heuristic, place_margin=float(margin))
    return net, out


def without_holds(name: str) -> str:
    """The same network and placement margin, never holding a job that fits: what its holds gain against."""
    net, *guards = name.split("@")
    return "@".join([net, f"hold_from:{NEVER}"] + [g for g in guards if g.startswith("place:")])


def label_of(name: str, mode: str) -> str:
    net, guard = guard_of(name)
    label = f"network `{net}` ({mode} mode)"
    if "hold_with" in guard:
        label += f", holding only where {guard['hold_with']} does"
    if "hold_from" in guard:
        label += f", holding only from {guard['hold_from']:,} GPUs"
    if "place_with" in guard:
        m = guard["place_margin"]
        label += (f", placing elsewhere than {guard['place_with']} only where it prefers its placement by more than "
                  f"{m:g} logit{'' if m == 1 else 's'}")
    return label


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", help="seeds: one count, or one per size (default: 400 on up to 64 GPUs and 40 on more; "
                    "with --workload philly 1,000 and 80)")
    ap.add_argument("--sizes", help="GPU counts (default: 16,64,256,1024; with --split validation "
                    "16,24,32,48,64,256,1024)")
    ap.add_argument("--workload", choices=("default", "philly"), default="default",
                    help="philly: the Philly files of the split, the seeds split among them")
    ap.add_argument("--split", choices=("held-out", "validation"), default="held-out",
                    help="validation: seeds from 2000000 (on Philly the validation files), where guards are chosen")
    ap.add_argument("--margins", help="placement margins (logits) to compare, e.g. 0.3,1,3,inf: rows of each network "
                    "with a hold size (HOLD_FROM) placing elsewhere than pack only by more than each (default: the "
                    "chosen one, PLACE_MARGIN)")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/ppo.md")
    args = ap.parse_args()
    validation = args.split == "validation"
    args.sizes = args.sizes or ("16,24,32,48,64,256,1024" if validation else "16,64,256,1024")
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(g not in SHAPES for g in sizes):
        ap.error(f"--sizes: each of {', '.join(map(str, SHAPES))}, got {args.sizes}")
    philly = args.workload == "philly"
    if args.seeds:
        counts = [int(n) for n in args.seeds.split(",")]
    else:
        counts = [(1000 if g <= 64 else 80) if philly else (400 if g <= 64 else 40) for g in sizes]
    if len(counts) == 1:
        counts *= len(sizes)
    if len(counts) != len(sizes):
        ap.error(f"--seeds: {len(counts)} counts for {len(sizes)} sizes ({args.sizes})")
    files = list(PHILLY_FILES[args.split])
    first = 2_000_000 if validation else 1_000_000

    def cases(g: int, n: int) -> list:
        """The episodes on `g` GPUs: (scenario maker, seed, file or "", whether the file is replayed whole); on
        Philly each file takes its share of the seeds, once when it is replayed whole."""
        seeds = [first + i for i in range(n)]
        if not philly:
            return [(scenario, s, "", False) for s in seeds]
        out, whole = [], set()
        for i, s in enumerate(seeds):
            f = files[i % len(files)]
            if f in whole:
                continue
            if window(g, f) == PHILLY_JOBS[f]:
                whole.add(f)
            out.append((lambda g, m, f=f: philly_scenario(g, m, f), s, f, f in whole))
        return out
    shown = PHILLY_NETWORKS if philly else NETWORKS
    nets = {name: ppo.load_model(name) for name in shown}
    heuristics = heuristic_variants()
    networks = [n for n in shown] + [n + "@hold:pack_wait" for n in shown] + [f"{n}@hold_from:{HOLD_FROM[n]}" for n in shown if n in HOLD_FROM]
    margins = {n: [float(m) for m in args.margins.split(",")] if args.margins else [PLACE_MARGIN[n]]
               for n in shown if n in HOLD_FROM and n in PLACE_MARGIN}
    networks += [f"{n}@hold_from:{HOLD_FROM[n]}@place:pack:{m:g}" for n, ms in margins.items() for m in ms]
    never = {name: without_holds(name) for name in networks}  # each row never holding: what its holds gain against
    episodes_of = {g: cases(g, n) for g, n in zip(sizes, counts)}
    ran = [len(episodes_of[g]) for g in sizes]
    where = "the 2 Philly validation files" if validation and philly else "the 4 held-out Philly files"
    kind = "validation seeds" if validation else "held-out seeds"
    count = (f"{ran[0]:,} {kind}" if len(set(ran)) == 1 else
             f"{kind} (" + ", ".join(f"{n:,} on {g:,} GPUs" for g, n in zip(sizes, ran)) + ")")
    what = (f"{where} (200 jobs per 64 GPUs, or the whole file; offered load 1.0) on DGX-A100 clusters, {count} split "
            "among the files (a file replayed whole counts once), DEFER allowed" if philly else
            f"Default workload on DGX-A100 clusters (2.5 jobs per GPU, DEFER allowed); {count}")
    out = [f"{what[0].upper()}{what[1:]}; "
           f"mean ± standard error. The best heuristic: the lowest mean JCT of every placer under every queue policy "
           f"({len(heuristics)} variants) on these seeds; the networks act under sjf; minus: paired differences. Idle "
           "while waiting: GPU-hours left idle while a waiting job would have fit on them "
           "(include/gpuplace/idle_waiting.hpp; pack+sjf holds none by construction). Hold guards "
           "(include/gpuplace/rl/hold_guard.hpp): where the network would hold a job and the guard does not allow it "
           "(pack_wait would place the job; the cluster has fewer GPUs than the guard's), the network takes its own "
           "best other action. Holds' gain: the row minus the same network never holding a job that fits (paired). "
           "Generated by `experiments/idle_waiting.py`.", "",
           "| GPUs | policy | mean JCT (h) | minus the best heuristic (h) | holds' gain (h) | idle while waiting (GPU-h) |",
           "|---|---|---|---|---|---|"]
    runs = list(networks) + sorted(set(never.values()) - set(networks))
    notes: list[str] = []
    with progress_bar(total=(len(heuristics) + len(runs)) * sum(ran), desc="episodes") as bar:
        for g in sizes:
            res = {}
            episodes = episodes_of[g]
            for name in heuristics:
                placer, _, queue = name.partition("+")
                res[name] = []
                for make, s, _, _ in episodes:
                    res[name].append(episode(with_queue(make(g, "gpu"), queue), _core.Heuristic(placer), s))
                    bar.update(1)
            for name in runs:
                net, guard = guard_of(name)
                res[name] = []
                for make, s, _, _ in episodes:
                    res[name].append(episode(make(g, shown[net]), nets[net], s, **guard))
                    bar.update(1)
            best = min(heuristics, key=lambda h: statistics.fmean(j for j, _ in res[h]))
            base = [j for j, _ in res[best]]
            rows = [(best, f"the best heuristic, `{best}`")] + [(h, f"`{h}`") for h in ("pack+sjf", "pack_wait+sjf") if h != best]
            rows += [(name, label_of(name, shown[guard_of(name)[0]])) for name in networks]
            for name, label in rows:
                jct = [j for j, _ in res[name]]
                m, se = mean_sem(jct)
                im, ise = mean_sem([h for _, h in res[name]])
                dm, dse = mean_sem([a - b for a, b in zip(jct, base)])
                diff = "" if name == best else f"{dm:+.3f} ± {dse:.3f}"
                gain = ""
                if name in networks:
                    gm, gse = mean_sem([a - b for a, b in zip(jct, (j for j, _ in res[never[name]]))])
                    gain = f"{gm:+.3f} ± {gse:.3f}"
                out.append(f"| {g:,} | {label} | {m:.3f} ± {se:.3f} | {diff} | {gain} | {im:.1f} ± {ise:.1f} |")
            close = []  # rows within 0.005 h (18 s) of the best heuristic but not equal to it: in seconds
            for name, _ in rows[1:]:
                d = [(a - b) * 3600 for (a, _), b in zip(res[name], base)]
                dm, dse = mean_sem(d)
                if any(d) and abs(dm) < 18 and len(d) > 1:
                    close.append(f"`{name}` {dm:+.1f} ± {dse:.1f} s (behind on {sum(x > 0 for x in d)} of {len(d)}, "
                                 f"ahead on {sum(x < 0 for x in d)})")
            if close:
                notes.append(f"On {g:,} GPUs, minus the best heuristic in seconds: " + "; ".join(close) + ".")
            if episodes and all(w for _, _, _, w in episodes):  # one episode a file: its holds' gain file by file
                by_net = []
                for net in shown:
                    gains = [a - b for (a, _), (b, _) in zip(res[net], res[never[net]])]
                    by_net.append(f"`{net}` " + ", ".join(f"{f} {d:+.4f}" for (_, _, f, _), d in zip(episodes, gains)))
                notes.append(f"On {g:,} GPUs each file is one episode (replayed whole); holds' gain by file (h): "
                             + "; ".join(by_net) + ".")
    if notes:
        out += [""] + notes
    section = ("idle_philly" if philly else "idle") + ("_validation" if validation else "")
    return finish(out, DOC, ROOT, args.print, section)


if __name__ == "__main__":
    sys.exit(main())
