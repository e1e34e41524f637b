"""Training sb3-contrib's MaskablePPO on the batched VecEnv (needs the [sb3] extra)."""

from __future__ import annotations

import csv
import os
from typing import Any

import numpy as np

from .config import ScenarioLike, load_scenario
from .progress import progress_bar


def _require_sb3():
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(
            "MaskablePPO needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
        ) from e


def quiet_logger(verbose: int = 0):
    """An SB3 logger that writes nowhere but the standard output (when ``verbose``): SB3's default
    logger makes a new empty ``SB3-<date>`` directory in the temporary directory on every
    ``learn()`` call without a tensorboard log. Pass it to ``model.set_logger()``."""
    _require_sb3()
    import sys

    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose else [])


def make_callback(log_csv: str | None = None, show_progress: bool = True, total: int | None = None):
    """A callback that records every finished episode (timesteps, return, length, avg_jct,
    avg_comm_cost) from the VecEnv's infos, optionally into a CSV (the learning curve), and shows a
    progress bar."""
    _require_sb3()
    from stable_baselines3.common.callbacks import BaseCallback

    class EpisodeLog(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rows: list[dict[str, Any]] = []
            self._bar = None
            self._file = None
            self._writer = None

        def _on_training_start(self) -> None:
            self._bar = progress_bar(total=total, desc="MaskablePPO", disable=not show_progress)
            if log_csv:
                os.makedirs(os.path.dirname(os.path.abspath(log_csv)), exist_ok=True)
                self._file = open(log_csv, "w", newline="")
                self._writer = csv.DictWriter(
                    self._file, fieldnames=["timesteps", "episode_return", "length", "avg_jct", "avg_comm_cost"]
                )
                self._writer.writeheader()

        def _on_step(self) -> bool:
            n = self.training_env.num_envs
            self._bar.update(n)
            for info in self.locals.get("infos", ()):
                m = info.get("metrics")
                if m is None:
                    continue
                row = {
                    "timesteps": self.num_timesteps,
                    "episode_return": m["episode_return"] if "episode_return" in m else info["episode"]["r"],
                    "length": info["episode"]["l"],
                    "avg_jct": m["avg_jct"],
                    "avg_comm_cost": m["avg_comm_cost"],
                }
                self.rows.append(row)
                if self._writer:
                    self._writer.writerow(row)
            return True

        def _on_training_end(self) -> None:
            if self._bar is not None:
                self._bar.close()
            if self._file:
                self._file.close()

    return EpisodeLog()


def train_maskable_ppo(
    scenario: ScenarioLike = "default",
    total_timesteps: int = 50_000,
    num_envs: int = 16,
    seed: int = 0,
    num_threads: int = 1,
    n_steps: int = 128,
    batch_size: int = 256,
    learning_rate: float = 3e-4,
    ent_coef: float = 0.01,
    net_arch=(128, 128),
    log_csv: str | None = None,
    show_progress: bool = True,
    verbose: int = 0,
    **ppo_kwargs,
):
    """Trains MaskablePPO on :class:`GpuPlaceVecEnv`; returns (model, callback) where
    ``callback.rows`` holds the finished training episodes."""
    _require_sb3()
    import torch
    from sb3_contrib import MaskablePPO

    from .vec_env import GpuPlaceVecEnv

    torch.set_num_threads(1)
    venv = GpuPlaceVecEnv(load_scenario(scenario), num_envs=num_envs, num_threads=num_threads)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=batch_size,
        learning_rate=learning_rate,
        ent_coef=ent_coef,
        policy_kwargs={"net_arch": list(net_arch)},
        seed=seed,
        verbose=verbose,
        device="cpu",
        **ppo_kwargs,
    )
    if ppo_kwargs.get("tensorboard_log") is None:
        model.set_logger(quiet_logger(verbose))
    cb = make_callback(log_csv, show_progress, total_timesteps)
    model.learn(total_timesteps=total_timesteps, callback=cb)
    return model, cb
