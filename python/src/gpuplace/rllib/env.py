"""gpuplace environments in the form RLlib's env runners step: observations are a Dict with
``"observations"`` (the env's float32 vector, its Box carrying the layout) and ``"action_mask"``
(float32 0/1 per action), RLlib's masking convention; episodes autoreset in NEXT_STEP mode.

Needs only Gymnasium (not Ray): :class:`MaskedDictEnv` is one env, :class:`MaskedDictVectorEnv`
the batched entry point (``gym_env_vectorize_mode="vector_entry_point"``), and :func:`make_env`
the creator registered with ``tune.register_env`` (see :mod:`gpuplace.rllib`).

Why NEXT_STEP, and why the batch is stepped env by env: RLlib's single-agent env runner expects
Gymnasium's default autoreset (after an episode ends, the next ``step()`` ignores that env's action
and returns the first observation of its next episode). The C++ VectorEnv resets at once
(SAME_STEP) and steps every env in each call, so it cannot leave one env still for a step. The
batch here is N C++ envs stepped in one Python loop, each env's k-th episode seeded with
``episode_seed(seed, i, k)``: the same episodes as the C++ VectorEnv and as ``GpuPlaceEnv`` reset
with those seeds (tests/python/test_rllib.py checks it).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .. import _core
from .._vec_common import as_actions, check_seed
from ..config import load_scenario, make_core_env
from ..spaces import observation_box

OBS_KEY = "observations"
MASK_KEY = "action_mask"
_SEED_BOUND = 2**63


def dict_space(core) -> spaces.Dict:
    """``Dict(observations=Box(0, 1, (O,)) with the layout, action_mask=Box(0, 1, (A,)))``."""
    return spaces.Dict({
        OBS_KEY: observation_box(core),
        MASK_KEY: spaces.Box(0.0, 1.0, shape=(int(core.num_actions),), dtype=np.float32),
    })


def _scenario_of(config: Mapping[str, Any] | None) -> dict:
    """The scenario an env config names: ``{"scenario": preset/file/JSON/dict, "overrides": {...}}``."""
    config = dict(config or {})
    unknown = sorted(set(config) - {"scenario", "overrides", "num_envs"})
    if unknown:
        raise _core.ConfigError(f"gpuplace RLlib env config: unknown key(s) {unknown} (known: scenario, overrides, num_envs)")
    return load_scenario(config.get("scenario", "default"), config.get("overrides"))


class MaskedDictEnv(gym.Env):
    """One gpuplace env with Dict observations. An invalid action raises
    :class:`gpuplace.InvalidAction` (the env is left unchanged)."""

    metadata = {"render_modes": []}

    def __init__(self, scenario="default", overrides: Mapping[str, Any] | None = None):
        super().__init__()
        self.scenario = load_scenario(scenario, overrides)
        self.core = make_core_env(self.scenario)
        self.observation_space = dict_space(self.core)
        self.action_space = spaces.Discrete(int(self.core.num_actions))

    def _obs(self) -> dict:
        return {OBS_KEY: self.core.observation.copy(), MASK_KEY: self.core.action_mask.astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} (MaskedDictEnv takes none)")
        self.core.reset(int(seed) if seed is not None else int(self.np_random.integers(0, _SEED_BOUND)))
        return self._obs(), {}

    def step(self, action):
        reward, terminated, truncated = self.core.step(int(action))
        info = {"metrics": self.core.metrics()} if terminated or truncated else {}
        return self._obs(), float(reward), bool(terminated), bool(truncated), info


class MaskedDictVectorEnv(VectorEnv):
    """``num_envs`` gpuplace envs with Dict observations, autoreset NEXT_STEP (see the module
    docstring). ``reset(seed=s)`` gives env i's k-th episode the seed ``episode_seed(s, i, k)``, as
    the C++ VectorEnv does; without a seed, ``s`` is drawn from the env's generator. Actions are
    checked for every env that steps before any env moves: an invalid one raises
    :class:`gpuplace.InvalidAction` naming the env, and nothing changes. The actions of envs whose
    episode ended in the previous step are ignored (those envs start their next episode)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, scenario="default", num_envs: int = 8, overrides: Mapping[str, Any] | None = None):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise _core.ConfigError(f"MaskedDictVectorEnv: num_envs must be an integer >= 1, got {num_envs!r}")
        self.scenario = load_scenario(scenario, overrides)
        first = make_core_env(self.scenario)
        text = json.dumps(self.scenario)
        self.envs = [first] + [type(first)(text) for _ in range(int(num_envs) - 1)]
        self.num_envs = len(self.envs)
        core = self.envs[0]
        self.num_actions = int(core.num_actions)
        self.single_observation_space = dict_space(core)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs = np.zeros((self.num_envs, int(core.observation_size)), dtype=np.float32)
        self._masks = np.zeros((self.num_envs, self.num_actions), dtype=np.float32)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._episode = np.zeros(self.num_envs, dtype=np.int64)
        self._seed = 0
        self._started = False

    def _reset_env(self, i: int) -> None:
        self.envs[i].reset(_core.episode_seed(self._seed, i, int(self._episode[i])))
        self._read(i)

    def _read(self, i: int) -> None:
        e = self.envs[i]
        self._obs[i] = e.observation
        self._masks[i] = e.action_mask

    def _out(self) -> dict:
        return {OBS_KEY: self._obs.copy(), MASK_KEY: self._masks.copy()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if isinstance(seed, (list, tuple)):
            raise ValueError("MaskedDictVectorEnv.reset: pass one int seed (env i's episodes get "
                             f"episode_seed(seed, i, k)), not a list of {len(seed)} seeds")
        if options:
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} (MaskedDictVectorEnv takes none)")
        seed = check_seed(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)
        self._seed = seed if seed is not None else int(self.np_random.integers(0, _SEED_BOUND))
        self._episode[:] = 0
        self._autoreset[:] = False
        for i in range(self.num_envs):
            self._reset_env(i)
        self._started = True
        return self._out(), {}

    def step(self, actions):
        if not self._started:
            raise _core.StateError("MaskedDictVectorEnv: step() called before reset()")
        a = as_actions(actions, self.num_envs, self.num_actions)
        for i in np.flatnonzero(~self._autoreset):  # check first: an invalid action moves no env
            if not (0 <= a[i] < self.num_actions) or not self._masks[i, a[i]]:
                raise _core.InvalidAction(f"vector env: env {int(i)}: invalid action {int(a[i])} (valid: "
                                          f"{np.flatnonzero(self._masks[i]).tolist()})")
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        term = np.zeros(self.num_envs, dtype=bool)
        trunc = np.zeros(self.num_envs, dtype=bool)
        for i in range(self.num_envs):
            if self._autoreset[i]:
                self._episode[i] += 1
                self._reset_env(i)
                continue
            rewards[i], term[i], trunc[i] = self.envs[i].step(int(a[i]))
            self._read(i)
        self._autoreset = term | trunc
        return self._out(), rewards, term, trunc, {}

    def seed_of(self, i: int) -> int:
        """The seed of env i's current episode."""
        return int(self.envs[i].seed)


def make_env(config: Mapping[str, Any] | None = None):
    """The env creator for ``tune.register_env``: ``config`` (RLlib's env config, an EnvContext)
    holds ``scenario`` (preset, file, JSON text or dict) and ``overrides``. RLlib adds
    ``num_envs`` when it asks for the batched entry point (``gym_env_vectorize_mode=
    "vector_entry_point"``); then this returns a :class:`MaskedDictVectorEnv`, else one
    :class:`MaskedDictEnv`."""
    config = dict(config or {})
    num_envs = config.pop("num_envs", None)
    sc = _scenario_of(config)
    if num_envs is None:
        return MaskedDictEnv(sc)
    return MaskedDictVectorEnv(sc, int(num_envs))
