"""SB3 callbacks and loggers: a progress bar, selection on validation seeds, CSV and TensorBoard logs."""

from __future__ import annotations

import copy
import csv
import math
import os
from typing import Any

try:
    from stable_baselines3.common.callbacks import BaseCallback
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from ..config import ScenarioLike, load_scenario
from .._files import atomic_open
from ..progress import progress_bar


#: Episode seeds the validation of :func:`train_per_gpu` uses: 2000000 + i, disjoint from the
#: held-out seeds (1000000 + i), as gpuplace-train's.
VALIDATION_SEED_BASE = 2_000_000



class ProgressBar(BaseCallback):
    """A tqdm progress bar over the env steps of ``model.learn()``:
    ``model.learn(100_000, callback=ProgressBar())``. It works with the packages gpuplace installs
    (SB3's own ``progress_bar=True`` also needs rich). ``total`` defaults to the steps this
    ``learn()`` call makes."""

    def __init__(self, total: int | None = None, desc: str = "MaskablePPO", show: bool = True):
        super().__init__()
        self._total, self._desc, self._show, self._bar = total, desc, show, None

    def _on_training_start(self) -> None:
        total = self._total
        if total is None:
            total = max(0, int(self.locals.get("total_timesteps", 0)) - int(self.model.num_timesteps))
        self._bar = progress_bar(total=total, desc=self._desc, disable=not self._show)

    def _on_step(self) -> bool:
        self._bar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        self._bar.close()


class KeepBestOnValidation(BaseCallback):
    """Evaluates the greedy policy on validation seeds every ``every`` PPO iterations (and at the
    start and the end of training) and keeps the weights with the lowest mean JCT, as
    gpuplace-train does; :meth:`restore_best` puts them back into the policy."""

    def __init__(self, scenario: ScenarioLike, seeds: int | list[int] = 16, every: int = 5, log: list | None = None):
        super().__init__()
        self.scenario = load_scenario(scenario)
        self.seeds = list(range(VALIDATION_SEED_BASE, VALIDATION_SEED_BASE + seeds)) if isinstance(seeds, int) else list(seeds)
        self.every = max(1, int(every))
        self.best_jct = math.inf
        self.best_state: dict | None = None
        self.best_timesteps = -1
        self.rows = log if log is not None else []
        self._rollouts = 0

    def validate(self) -> float:
        from ..evaluation import evaluate_agent, maskable_policy

        rep = evaluate_agent(maskable_policy(self.model), self.scenario, self.seeds, name="validation")
        jct = float(rep.summary("validation", "avg_jct")[0])
        self.rows.append({"timesteps": int(self.model.num_timesteps), "val_jct": jct})
        if jct < self.best_jct:
            self.best_jct, self.best_timesteps = jct, int(self.model.num_timesteps)
            self.best_state = copy.deepcopy(self.model.policy.state_dict())
        return jct

    def _on_training_start(self) -> None:
        if self.best_state is None:
            self.validate()

    def _on_rollout_start(self) -> None:
        # called before each rollout: after the previous iteration's update
        if self._rollouts and self._rollouts % self.every == 0:
            self.validate()
        self._rollouts += 1

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.validate()

    def restore_best(self) -> None:
        if self.best_state is not None:
            self.model.policy.load_state_dict(self.best_state)



def tensorboard_logger(folder: str | os.PathLike, verbose: int = 0):
    """SB3's own logger writing TensorBoard event files into ``folder`` (and SB3's table to the
    standard output when ``verbose``): pass it to ``model.set_logger()``. Needs the ``tensorboard``
    package (in the ``sb3`` extra)."""
    from stable_baselines3.common.logger import configure

    try:
        import tensorboard  # noqa: F401  (SB3 writes through torch.utils.tensorboard, which needs it)
    except ImportError:
        raise ImportError("--tensorboard needs the tensorboard package: pip install './python[sb3]'") from None
    return configure(os.fspath(folder), ["tensorboard"] + (["stdout"] if verbose else []))


def quiet_logger(verbose: int = 0):
    """An SB3 logger that writes nowhere but the standard output (when ``verbose``): SB3's default
    logger makes a new empty ``SB3-<date>`` directory in the temporary directory on every
    ``learn()`` call without a tensorboard log. Pass it to ``model.set_logger()``."""
    import sys

    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose else [])


def make_callback(log_csv: str | None = None, show_progress: bool = True, total: int | None = None):
    """A callback that records every finished episode (timesteps, return, length, avg_jct,
    avg_comm_cost) from the VecEnv's infos, optionally into a CSV (the learning curve), and shows a
    progress bar."""

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
                new = not os.path.exists(log_csv) or not self.rows
                self._file = open(log_csv, "w" if new else "a", newline="")
                self._writer = csv.DictWriter(
                    self._file, fieldnames=["timesteps", "episode_return", "length", "avg_jct", "avg_comm_cost"]
                )
                if new:
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
                self._file = self._writer = None
                _write_rows(log_csv, self.rows)  # the final form, whole and atomically (the live one is appended)

    return EpisodeLog()



def _write_rows(path: str, rows: list[dict]) -> None:
    if not rows:
        return
    with atomic_open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
