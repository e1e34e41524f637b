"""A Gymnasium VectorEnv backed by the C++ VectorEnv (autoreset mode SAME_STEP)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ._vec_common import as_actions, check_seed
from .config import ScenarioLike, core_classes, load_scenario
from .render import check_render_mode, occupancy_image, status_title
from .spaces import MaskedMultiDiscrete, observation_box


def _is_count(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class GpuPlaceVectorEnv(VectorEnv):
    """``num_envs`` environments stepped by one C++ call with the GIL released.

    Autoreset mode is SAME_STEP (``metadata["autoreset_mode"]``): when env i's episode ends, the
    returned observation is already the first of its next episode, and ``infos["final_obs"][i]`` /
    ``infos["final_info"]`` (with the masks ``infos["_final_obs"]``, ``infos["_final_info"]``) hold
    the last observation and the episode's metrics, return, length and seed.

    ``reset(seed=s)`` gives env i's k-th episode the seed ``episode_seed(s, i, k)``.
    :meth:`action_masks` returns the (num_envs, num_actions) bool mask of valid actions.

    Args (the order of :class:`gpuplace.GpuPlaceVecEnv` and ``make_core_vector_env``: scenario first):
        scenario: preset name, JSON file, JSON text or dict.
        num_envs: number of environments.
        num_threads: C++ worker threads (results do not depend on it).
        render_mode: None, "ansi" or "rgb_array" (renders every env).
        overrides: nested dict merged into the scenario.
        action_mode: "gpu" (the default), "placement" or "job": sets the scenario's env.action_mode.
        copy: return copies (default). False returns read-only views that the next step overwrites.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        scenario: ScenarioLike = "default",
        num_envs: int = 8,
        num_threads: int = 1,
        render_mode: str | None = None,
        overrides: dict | None = None,
        copy: bool = True,
        action_mode: str | None = None,
    ):
        if _is_count(scenario):  # the old order, GpuPlaceVectorEnv(num_envs, scenario): still accepted
            warnings.warn("GpuPlaceVectorEnv(num_envs, scenario) is the old argument order; pass "
                          "GpuPlaceVectorEnv(scenario, num_envs) or keywords", DeprecationWarning, stacklevel=2)
            scenario, num_envs = ("default" if _is_count(num_envs) else num_envs), scenario
        check_render_mode(render_mode, "GpuPlaceVectorEnv")
        self.scenario = load_scenario(scenario, overrides, action_mode)
        self.core = core_classes(self.scenario)[1](json.dumps(self.scenario), num_envs, num_threads)
        self.num_envs = int(self.core.num_envs)
        self.render_mode = render_mode
        self.copy = bool(copy)
        self.single_observation_space = observation_box(self.core, self.scenario)  # carries the layout (gpuplace.spaces)
        self.single_action_space = spaces.Discrete(int(self.core.num_actions))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        # sample() draws a valid action for every env (see gpuplace.spaces)
        self.action_space = MaskedMultiDiscrete(
            np.full(self.num_envs, int(self.core.num_actions)), lambda: self._masks if self._started else None
        )
        self._obs = self.core.observations
        self._masks = self.core.action_masks
        self._rewards = self.core.rewards
        self._term = self.core.terminated
        self._trunc = self.core.truncated
        self._dones = self.core.dones
        self._final_obs = self.core.final_observations
        self._obs_shape = (self.num_envs, int(self.core.observation_size))
        self._topology = self.core.topology()
        self._started = False

    def reset(self, *, seed: int | list | None = None, options: dict[str, Any] | None = None):
        if isinstance(seed, (list, tuple)):
            raise ValueError(
                "GpuPlaceVectorEnv.reset: pass one int seed (env i's episodes get episode_seed(seed, i, k)), "
                f"not a list of {len(seed)} seeds"
            )
        if options:
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} (GpuPlaceVectorEnv takes none)")
        seed = check_seed(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63))
        self.core.reset(seed)
        self._started = True
        return self._out(self._obs), {}

    def step(self, actions):
        a = as_actions(actions, self.num_envs, int(self.core.num_actions))
        if self.copy:
            obs = np.empty(self._obs_shape, dtype=np.float32)  # filled by C++ env by env
            ended = self.core.step(a, obs)
        else:
            ended = self.core.step(a)
            obs = self._obs
        term, trunc = self._term.copy(), self._trunc.copy()
        infos: dict[str, Any] = {}
        if ended:
            for i in np.flatnonzero(self._dones):
                i = int(i)
                fin = self.core.final_info(i)
                fin["seed"] = np.uint64(fin["seed"])  # seeds span the full 64 bits
                infos = self._add_info(infos, {"final_obs": self._final_obs[i].copy(), "final_info": fin}, i)
        return obs, self._rewards.copy(), term, trunc, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool array of valid actions."""
        return self._masks.view(np.bool_).copy()

    def render(self):
        if self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            return tuple(self.core.render_ansi(i) for i in range(self.num_envs))
        imgs = []
        for i in range(self.num_envs):
            st = self.core.cluster_state(i)
            imgs.append(occupancy_image(self._topology, st["holders"], st["picked"], title=status_title(self.core.info(i))))
        return tuple(imgs)

    def close_extras(self, **kwargs):
        pass

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return arr.copy() if self.copy else arr
