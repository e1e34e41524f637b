"""The reference C++ PPO from Python (available when the extension was built with
include/gpuplace/rl/; ``gpuplace._core.has_ppo`` says)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any, Mapping

from . import _core
from .config import ScenarioLike, load_scenario
from .progress import progress_bar


def _require():
    if not getattr(_core, "has_ppo", False):
        raise ImportError("this build of gpuplace._core has no C++ PPO (include/gpuplace/rl/ was not there when it was built)")


def train(
    scenario: ScenarioLike = "default",
    config: Mapping[str, Any] | None = None,
    checkpoint: str | None = None,
    log_csv: str | None = None,
    show_progress: bool = True,
):
    """Trains the C++ PPO; returns (trainer, list of per-iteration statistics). ``config`` holds
    PPO hyperparameters (total_steps, num_envs, num_steps, learning_rate, seed, network, ...)."""
    _require()
    sc = load_scenario(scenario)
    trainer = _core.PPO(sc, dict(config or {}))
    stats = []
    f = writer = None
    if log_csv:
        os.makedirs(os.path.dirname(os.path.abspath(log_csv)), exist_ok=True)
        f = open(log_csv, "w", newline="")
    try:
        with progress_bar(total=trainer.total_iterations, desc="C++ PPO", disable=not show_progress) as bar:
            while not trainer.done:
                st = trainer.iterate()
                stats.append(st)
                if f is not None:
                    if writer is None:
                        writer = csv.DictWriter(f, fieldnames=["timesteps", "episode_return", *st.keys()])
                        writer.writeheader()
                    writer.writerow({"timesteps": st["env_steps"], "episode_return": st["mean_return"], **st})
                bar.update(1)
    finally:
        if f is not None:
            f.close()
    if checkpoint:
        os.makedirs(os.path.dirname(os.path.abspath(checkpoint)), exist_ok=True)
        trainer.save(checkpoint)
    return trainer, stats


def train_cli(args) -> int:
    _require()
    _core.keep_freed_memory()  # a program's choice, not the library's (include/gpuplace/rl/memory.hpp)
    cfg = {"total_steps": args.timesteps, "num_envs": args.num_envs, "seed": args.seed, "threads": args.threads}
    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "ppo.json")
    log = os.path.join(args.out, "iterations.csv")
    trainer, stats = train(args.scenario, cfg, checkpoint=ckpt, log_csv=log, show_progress=not args.quiet)
    print(f"trained {trainer.env_steps} steps in {trainer.iterations} iterations; checkpoint {ckpt}, curve {log}")
    if args.eval_seeds > 0:
        from .cli import _policies, _write_report

        sc = load_scenario(args.scenario)
        seeds = list(_core.held_out_seeds(args.eval_seeds))
        rep = _core.evaluate(sc, _policies(args.policies), seeds, 1)
        net = _core.load_checkpoint(ckpt)
        r = _core.evaluate_network(sc, net, seeds, "ppo", 1)
        rep.add("ppo", r.per_seed("ppo"), r.returns("ppo"))
        _write_report(rep, args)
    return 0
