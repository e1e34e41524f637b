#!/usr/bin/env python3
"""Writes the idle-while-waiting table of docs/ppo.md: on the default workload at 16, 64, 256 and
1,024 GPUs, the shipped networks, alone and holding a job only where pack_wait would
(include/gpuplace/rl/hold_guard.hpp), against pack+sjf (which never holds a job that fits) and
pack_wait+sjf (which holds jobs for a compact placement): mean JCT, the GPU-hours left idle while a
waiting job would have fit (include/gpuplace/idle_waiting.hpp), and the JCT paired against pack+sjf.

    experiments/idle_waiting.py [--seeds N[,N...]] [--sizes 16,64,256,1024] [--workload default|philly] [--print]

The clusters and workloads are experiments/size_transfer.sh's (DGX-A100 nodes, 2.5 jobs per GPU,
DEFER allowed, sjf); held-out seeds 1000000 onwards, 20 at every size by default (--seeds: one count, or one per
size). With --workload philly the 4 held-out Philly files instead, the seeds split among them: by default 1,000
(250 a file) on up to 64 GPUs, where single episodes differ by tens of hours, and 80 on more (256 and 1,024 GPUs),
where a file's window is most or all of it (on 1,024 GPUs every file is replayed whole, the same episode for
every seed). The table replaces the part of docs/ppo.md between `<!-- idle:begin -->` and `<!-- idle:end -->`
(`idle_philly` for Philly).
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
SHAPES = {16: (1, 2), 64: (2, 4), 256: (4, 8), 1024: (8, 16)}  # racks, nodes per rack
NETWORKS = {"default": "gpu", "sizes_distilled": "placement"}  # shipped network -> its action mode
PHILLY_NETWORKS = {"philly_distilled": "placement", "sizes_distilled": "placement"}  # those compared on Philly


PHILLY_HELD_OUT = {"0e4a51": 1181, "6c71a0": 2000, "7f04ca": 972, "e13805": 607}  # file -> its jobs


def philly_scenario(gpus: int, mode: str, file: str) -> dict:
    """A held-out Philly file on `gpus` GPUs at offered load 1.0: windows of 200 jobs per 64 GPUs
    (the whole file when shorter), DEFER allowed, sjf."""
    from gpuplace.config import scenario_of

    d = scenario_of(f"philly:{file}").to_dict()
    racks, nodes = SHAPES[gpus]
    d["name"] = f"philly:{file}@{gpus}"
    d["topology"] = {"preset": "dgx_a100", "racks": racks, "nodes_per_rack": nodes}
    d["workload"]["episode_jobs"] = min(PHILLY_HELD_OUT[file], 200 * gpus // 64)
    d["env"].update(queue_policy="sjf", backfill=True, allow_defer=True, action_mode=mode)
    return d


def scenario(gpus: int, mode: str) -> dict:
    racks, nodes = SHAPES[gpus]
    return {"name": f"default@{gpus}", "topology": {"preset": "dgx_a100", "racks": racks, "nodes_per_rack": nodes},
            "workload": {"kind": "synthetic", "num_jobs": gpus * 5 // 2, "load": 1.0,
                         "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2}, "duration_min": 600, "duration_max": 14400},
            "env": {"queue_policy": "sjf", "backfill": True, "allow_defer": True, "queue_window": 8, "action_mode": mode},
            "reward": {"jct": 1.0, "time_scale": 3600}}


def episode(sc: dict, act, seed: int, hold_with: str = "") -> tuple[float, float]:
    """Mean JCT (h) and idle-while-waiting GPU-hours of one episode of `act.act(env) -> action` (a
    network holding only where `hold_with` holds, when given)."""
    e = make_core_env(sc)
    e.reset(seed)
    reset = getattr(act, "reset", None)
    if reset:
        reset(seed)
    while not e.done:
        e.step(int(act.act(e, hold_with=hold_with) if hold_with else act.act(e)))
    return e.metrics()["avg_jct"] / 3600.0, e.idle_while_waiting_gpu_hours()


def with_queue(sc: dict, queue: str) -> dict:
    """The scenario under a non-preemptive queue policy as `<placer>+<queue>` names it."""
    env = dict(sc["env"], queue_policy="fifo" if queue in ("fifo", "backfill") else queue, backfill=queue != "fifo")
    return dict(sc, env=env)


def seed_counts(sizes: list[int], counts: list[int]) -> str:
    """'20 held-out seeds' when every size has 20, else 'held-out seeds (1,000 on 16 GPUs, ...)'."""
    if len(set(counts)) == 1:
        return f"{counts[0]:,} held-out seeds"
    return "held-out seeds (" + ", ".join(f"{n:,} on {g:,} GPUs" for g, n in zip(sizes, counts)) + ")"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", help="held-out seeds: one count, or one per size (default: 20; with --workload philly "
                    "1,000 on up to 64 GPUs, 80 on more)")
    ap.add_argument("--sizes", default="16,64,256,1024")
    ap.add_argument("--workload", choices=("default", "philly"), default="default",
                    help="philly: the 4 held-out Philly files, the seeds split among them")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/ppo.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    philly = args.workload == "philly"
    if args.seeds:
        counts = [int(n) for n in args.seeds.split(",")]
    else:
        counts = [(1000 if g <= 64 else 80) if philly else 20 for g in sizes]
    if len(counts) == 1:
        counts *= len(sizes)
    if len(counts) != len(sizes):
        ap.error(f"--seeds: {len(counts)} counts for {len(sizes)} sizes ({args.sizes})")
    files = list(PHILLY_HELD_OUT)

    def cases(n: int) -> list:
        """The episodes: (scenario maker, seed); on Philly each held-out file takes its share of the seeds."""
        seeds = [1_000_000 + i for i in range(n)]
        if philly:
            return [(lambda g, m, f=files[i % 4]: philly_scenario(g, m, f), s) for i, s in enumerate(seeds)]
        return [(scenario, s) for s in seeds]
    shown = PHILLY_NETWORKS if philly else NETWORKS
    nets = {name: ppo.load_model(name) for name in shown}
    heuristics = [f"{p}+{q}" for p in _core.heuristic_names() for q in ("fifo", "backfill", "sjf", "fewest_gpus")]  # queue_names()
    networks = [(n, m) for n, m in shown.items()] + [(n + "@hold:pack_wait", m) for n, m in shown.items()]
    what = ("The 4 held-out Philly files (200 jobs per 64 GPUs, or the whole file; offered load 1.0) on DGX-A100 clusters, "
            f"{seed_counts(sizes, counts)} split among the files, DEFER allowed" if philly else
            f"Default workload on DGX-A100 clusters (2.5 jobs per GPU, DEFER allowed); {seed_counts(sizes, counts)}")
    out = [f"{what}; "
           f"mean ± standard error. The best heuristic: the lowest mean JCT of every placer under every queue policy "
           f"({len(heuristics)} variants) on these seeds; the networks act under sjf; minus: paired differences. Idle "
           "while waiting: GPU-hours left idle while a waiting job would have fit on them "
           "(include/gpuplace/idle_waiting.hpp; pack+sjf holds none by construction). A network holding only where "
           "pack_wait does (include/gpuplace/rl/hold_guard.hpp) takes its own best other action where pack_wait would "
           "place the job. Generated by `experiments/idle_waiting.py`.", "",
           "| GPUs | policy | mean JCT (h) | minus the best heuristic (h) | idle while waiting (GPU-h) |", "|---|---|---|---|---|"]
    with progress_bar(total=(len(heuristics) + len(networks)) * sum(counts), desc="episodes") as bar:
        for g, n in zip(sizes, counts):
            res = {}
            episodes = cases(n)
            for name in heuristics:
                placer, _, queue = name.partition("+")
                res[name] = []
                for make, s in episodes:
                    res[name].append(episode(with_queue(make(g, "gpu"), queue), _core.Heuristic(placer), s))
                    bar.update(1)
            for name, mode in networks:
                net, _, hold = name.partition("@hold:")
                res[name] = []
                for make, s in episodes:
                    res[name].append(episode(make(g, mode), nets[net], s, hold))
                    bar.update(1)
            best = min(heuristics, key=lambda h: statistics.fmean(j for j, _ in res[h]))
            base = [j for j, _ in res[best]]
            rows = [(best, f"the best heuristic, `{best}`")] + [(h, f"`{h}`") for h in ("pack+sjf", "pack_wait+sjf") if h != best]
            for name, _ in networks:
                net, _, hold = name.partition("@hold:")
                rows.append((name, f"network `{net}` ({shown[net]} mode)" + (f", holding only where {hold} does" if hold else "")))
            for name, label in rows:
                jct = [j for j, _ in res[name]]
                m, se = mean_sem(jct)
                im, ise = mean_sem([h for _, h in res[name]])
                dm, dse = mean_sem([a - b for a, b in zip(jct, base)])
                diff = "" if name == best else f"{dm:+.3f} ± {dse:.3f}"
                out.append(f"| {g:,} | {label} | {m:.3f} ± {se:.3f} | {diff} | {im:.1f} ± {ise:.1f} |")
    return finish(out, DOC, ROOT, args.print, "idle_philly" if philly else "idle")


if __name__ == "__main__":
    sys.exit(main())
