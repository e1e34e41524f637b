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
    if checkpoint:  # the file is written after the training: its folder is checked before
        from ._args import check_output_file

        os.makedirs(os.path.dirname(os.path.abspath(checkpoint)), exist_ok=True)
        check_output_file(checkpoint, "train: checkpoint")
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


def load_model(name: str):
    """A trained network: a reference policy shipped with gpuplace by name (``_core.model_names()``:
    "default", "philly", "proximity_drl"; docs/ppo.md has their held-out tables) or a checkpoint file.
    The network acts greedily with ``.act(env)`` and in ``_core.evaluate_network``; a per_gpu network
    acts on clusters of any size."""
    _require()
    path = os.fspath(name)
    names = list(_core.model_names())
    if path not in names and not os.path.isfile(path):
        what = "a folder, not a checkpoint file" if os.path.isdir(path) else "no such file"
        raise _core.CheckpointError(f'load_model("{path}"): not a reference model (known: {", ".join(names)}) and {what}')
    return _core.load_checkpoint(_core.model_path(path))


def run(
    config: Mapping[str, Any] | str | None = None,
    out: str = "runs/cpp_ppo",
    resume: bool = False,
    parallel: int | None = None,
    show_progress: bool = True,
) -> dict:
    """A training run as ``gpuplace-train`` makes it (include/gpuplace/rl/run.hpp): ``config`` (a dict
    or JSON text, e.g. ``{"scenario": "proximity_drl", "ppo": {"total_steps": 100000}}``) merged over
    the default training config (``_core.default_run_config()``); restarts, greedy validation, the
    best network kept in ``out/ppo.json``, and every state saved in ``out``.

    ``resume=True`` continues the run in ``out`` from its saved states (with ``config`` None, the run's
    own config): the final ``ppo.json`` is byte for byte the one an uninterrupted run writes. Ctrl-C
    stops after the current iteration with every state saved, then raises KeyboardInterrupt.
    Returns a dict: complete, kept (the kept training seed), checkpoint, seconds, env_steps, restarts.
    """
    _require()
    if parallel is None:
        parallel = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    os.makedirs(out, exist_ok=True)
    if resume:
        check_saved_state(out)
    if not show_progress:
        return _core.train_run(config, out, resume, parallel)
    cfg = _core.default_run_config()
    if isinstance(config, str):
        config = _core.run_recipe(config) if config in _core.run_recipe_names() else json.loads(config)
    if config:
        cfg = _merge(cfg, config)
    ppo = cfg.get("ppo", {})
    per = ppo.get("num_envs", 16) * ppo.get("num_steps", 128)
    its = -(-ppo.get("total_steps", 300_000) // per)
    if ppo.get("teacher") and ppo.get("imitation_steps", 0) > 0:
        its += -(-ppo["imitation_steps"] // per)
    total = its * int(cfg.get("restarts", 1))
    with progress_bar(total=total, desc="C++ PPO (iterations)") as bar:
        return _core.train_run(config, out, resume, parallel, print=lambda line: bar.write(line.rstrip("\n")),
                               on_iteration=lambda n: bar.update(1))


def check_saved_state(out: str) -> None:
    """Before a resume: the run in ``out`` (its run.json) must have a saved training state
    (``state.bin`` or ``state.prev.bin``, in ``out`` for one restart, else in ``out/seed_<seed>`` for
    each) -- one whose states were deleted would start from zero looking like a continuation. A
    :class:`gpuplace.CheckpointError` naming the missing file otherwise (resume=False starts afresh).
    A folder without run.json is the core's to refuse."""
    from ._files import check_input_file

    run_file = os.path.join(out, "run.json")
    if not os.path.exists(run_file):
        return
    try:
        with open(check_input_file(run_file, "run file"), encoding="utf-8") as f:
            config = json.load(f).get("config", {})
        restarts, seed = int(config.get("restarts", 1)), int(config.get("ppo", {}).get("seed", 0))
    except (ValueError, AttributeError, TypeError):
        return  # an unreadable run file: the core says what is wrong with it
    dirs = [out] if restarts == 1 else [os.path.join(out, f"seed_{seed + r}") for r in range(restarts)]
    if not any(os.path.exists(os.path.join(d, n)) for d in dirs for n in ("state.bin", "state.prev.bin")):
        raise _core.CheckpointError(
            f"resume: the run in {out} has no saved training state: {os.path.join(dirs[0], 'state.bin')} does not "
            "exist (deleted, or the run stopped before its first saved state); start the run afresh without resume "
            "(--resume) to train from zero")


def _merge(base: dict, over: Mapping[str, Any]) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) else v
    return out
