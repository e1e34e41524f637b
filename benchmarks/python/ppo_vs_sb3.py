"""Training throughput (env steps per second, rollouts plus updates): the C++ PPO
(gpuplace._core.PPO) against sb3-contrib's MaskablePPO with the same settings: SB3's MlpPolicy
network (separate 64-64 tanh MLPs for policy and value; the C++ "flat" architecture), num_envs x
n_steps per rollout, batch size, epochs. Both on one thread (torch.set_num_threads(1); the C++
vector env steps on the calling thread), timed by process CPU time and by the wall clock. With
--rounds R the two trainers take turns R times (after one warm-up iteration each) and the medians
are compared, so that a noisy machine's slow stretches hit both. With --concurrent the two run at
the same time instead, one per core (2 cores needed), each iterating for --seconds per round
between shared start signals: each round's ratio then comes from one and the same stretch of the
machine, whatever it was doing; the two swap cores every round.

    python benchmarks/python/ppo_vs_sb3.py --iterations 3 --rounds 7
    python benchmarks/python/ppo_vs_sb3.py --concurrent --rounds 7 --seconds 4
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time

import numpy as np

import gpuplace
from gpuplace import _core


def make_cxx(scenario, num_envs, n_steps, batch, epochs):
    cfg = {"num_envs": num_envs, "num_steps": n_steps, "epochs": epochs, "minibatches": num_envs * n_steps // batch,
           "total_steps": 10**12, "seed": 1, "threads": 1,
           "network": {"architecture": "flat", "hidden": [64, 64], "value_hidden": [64, 64], "activation": "tanh"}}
    sc = gpuplace.config.load_scenario(scenario)
    trainer = _core.PPO(json.dumps(sc), cfg)
    trainer.iterate()  # warm-up

    def run(iterations):
        for _ in range(iterations):
            trainer.iterate()

    return run


def make_sb3(scenario, num_envs, n_steps, batch, epochs):
    import torch
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import quiet_logger
    from gpuplace.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    venv = SB3VecEnv(scenario, num_envs=num_envs, num_threads=1)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, n_epochs=epochs, seed=1, verbose=0,
                        device="cpu")
    model.set_logger(quiet_logger())  # SB3's default makes a temporary directory per learn() call
    model.learn(num_envs * n_steps)  # warm-up

    def run(iterations):
        model.learn(iterations * num_envs * n_steps, reset_num_timesteps=False)

    return run


def timed(run, iterations, steps_per_iteration):
    """(wall, CPU) env steps per second of `iterations` iterations."""
    t0, c0 = time.perf_counter(), time.process_time()
    run(iterations)
    steps = iterations * steps_per_iteration
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def until(run, seconds, steps_per_iteration):
    """Iterates for at least `seconds` of wall time; (wall, CPU) env steps per second."""
    t0, c0, n = time.perf_counter(), time.process_time(), 0
    while time.perf_counter() - t0 < seconds:
        run(1)
        n += 1
    return n * steps_per_iteration / (time.perf_counter() - t0), n * steps_per_iteration / (time.process_time() - c0)


def _worker(kind, args, cpus, rounds, seconds, barrier, out):
    """Trains on cpus[r % 2] in round r (the two workers get the two cores in turn)."""
    os.sched_setaffinity(0, {cpus[0]})
    run = (make_cxx if kind == "cxx" else make_sb3)(*args)
    per_iteration = args[1] * args[2]
    for r in range(rounds):
        os.sched_setaffinity(0, {cpus[r % 2]})
        barrier.wait()
        out.put((kind, r, until(run, seconds, per_iteration)))


def concurrent(args, rounds, seconds):
    """Both trainers at once, one per core, `rounds` windows of `seconds`; per-round (C++, SB3) rates.
    The trainers swap cores every round, so that a core slower than the other (a busier neighbour
    on the host) slows each of them in half the rounds."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit(f"--concurrent needs 2 cores, this process may use {len(cpus)}")
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(k, args, c, rounds, seconds, barrier, out))
             for k, c in (("cxx", (cpus[0], cpus[1])), ("sb3", (cpus[1], cpus[0])))]
    for p in procs:
        p.start()
    got = {}
    for _ in range(2 * rounds):
        kind, r, rate = out.get()
        got[(kind, r)] = rate
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a benchmark process failed (exit code {p.exitcode})")
    return [(got[("cxx", r)], got[("sb3", r)]) for r in range(rounds)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--num-envs", type=int, default=8)
    ap.add_argument("--n-steps", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=3, help="iterations per trainer and round")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds, each timing the C++ PPO then MaskablePPO (interleaved, against a noisy machine)")
    ap.add_argument("--concurrent", action="store_true",
                    help="run the two at the same time, one per core, in windows of --seconds")
    ap.add_argument("--seconds", type=float, default=4.0, help="with --concurrent: length of a round")
    a = ap.parse_args()
    print(f"gpuplace core: {gpuplace.core_variant} build", flush=True)
    args = (a.scenario, a.num_envs, a.n_steps, a.batch, a.epochs)
    c_rates, s_rates = [], []

    def report(r, c, s_):
        c_rates.append(c)
        s_rates.append(s_)
        print(f"round {r + 1}: C++ PPO (flat 64-64) {c[0]:>9,.0f} steps/s ({c[1]:,.0f} per CPU-s)   "
              f"SB3 MaskablePPO (MlpPolicy) {s_[0]:>7,.0f} steps/s ({s_[1]:,.0f} per CPU-s)   ratio {c[0] / s_[0]:.1f}x",
              flush=True)

    if a.concurrent:
        print(f"concurrent: {a.rounds} rounds of {a.seconds:g} s, one trainer per core, swapping cores every round",
              flush=True)
        for r, (c, s_) in enumerate(concurrent(args, a.rounds, a.seconds)):
            report(r, c, s_)
    else:
        cxx, sb3 = make_cxx(*args), make_sb3(*args)
        per_iteration = a.num_envs * a.n_steps
        for r in range(a.rounds):
            report(r, timed(cxx, a.iterations, per_iteration), timed(sb3, a.iterations, per_iteration))
    med = statistics.median
    cw, cc = med(x[0] for x in c_rates), med(x[1] for x in c_rates)
    sw, scpu = med(x[0] for x in s_rates), med(x[1] for x in s_rates)
    print(f"C++ PPO (flat 64-64)        {cw:>10,.0f} steps/s  {cc:>10,.0f} steps/CPU-s   (median of {a.rounds})")
    print(f"SB3 MaskablePPO (MlpPolicy) {sw:>10,.0f} steps/s  {scpu:>10,.0f} steps/CPU-s")
    per_round = [c[0] / s_[0] for c, s_ in zip(c_rates, s_rates)]
    print(f"ratio: {cw / sw:.1f}x wall, {cc / scpu:.1f}x CPU (medians); "
          f"{max(x[0] for x in c_rates) / max(x[0] for x in s_rates):.1f}x best against best; "
          f"per round {min(per_round):.1f}-{max(per_round):.1f}x, median {med(per_round):.1f}x")


if __name__ == "__main__":
    main()
