"""SB3VecEnv, the Stable-Baselines3 VecEnv of :mod:`gpuplace.sb3` (in a module of its own so that
the deprecated ``gpuplace.vec_env`` name can load it without the rest of gpuplace.sb3)."""

from __future__ import annotations

import time
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from . import _core
from ._vec_common import CoreVectorMixin, as_actions, check_seed
from .config import ScenarioLike
from .spaces import observation_box


class _EnvView:
    """What get_attr / env_method see as env i: its mask, render, metrics and state queries."""

    def __init__(self, owner: "SB3VecEnv", index: int):
        self._owner = owner
        self._i = index
        self.render_mode = owner.render_mode
        self.observation_space = None  # set once the owner has its spaces
        self.action_space = None
        self.spec = None
        self.metadata = {"render_modes": ["ansi", "rgb_array"]}

    def action_masks(self) -> np.ndarray:
        return self._owner.core.action_masks[self._i].view(np.bool_).copy()

    def render(self):
        return self._owner._render_env(self._i, self.render_mode)

    def metrics(self) -> dict:
        return self._owner.core.metrics(self._i)

    def info(self) -> dict:
        return self._owner.core.info(self._i)

    def cluster_state(self) -> dict:
        return self._owner.core.cluster_state(self._i)

    def current_job(self):
        return self._owner.core.current_job(self._i)


class SB3VecEnv(CoreVectorMixin, VecEnv):
    """``num_envs`` environments stepped by one C++ call with the GIL released: a Stable-Baselines3
    ``VecEnv``.

    Implements what sb3-contrib's MaskablePPO queries: ``env_method("action_masks")`` (and a
    direct :meth:`action_masks`) and ``has_attr("action_masks")``. Episodes reset automatically
    in the step that ends them; that step's info holds ``terminal_observation``,
    ``TimeLimit.truncated``, ``episode`` (``{"r", "l", "t"}`` for SB3's logger) and ``metrics``.

    Seeding: env i's k-th episode uses ``episode_seed(seed, i, k)``, with ``seed`` from
    :meth:`seed` (SB3 calls it with the model's seed) or drawn at random. Results do not depend on
    ``num_threads``.

    Args:
        scenario: preset name, JSON file, JSON text, dict or :class:`gpuplace.Scenario`.
        num_envs: number of environments.
        num_threads: C++ worker threads (1 = step on the calling thread).
        render_mode: None, "ansi" or "rgb_array" (renders env 0 unless told otherwise).
        overrides: nested dict merged into the scenario.
        action_mode: "gpu" (the default), "placement" or "job": sets the scenario's env.action_mode.
        durations: what the scheduler knows of job durations: "oracle" (the truth), "hidden"
            (nothing: attained service and preemptions only) or "predicted" (an estimate); sets the
            scenario's durations.mode (default: the scenario's own; docs/information.md).
        copy: return copies of the C++ buffers (default, required by SB3, which keeps references
            to past observations). False returns read-only views overwritten by the next step.
    """

    def __init__(
        self,
        scenario: ScenarioLike = "default",
        num_envs: int = 8,
        num_threads: int = 1,
        render_mode: str | None = None,
        overrides: dict | None = None,
        copy: bool = True,
        action_mode: str | None = None,
        durations: str | None = None,
    ):
        self._open_core(scenario, num_envs, num_threads, overrides, action_mode, durations, "same_step", copy, render_mode,
                        type(self).__name__)
        n = self._obs_shape[0]
        self._views = [_EnvView(self, i) for i in range(n)]
        observation_space = observation_box(self.core, self.scenario)  # carries the layout (gpuplace.spaces)
        action_space = spaces.Discrete(int(self.core.num_actions))
        self._pending: np.ndarray | None = None
        self._rng = np.random.default_rng()
        self._seed: int | None = None
        self._started = False
        self._t0 = time.perf_counter()
        self._episode_start = np.zeros(n)
        super().__init__(n, observation_space, action_space)
        for v in self._views:
            v.observation_space, v.action_space, v.render_mode = observation_space, action_space, render_mode

    # ---- VecEnv API ----------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        seed = check_seed(seed)
        self._seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        return self._seeds

    def reset(self):
        seed = check_seed(self._seeds[0]) if self._seeds else None
        if seed is None:
            seed = int(self._rng.integers(0, 2**63))
        else:
            self._rng = np.random.default_rng(seed)
        self._seed = seed
        self.core.reset(seed)
        self._started = True
        self._reset_seeds()
        self._reset_options()
        now = time.perf_counter()
        self._episode_start[:] = now
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs.copy() if self.copy else self._obs

    def step_async(self, actions: np.ndarray) -> None:
        self._pending = as_actions(actions, self.num_envs, int(self.core.num_actions))

    def step_wait(self):
        if self._pending is None:
            raise _core.StateError("step_wait() called without step_async()")
        actions, self._pending = self._pending, None
        obs, ended = self._step_core(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if ended:
            term, trunc = self._term, self._trunc
            now = time.perf_counter()
            for i in np.flatnonzero(self._dones):
                i = int(i)
                fin = self.core.final_info(i)
                info = infos[i]
                info["terminal_observation"] = self._final_obs[i].copy()
                info["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
                info["episode"] = {"r": fin["episode_return"], "l": fin["length"], "t": round(now - self._t0, 6)}
                info["metrics"] = fin
                self._episode_start[i] = now
        return obs, self._rewards.astype(np.float32), self._dones.copy(), infos

    def close(self) -> None:
        pass

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self._views[0], attr_name)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self._views[i], attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        for i in self._indices(indices):
            setattr(self._views[i], attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self._masks.view(np.bool_).copy()  # one copy, then row views of it
            return list(masks) if indices is None else [masks[i] for i in idx]
        return [getattr(self._views[i], method_name)(*method_args, **method_kwargs) for i in idx]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices=None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [self._render_env(i, "rgb_array") for i in range(self.num_envs)]

    def render(self, mode: str | None = None):
        mode = mode or self.render_mode
        if mode is None:
            return None
        return self._render_env(0, mode)

    @property
    def unwrapped(self) -> "SB3VecEnv":
        return self
