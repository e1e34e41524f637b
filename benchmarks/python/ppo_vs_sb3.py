"""Training throughput (env steps per second, rollouts plus updates): the C++ PPO
(gpuplace._core.PPO) against sb3-contrib's MaskablePPO with the same settings: SB3's MlpPolicy
network (separate 64-64 tanh MLPs for policy and value; the C++ "flat" architecture), num_envs x
n_steps per rollout, batch size, epochs. Both on one thread (torch.set_num_threads(1); the C++
vector env steps on the calling thread), timed by process CPU time and by the wall clock. With
--rounds R the two trainers take turns R times (after one warm-up iteration each) and the medians
are compared, so that a noisy machine's slow stretches hit both.

    python benchmarks/python/ppo_vs_sb3.py --iterations 3 --rounds 7
"""

from __future__ import annotations

import argparse
import json
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

    from gpuplace.vec_env import GpuPlaceVecEnv

    torch.set_num_threads(1)
    venv = GpuPlaceVecEnv(scenario, num_envs=num_envs, num_threads=1)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, n_epochs=epochs, seed=1, verbose=0,
                        device="cpu")
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
    a = ap.parse_args()
    print(f"gpuplace core: {gpuplace.core_variant} build", flush=True)
    args = (a.scenario, a.num_envs, a.n_steps, a.batch, a.epochs)
    cxx, sb3 = make_cxx(*args), make_sb3(*args)
    per_iteration = a.num_envs * a.n_steps
    c_rates, s_rates = [], []
    for r in range(a.rounds):
        cw, cc = timed(cxx, a.iterations, per_iteration)
        sw, scpu = timed(sb3, a.iterations, per_iteration)
        c_rates.append((cw, cc))
        s_rates.append((sw, scpu))
        print(f"round {r + 1}: C++ PPO (flat 64-64) {cw:>9,.0f} steps/s ({cc:,.0f} per CPU-s)   "
              f"SB3 MaskablePPO (MlpPolicy) {sw:>7,.0f} steps/s ({scpu:,.0f} per CPU-s)   ratio {cw / sw:.1f}x", flush=True)
    med = statistics.median
    cw, cc = med(x[0] for x in c_rates), med(x[1] for x in c_rates)
    sw, scpu = med(x[0] for x in s_rates), med(x[1] for x in s_rates)
    print(f"C++ PPO (flat 64-64)        {cw:>10,.0f} steps/s  {cc:>10,.0f} steps/CPU-s   (median of {a.rounds})")
    print(f"SB3 MaskablePPO (MlpPolicy) {sw:>10,.0f} steps/s  {scpu:>10,.0f} steps/CPU-s")
    print(f"ratio: {cw / sw:.1f}x wall, {cc / scpu:.1f}x CPU (medians); "
          f"{max(x[0] for x in c_rates) / max(x[0] for x in s_rates):.1f}x best against best")


if __name__ == "__main__":
    main()
