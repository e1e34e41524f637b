"""Env steps per second of gpuplace's RLlib PPO with 0, 1, 2, ... env runners (docs/scale-out.md).

For each number of env runners: build the PPO algorithm (gpuplace.rllib.ppo_config), run one
warm-up iteration, then time ``--iterations`` iterations. Reports two rates: sampling only (the
env runners stepping envs and the RLModule, ``synchronous_parallel_sample`` as PPO calls it) and
a whole training iteration (sampling plus the PPO update on the learner).

    python examples/python/rllib_scale_out.py --runners 0,1,2 --iterations 3
    python examples/python/rllib_scale_out.py --address auto --runners 0,4,8   # on a Ray cluster
"""

from __future__ import annotations

import argparse
import time

import ray
from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

from gpuplace.rllib import ppo_config
from gpuplace.rllib.train import set_torch_threads


def measure(scenario: str, runners: int, envs: int, batch: int, iterations: int) -> dict:
    hp = {"train_batch_size": batch, "minibatch_size": min(256, batch), "n_epochs": 4}
    algo = ppo_config(scenario, num_env_runners=runners, num_envs_per_env_runner=envs, hyperparameters=hp).build_algo()
    try:
        algo.train()  # warm-up: actors started, first episodes reset
        t0 = time.perf_counter()
        steps = 0
        for _ in range(iterations):
            eps = synchronous_parallel_sample(worker_set=algo.env_runner_group, max_env_steps=batch,
                                              _uses_new_env_runners=True)
            steps += sum(e.env_steps() for e in eps)
        sample_rate = steps / (time.perf_counter() - t0)
        before = algo.train()["num_env_steps_sampled_lifetime"]
        t0 = time.perf_counter()
        for _ in range(iterations):
            res = algo.train()
        train_rate = (res["num_env_steps_sampled_lifetime"] - before) / (time.perf_counter() - t0)
        return {"runners": runners, "sample_steps_per_s": sample_rate, "train_steps_per_s": train_rate}
    finally:
        algo.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--runners", default="0,1,2", help="comma-separated numbers of env runners")
    ap.add_argument("--envs-per-runner", type=int, default=8)
    ap.add_argument("--batch", type=int, default=4000, help="train batch size (env steps per iteration)")
    ap.add_argument("--iterations", type=int, default=3, help="timed iterations per setting")
    ap.add_argument("--address", help="Ray cluster address (default: local Ray)")
    ap.add_argument("--num-cpus", type=int, help="local Ray only: CPUs Ray may use (default: all)")
    args = ap.parse_args()
    set_torch_threads(1)  # the driver samples (0 runners) and learns with one thread, as each runner
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    print("| env runners | envs per runner | sampling env steps/s | training env steps/s |")
    print("|---:|---:|---:|---:|")
    for r in (int(x) for x in args.runners.split(",")):
        m = measure(args.scenario, r, args.envs_per_runner, args.batch, args.iterations)
        print(f"| {r} | {args.envs_per_runner} | {m['sample_steps_per_s']:,.0f} | {m['train_steps_per_s']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
