"""Training throughput (env steps per second, rollouts plus updates): the C++ PPO
(gpuplace._core.PPO) against sb3-contrib's MaskablePPO with the same settings: SB3's MlpPolicy
network (separate 64-64 tanh MLPs for policy and value; the C++ "flat" architecture), num_envs x
n_steps per rollout, batch size, epochs. Both on one thread (torch.set_num_threads(1); the C++
vector env steps on the calling thread), timed by process CPU time and by the wall clock.

    python benchmarks/python/ppo_vs_sb3.py --iterations 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import gpuplace
from gpuplace import _core


def run_cxx(scenario, num_envs, n_steps, batch, epochs, iterations):
    cfg = {"num_envs": num_envs, "num_steps": n_steps, "epochs": epochs, "minibatches": num_envs * n_steps // batch,
           "total_steps": num_envs * n_steps * (iterations + 1), "seed": 1, "threads": 1,
           "network": {"architecture": "flat", "hidden": [64, 64], "value_hidden": [64, 64], "activation": "tanh"}}
    sc = gpuplace.config.load_scenario(scenario)
    trainer = _core.PPO(__import__("json").dumps(sc), cfg)
    trainer.iterate()  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(iterations):
        trainer.iterate()
    steps = iterations * num_envs * n_steps
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def run_sb3(scenario, num_envs, n_steps, batch, epochs, iterations):
    import torch
    from sb3_contrib import MaskablePPO

    from gpuplace.vec_env import GpuPlaceVecEnv

    torch.set_num_threads(1)
    venv = GpuPlaceVecEnv(scenario, num_envs=num_envs, num_threads=1)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, n_epochs=epochs, seed=1, verbose=0,
                        device="cpu")
    model.learn(num_envs * n_steps)  # warm-up
    steps = iterations * num_envs * n_steps
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--num-envs", type=int, default=8)
    ap.add_argument("--n-steps", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=3)
    a = ap.parse_args()
    args = (a.scenario, a.num_envs, a.n_steps, a.batch, a.epochs, a.iterations)
    cw, cc = run_cxx(*args)
    print(f"C++ PPO (flat 64-64)        {cw:>10,.0f} steps/s  {cc:>10,.0f} steps/CPU-s", flush=True)
    sw, scpu = run_sb3(*args)
    print(f"SB3 MaskablePPO (MlpPolicy) {sw:>10,.0f} steps/s  {scpu:>10,.0f} steps/CPU-s")
    print(f"ratio: {cw / sw:.1f}x wall, {cc / scpu:.1f}x CPU")


if __name__ == "__main__":
    main()
