#!/usr/bin/env python3
"""Trains sb3-contrib's MaskablePPO on the default scenario through the batched C++ VecEnv, then
evaluates it on held-out seeds next to every heuristic, in the C++ harness's table format.

    python examples/python/train_maskable_ppo.py                      # 100k steps, 10 seeds
    python examples/python/train_maskable_ppo.py --steps 20000 --seeds 5
    python examples/python/train_maskable_ppo.py --placement-reward 1   # denser reward for training
    python examples/python/train_maskable_ppo.py --quick              # a smoke run (CI)

Needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import gpuplace
from gpuplace.evaluation import evaluate_agent, maskable_policy
from gpuplace.sb3 import train_maskable_ppo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default", help="preset, JSON file or JSON text")
    ap.add_argument("--steps", "--timesteps", type=int, default=100_000, help="PPO env steps (--timesteps: the old spelling)")
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--n-steps", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=10, help="held-out evaluation seeds (1000000 + i)")
    ap.add_argument("--threads", type=int, default=1, help="C++ threads stepping the envs")
    ap.add_argument("--out", default="runs/example_maskable_ppo")
    ap.add_argument("--placement-reward", type=float, default=0.0,
                    help="train with Proximity-DRL's per-placement reward added at this weight (evaluation "
                         "always reports the scenario's metrics)")
    ap.add_argument("--quick", action="store_true", help="2048 steps, 2 seeds: checks that everything runs")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.seeds, args.num_envs, args.n_steps = 2048, 2, 8, 64

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    train_scenario = gpuplace.load_scenario(args.scenario)
    if args.placement_reward:
        train_scenario = gpuplace.load_scenario(train_scenario, {"reward": {"placement": args.placement_reward}})
    t0 = time.perf_counter()
    model, cb = train_maskable_ppo(
        train_scenario,
        total_timesteps=args.steps,
        num_envs=args.num_envs,
        n_steps=args.n_steps,
        seed=args.seed,
        num_threads=args.threads,
        log_csv=os.path.join(args.out, "episodes.csv"),
        show_progress=not args.quick,
    )
    train_s = time.perf_counter() - t0
    model.save(os.path.join(args.out, "maskable_ppo.zip"))
    print(f"trained {model.num_timesteps} steps in {train_s:.0f} s ({model.num_timesteps / train_s:,.0f} steps/s), "
          f"{len(cb.rows)} training episodes")

    seeds = gpuplace.held_out_seeds(args.seeds)
    report = gpuplace.evaluate(args.scenario, gpuplace.heuristic_names(), seeds)  # C++, every heuristic
    evaluate_agent(maskable_policy(model), args.scenario, seeds, name="maskable_ppo", report=report)
    print(f"scenario {report.scenario}")
    print(report.table(), end="")
    print("\n" + report.paired_table("maskable_ppo"), end="")  # on the same seeds: mean difference, wins
    with open(os.path.join(args.out, "eval.csv"), "w") as f:
        f.write(report.csv())
    print(f"results in {args.out}/ (eval.csv, episodes.csv, maskable_ppo.zip)")


if __name__ == "__main__":
    main()
