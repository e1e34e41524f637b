"""Shared parts of the vector environments of every framework (Gymnasium, SB3, RLlib)."""

from __future__ import annotations

import numpy as np

from . import _core
from .config import core_classes, scenario_of, warn_short_episodes
from .render import check_render_mode, occupancy_image, status_title


def as_actions(actions, num_envs: int, num_actions: int) -> np.ndarray:
    """Batched actions as a contiguous int64 array of shape (num_envs,). Integer arrays of other
    widths are converted (values checked); floats, bools and other shapes are clear errors."""
    if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (num_envs,) \
            and actions.flags.c_contiguous:
        return actions  # the common case, without further checks (C++ checks the values)
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"batched actions must be integers, got dtype {a.dtype} (shape {a.shape}); "
            f"pass an int64 array of shape ({num_envs},)"
        )
    if a.shape == (num_envs, 1):
        a = a.reshape(num_envs)
    if a.shape != (num_envs,):
        raise ValueError(f"batched actions must have shape ({num_envs},), got {a.shape}")
    if a.dtype != np.int64:
        if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
            bad = int(np.argmax(a))
            raise _core.InvalidAction(f"vector env: env {bad}: invalid action {int(a[bad])}: out of range")
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


def check_seed(seed) -> int | None:
    """A reset seed as a Python int in [0, 2**64) (numpy integers too), or None; a TypeError for
    other types (bools too), a ValueError naming the value out of range."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if seed < 0 or seed >= 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed


def is_count(x) -> bool:
    """Whether x is a whole number (a Python or numpy integer, not a bool)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class CoreVectorMixin:
    """What the vector facades share (gpuplace.gymnasium, gpuplace.sb3, gpuplace.rllib): one C++
    vector env built from a scenario read once, its buffers as zero-copy views, a step that hands
    the whole action array to C++ with the GIL released, and the picture of env i."""

    def _open_core(self, scenario, num_envs, num_threads, overrides, action_mode, durations, autoreset: str, copy: bool,
                   render_mode, who: str) -> None:
        check_render_mode(render_mode, who)
        sc = scenario_of(scenario, overrides, action_mode, durations)
        self.scenario = sc.to_dict()
        self.core = core_classes(sc)[1](sc, num_envs, num_threads, autoreset)
        warn_short_episodes(self.core, stacklevel=4)
        self.render_mode = render_mode
        self.copy = bool(copy)
        self._obs = self.core.observations
        self._masks = self.core.action_masks
        self._rewards = self.core.rewards
        self._term = self.core.terminated
        self._trunc = self.core.truncated
        self._dones = self.core.dones
        self._final_obs = self.core.final_observations
        self._obs_shape = (int(self.core.num_envs), int(self.core.observation_size))
        self._topology = self.core.topology()

    def _step_core(self, actions) -> tuple[np.ndarray, int]:
        """Steps every env; returns the observations (a fresh array filled by C++ env by env while
        each row is in cache, or the read-only view without copy) and the episodes that ended."""
        a = as_actions(actions, self._obs_shape[0], int(self.core.num_actions))
        if not self.copy:
            return self._obs, self.core.step(a)
        obs = np.empty(self._obs_shape, dtype=np.float32)
        return obs, self.core.step(a, obs)

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool array of valid actions."""
        return self._masks.view(np.bool_).copy()

    def _render_env(self, i: int, mode: str | None):
        if mode is None:
            return None
        if mode == "ansi":
            return self.core.render_ansi(i)
        if mode in ("rgb_array", "human"):
            st = self.core.cluster_state(i)
            return occupancy_image(self._topology, st["holders"], st["picked"], title=status_title(self.core.info(i)))
        raise ValueError(f"unknown render mode {mode!r} (allowed: ansi, rgb_array)")
