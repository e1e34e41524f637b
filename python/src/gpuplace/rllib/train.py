"""PPO on RLlib with gpuplace's env and RLModule; Tune sweeps over its hyperparameters.

    config = ppo_config("default", num_env_runners=2, seed=1)    # an RLlib PPOConfig
    result = train("default", iterations=20, out="runs/rllib")   # + learning CSV, checkpoint
    rows = sweep("default", {"lr": [3e-4, 1e-3]}, seeds=[1, 2], iterations=5, out="runs/tune")
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import signal
import threading
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import ray
from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from .. import _core
from ..config import ScenarioLike, load_scenario
from ..evaluation import evaluate_agent
from .env import RLlibEnv, make_env
from .module import PerGpuRLModule, module_config

#: The name the env creator is registered under (``tune.register_env``).
ENV_NAME = "gpuplace"
#: Validation episodes use seeds 2000000 + i (held-out evaluation uses 1000000 + i), as the SB3
#: and C++ trainers do.
VALIDATION_SEED_BASE = 2_000_000

#: Sweepable hyperparameters: the CLI's name (SB3's) -> PPOConfig.training() keyword.
HYPERPARAMETERS = {
    "lr": "lr",
    "ent_coef": "entropy_coeff",
    "gamma": "gamma",
    "gae_lambda": "lambda_",
    "clip_range": "clip_param",
    "vf_coef": "vf_loss_coeff",
    "n_epochs": "num_epochs",
    "minibatch_size": "minibatch_size",
    "train_batch_size": "train_batch_size_per_learner",
}

#: Defaults of the PPO run (the rest are RLlib's). gamma 1: DEFER takes no simulated time, so
#: with gamma < 1 deferring looks good (as in the C++ and SB3 recipes).
DEFAULTS = {"lr": 3e-4, "ent_coef": 0.01, "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2, "vf_coef": 0.5,
            "n_epochs": 4, "minibatch_size": 256, "train_batch_size": 2048}


def set_torch_threads(n: int) -> None:
    """Torch threads of this process (the driver's or a trial's: its local env runner and learner).
    Ray starts its env runner actors with one thread each; the driver would otherwise take torch's
    default (every core), and on a loaded 2-core machine that made sampling 6x and a PPO update
    10x slower than one thread (docs/scale-out.md). 0 leaves torch's setting."""
    import torch

    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(int(n))


def register(name: str = ENV_NAME) -> str:
    """Registers gpuplace's env creator with Ray Tune under ``name`` (idempotent); returns the name."""
    tune.register_env(name, make_env)
    return name


def _training_kwargs(hp: Mapping[str, Any]) -> dict:
    unknown = sorted(set(hp) - set(HYPERPARAMETERS))
    if unknown:
        raise _core.ConfigError(f"unknown hyperparameter(s) {unknown} (known: {', '.join(HYPERPARAMETERS)})")
    kw = {HYPERPARAMETERS[k]: v for k, v in {**DEFAULTS, **hp}.items()}
    for k in ("num_epochs", "minibatch_size", "train_batch_size_per_learner"):
        kw[k] = int(kw[k])
    return kw


def ppo_config(
    scenario: ScenarioLike = "default",
    *,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 8,
    seed: int = 1,
    hyperparameters: Mapping[str, Any] | None = None,
    network: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> PPOConfig:
    """The RLlib PPOConfig of a gpuplace run: the registered env (its config carries the
    scenario), the batched entry point with ``num_envs_per_env_runner`` envs per runner (env
    runner w's env i plays episodes ``episode_seed(seed + w, i, k)``), :class:`PerGpuRLModule`
    and the hyperparameters (SB3 names, see ``HYPERPARAMETERS``; defaults ``DEFAULTS``)."""
    sc = load_scenario(scenario, overrides)
    register()
    probe = RLlibEnv(sc)
    kw = _training_kwargs(dict(hyperparameters or {}))
    # Each runner's rollout fragment: train_batch_size split over the runners and their envs.
    runners = max(1, int(num_env_runners))
    fragment = max(1, math.ceil(kw["train_batch_size_per_learner"] / (runners * num_envs_per_env_runner)))
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"scenario": sc})
        .env_runners(num_env_runners=int(num_env_runners), num_envs_per_env_runner=int(num_envs_per_env_runner),
                     gym_env_vectorize_mode="vector_entry_point", rollout_fragment_length=fragment,
                     num_cpus_per_env_runner=1)
        .training(**kw)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=PerGpuRLModule,
                                               model_config=module_config(probe.observation_space, network)))
        .debugging(seed=int(seed), log_level="ERROR")
    )


def module_of(algo) -> PerGpuRLModule:
    """The trained RLModule (the learner's weights) of an RLlib Algorithm."""
    module = algo.get_module()
    weights = algo.learner_group.get_weights()
    module.set_state(weights.get("default_policy", weights))
    return module


def greedy_policy(module) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A batch policy for :func:`gpuplace.evaluate_agent`: the module acting greedily (1 torch thread)."""
    import torch

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return module.greedy_actions(obs, masks)
        finally:
            torch.set_num_threads(old)

    return act


def validation_jct(module, scenario: ScenarioLike, seeds: int = 8) -> float:
    """Mean JCT (seconds) of the greedy module on validation seeds 2000000 + i."""
    sd = list(range(VALIDATION_SEED_BASE, VALIDATION_SEED_BASE + int(seeds)))
    rep = evaluate_agent(greedy_policy(module), scenario, sd, name="rllib_ppo")
    return float(rep.summary("rllib_ppo", "avg_jct")[0])


def _row(it: int, result: Mapping[str, Any], seconds: float) -> dict:
    er = result.get("env_runners", {})
    return {
        "iteration": it,
        "env_steps": int(result.get("num_env_steps_sampled_lifetime", er.get("num_env_steps_sampled_lifetime", 0))),
        "episodes": int(er.get("num_episodes_lifetime", 0)),
        "episode_return_mean": float(er.get("episode_return_mean", float("nan"))),
        "episode_len_mean": float(er.get("episode_len_mean", float("nan"))),
        "seconds": round(seconds, 3),
    }


def train(
    scenario: ScenarioLike = "default",
    *,
    iterations: int = 10,
    out: str | os.PathLike = "runs/rllib",
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 8,
    seed: int = 1,
    hyperparameters: Mapping[str, Any] | None = None,
    network: Mapping[str, Any] | None = None,
    on_iteration: Callable[[dict], None] | None = None,
    torch_threads: int = 1,
) -> dict:
    """Trains PPO for ``iterations`` RLlib iterations (Ray must be initialised: ``ray.init()``
    or ``ray.init(address="auto")``). Writes ``out/progress.csv`` (one row per iteration) and an
    RLlib checkpoint in ``out/checkpoint``; returns ``{"algo", "module", "rows", "checkpoint"}``.
    ``torch_threads``: this process's torch threads (see :func:`set_torch_threads`)."""
    out = os.path.abspath(os.fspath(out))
    os.makedirs(out, exist_ok=True)
    set_torch_threads(torch_threads)
    config = ppo_config(scenario, num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner,
                        seed=seed, hyperparameters=hyperparameters, network=network)
    algo = config.build_algo()
    rows = []
    start = time.perf_counter()
    path = os.path.join(out, "progress.csv")
    with open(path, "w", newline="") as f:
        w = None
        for it in range(1, int(iterations) + 1):
            res = algo.train()
            row = _row(it, res, time.perf_counter() - start)
            rows.append(row)
            if w is None:
                w = csv.DictWriter(f, fieldnames=list(row))
                w.writeheader()
            w.writerow(row)
            f.flush()
            if on_iteration:
                on_iteration(row)
    ckpt = algo.save_to_path(os.path.join(out, "checkpoint"))
    return {"algo": algo, "module": module_of(algo), "rows": rows, "checkpoint": str(ckpt), "progress_csv": path}


def parse_grid(items: Sequence[str]) -> dict[str, list]:
    """``["lr=0.0003,0.001", "ent_coef=0,0.01"]`` -> ``{"lr": [0.0003, 0.001], "ent_coef": [0.0, 0.01]}``."""
    grid: dict[str, list] = {}
    for item in items:
        name, eq, values = item.partition("=")
        name = name.strip()
        if not eq or not name or not values.strip():
            raise _core.ConfigError(f'--grid "{item}": expected NAME=V1,V2,... (e.g. lr=0.0003,0.001)')
        if name not in HYPERPARAMETERS:
            raise _core.ConfigError(f'--grid "{item}": unknown hyperparameter "{name}" (known: {", ".join(HYPERPARAMETERS)})')
        if name in grid:
            raise _core.ConfigError(f'--grid "{item}": {name} given twice')
        vals = []
        for v in values.split(","):
            try:
                x = float(v)
            except ValueError:
                raise _core.ConfigError(f'--grid "{item}": "{v}" is not a number') from None
            if not math.isfinite(x):
                raise _core.ConfigError(f'--grid "{item}": "{v}" is not a finite number')
            vals.append(x)
        grid[name] = vals
    return grid


def _trial(config: dict) -> None:
    """One Tune trial: train, report every iteration, then the validation JCT."""
    hp = {k: config[k] for k in HYPERPARAMETERS if k in config}
    set_torch_threads(config["torch_threads"])
    algo = ppo_config(config["scenario"], num_env_runners=config["num_env_runners"],
                      num_envs_per_env_runner=config["num_envs_per_env_runner"], seed=config["seed"],
                      hyperparameters=hp).build_algo()
    row: dict = {}
    try:
        for it in range(1, config["iterations"] + 1):
            row = _row(it, algo.train(), 0.0)
            if it < config["iterations"]:
                tune.report({**row, "val_jct_h": float("nan")})
        jct = validation_jct(module_of(algo), config["scenario"], config["validation_seeds"])
        tune.report({**row, "val_jct_h": jct / 3600.0})
    finally:
        algo.stop()


def sweep(
    scenario: ScenarioLike = "default",
    grid: Mapping[str, Sequence[float]] | None = None,
    *,
    seeds: Sequence[int] = (1,),
    iterations: int = 5,
    out: str | os.PathLike = "runs/rllib_tune",
    validation_seeds: int = 8,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 8,
    max_concurrent_trials: int = 0,
    torch_threads: int = 1,
) -> list[dict]:
    """A Tune grid sweep: every combination of ``grid`` values times every training seed, each
    trial PPO for ``iterations`` iterations then its greedy module's mean JCT on validation seeds.
    Writes ``out/results.csv`` (one row per trial, sorted by validation JCT) and returns the rows."""
    grid = {k: list(v) for k, v in (grid or {}).items()}
    _training_kwargs({k: v[0] for k, v in grid.items()})  # names checked before Ray starts anything
    out = os.path.abspath(os.fspath(out))
    os.makedirs(out, exist_ok=True)
    sc = load_scenario(scenario)
    space = {k: tune.grid_search(v) for k, v in grid.items()}
    space.update(scenario=sc, seed=tune.grid_search([int(s) for s in seeds]), iterations=int(iterations),
                 validation_seeds=int(validation_seeds), num_env_runners=int(num_env_runners),
                 num_envs_per_env_runner=int(num_envs_per_env_runner), torch_threads=int(torch_threads))
    cpus = 1 + int(num_env_runners)
    tuner = tune.Tuner(
        tune.with_resources(_trial, {"cpu": cpus}),
        param_space=space,
        tune_config=tune.TuneConfig(max_concurrent_trials=int(max_concurrent_trials) or None),
        run_config=tune.RunConfig(name="sweep", storage_path=out, verbose=0),
    )
    # Tune installs its own SIGINT handler and leaves it behind; the process's Ctrl-C must raise
    # KeyboardInterrupt again once the sweep is over.
    previous = signal.getsignal(signal.SIGINT)
    try:
        results = tuner.fit()
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)
    rows = []
    for r in results:
        if r.error:
            raise RuntimeError(f"Tune trial {r.path} failed: {r.error}")
        m = r.metrics
        cfg = r.config
        row = {k: cfg[k] for k in grid}
        row.update(seed=cfg["seed"], val_jct_h=round(float(m["val_jct_h"]), 6),
                   episode_return_mean=float(m.get("episode_return_mean", float("nan"))),
                   env_steps=int(m.get("env_steps", 0)), trial=os.path.basename(r.path))
        rows.append(row)
    rows.sort(key=lambda r: r["val_jct_h"])
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def config_means(rows: Sequence[Mapping[str, Any]], params: Sequence[str]) -> list[dict]:
    """Per hyperparameter combination: the mean and the standard error of the validation JCT over
    its seeds, best first."""
    out = []
    key = lambda r: tuple(r[p] for p in params)  # noqa: E731
    for k, group in itertools.groupby(sorted(rows, key=key), key=key):
        v = np.array([g["val_jct_h"] for g in group], dtype=float)
        se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")
        out.append({**dict(zip(params, k)), "seeds": len(v), "val_jct_h_mean": float(v.mean()), "val_jct_h_se": se})
    return sorted(out, key=lambda r: r["val_jct_h_mean"])
