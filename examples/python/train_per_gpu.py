#!/usr/bin/env python3
"""MaskablePPO with gpuplace's per-GPU policy, step by step: the same network as the C++ reference
PPO (gpuplace.sb3.PerGpuPolicy), a warm start that clones a C++ heuristic, PPO with the C++
trainer's settings, then the held-out table next to every heuristic, and the policy exported as a
C++ checkpoint. (`python -m gpuplace train-sb3` does the same, with restarts' selection on
validation seeds.)

    python examples/python/train_per_gpu.py                     # 400k cloning + 600k PPO steps, ~10 min
    python examples/python/train_per_gpu.py --teacher pack+sjf  # imitate pack under the sjf queue policy
    python examples/python/train_per_gpu.py --quick             # a smoke run

Needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from sb3_contrib import MaskablePPO

import gpuplace
from gpuplace.evaluation import evaluate_agent, maskable_policy
from gpuplace.sb3 import (PerGpuPolicy, SB3VecEnv, make_callback, per_gpu_ppo_kwargs, pretrain, save_cpp_checkpoint,
                          teacher_scenario, wrap_vec_env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--teacher", default="pack", help='heuristic to clone, e.g. "pack" or "pack+sjf"')
    ap.add_argument("--imitation-steps", type=int, default=400_000)
    ap.add_argument("--steps", "--timesteps", type=int, default=600_000,
                    help="PPO env steps (value warm-up included; --timesteps: the old spelling)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=20, help="held-out evaluation seeds")
    ap.add_argument("--out", default="runs/example_per_gpu")
    ap.add_argument("--quick", action="store_true", help="4k + 4k steps, 3 seeds: checks that everything runs")
    args = ap.parse_args()
    if args.quick:
        args.imitation_steps, args.steps, args.seeds = 4096, 4096, 3

    torch.set_num_threads(1)  # small batches: one thread is fastest
    os.makedirs(args.out, exist_ok=True)
    # a teacher "X+Q" acts under queue policy Q, an env setting: the env (and the evaluation) run under it
    scenario = teacher_scenario(args.scenario, args.teacher)
    venv = wrap_vec_env(SB3VecEnv(scenario, num_envs=16))  # rewards scaled like the C++ trainer's
    model = MaskablePPO(PerGpuPolicy, venv, **per_gpu_ppo_kwargs(), seed=args.seed, device="cpu")

    t0 = time.perf_counter()
    warm = pretrain(model, args.teacher, args.imitation_steps, value_warmup=1 if args.quick else 10,
                    show_progress=not args.quick)
    print(f"cloned {args.teacher}: agreement {warm['agreement']:.3f} after {warm['imitation_steps']} env steps; "
          f"value warm-up {warm['warmup_steps']} steps")
    # reset_num_timesteps=False: the learning rate anneals over the whole budget, warm-up included
    rest = args.steps - warm["warmup_steps"]
    model.learn(rest, reset_num_timesteps=False, callback=make_callback(show_progress=not args.quick, total=rest))
    seconds = time.perf_counter() - t0
    steps = warm["imitation_steps"] + model.num_timesteps
    print(f"trained {steps} env steps in {seconds:.0f} s ({steps / seconds:,.0f} env steps/s)")

    seeds = gpuplace.held_out_seeds(args.seeds)
    names = gpuplace.heuristic_names() + [f"{h}+sjf" for h in gpuplace.heuristic_names()]
    report = gpuplace.evaluate(args.scenario, names, seeds)  # in C++, each under its queue policy
    evaluate_agent(maskable_policy(model), scenario, seeds, name="per_gpu_ppo", report=report)
    print(report.table(), end="")
    print("\n" + report.paired_table("per_gpu_ppo"), end="")

    model.save(os.path.join(args.out, "maskable_ppo.zip"))
    save_cpp_checkpoint(model, os.path.join(args.out, "ppo.json"))  # gpuplace-train --load reads it
    print(f"model and C++ checkpoint in {args.out}/")


if __name__ == "__main__":
    main()
