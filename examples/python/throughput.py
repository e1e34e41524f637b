#!/usr/bin/env python3
"""Steps per second through Python: one GymnasiumEnv via gymnasium.make (random valid actions) and
the batched C++ VectorEnv behind the SB3 VecEnv and the raw core (uniform random valid actions
drawn with numpy for the whole batch). Prints one line per configuration.

    python examples/python/throughput.py [--scenario default] [--steps 20000] [--envs 64,256]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import gpuplace
from gpuplace.config import make_core_vector_env


def batch_random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform random valid action per row, vectorised (no Python loop over envs)."""
    scores = rng.random(masks.shape) * masks  # invalid actions score 0
    return np.argmax(scores, axis=1).astype(np.int64)


def single_env(env_id_or_scenario: str, steps: int) -> float:
    env = gym.make(env_id_or_scenario) if "/" in env_id_or_scenario else gpuplace.GymnasiumEnv(env_id_or_scenario)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    u = env.unwrapped
    t = time.perf_counter()
    for _ in range(steps):
        a = int(np.argmax(rng.random(u.action_space.n) * u.action_masks()))
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t)


def sb3_vecenv(scenario: str, n: int, steps: int) -> float:
    from gpuplace.sb3 import SB3VecEnv

    venv = SB3VecEnv(scenario, num_envs=n)
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    iters = max(1, steps // n)
    t = time.perf_counter()
    for _ in range(iters):
        venv.step(batch_random_actions(np.stack(venv.env_method("action_masks")), rng))
    return iters * n / (time.perf_counter() - t)


def core_vector(scenario: str, n: int, steps: int, threads: int = 1) -> float:
    v = make_core_vector_env(scenario, num_envs=n, num_threads=threads)
    v.reset(0)
    masks = v.action_masks  # zero-copy view
    rng = np.random.default_rng(0)
    iters = max(1, steps // n)
    t = time.perf_counter()
    for _ in range(iters):
        v.step(batch_random_actions(masks, rng))
    return iters * n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--envs", default="64,256")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    env_id = {"default": "gpuplace/Default-v0", "proximity_drl": "gpuplace/ProximityDRL-v0"}.get(args.scenario, args.scenario)
    print(f"scenario {args.scenario}")
    print(f"  single env via gymnasium.make: {single_env(env_id, args.steps):>12,.0f} steps/s")
    for n in (int(x) for x in args.envs.split(",")):
        try:
            print(f"  SB3 VecEnv, {n:4d} envs:          {sb3_vecenv(args.scenario, n, args.steps * 4):>12,.0f} steps/s")
        except ImportError:
            pass
        print(f"  core VectorEnv, {n:4d} envs:      {core_vector(args.scenario, n, args.steps * 4, args.threads):>12,.0f} steps/s")


if __name__ == "__main__":
    main()
