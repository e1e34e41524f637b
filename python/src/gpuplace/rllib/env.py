"""gpuplace environments in the form RLlib's env runners step: observations are a Dict with
``"observations"`` (the env's float32 vector, its Box carrying the layout) and ``"action_mask"``
(float32 0/1 per action), RLlib's masking convention; episodes autoreset in NEXT_STEP mode.

Needs only Gymnasium (not Ray): :class:`RLlibEnv` is one env, :class:`RLlibVectorEnv` the batched
entry point (``gym_env_vectorize_mode="vector_entry_point"``), and :func:`make_env` the creator
registered with ``tune.register_env`` (see :mod:`gpuplace.rllib`).

NEXT_STEP because RLlib's single-agent env runner expects Gymnasium's default autoreset: after an
episode ends, the next ``step()`` ignores that env's action and returns the first observation of
its next episode. :class:`RLlibVectorEnv` is :class:`gpuplace.gymnasium.GymnasiumVectorEnv` in that
mode: one C++ vector env steps every env in one call with the GIL released, and env i's k-th
episode has the seed ``episode_seed(seed, i, k)``, the same episodes as the SAME_STEP facades and
as ``GymnasiumEnv`` reset with those seeds (tests/python/test_rllib.py checks it).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .. import _core
from .._deprecated import module_getattr
from ..config import ScenarioLike, scenario_of
from ..gymnasium import GymnasiumEnv, GymnasiumVectorEnv
from ..spaces import observation_box

OBS_KEY = "observations"
MASK_KEY = "action_mask"


def dict_space(core, scenario: dict | None = None) -> spaces.Dict:
    """``Dict(observations=Box(0, 1, (O,)) with the layout, action_mask=Box(0, 1, (A,)))``."""
    return spaces.Dict({
        OBS_KEY: observation_box(core, scenario),
        MASK_KEY: spaces.Box(0.0, 1.0, shape=(int(core.num_actions),), dtype=np.float32),
    })


def _scenario_of(config: Mapping[str, Any] | None):
    """The scenario an env config names: ``{"scenario": preset/file/JSON/dict, "overrides": {...}}``."""
    config = dict(config or {})
    unknown = sorted(set(config) - {"scenario", "overrides", "num_envs"})
    if unknown:
        raise _core.ConfigError(f"gpuplace RLlib env config: unknown key(s) {unknown} (known: scenario, overrides, num_envs)")
    return scenario_of(config.get("scenario", "default"), config.get("overrides"))


class RLlibEnv(GymnasiumEnv):
    """One gpuplace env with Dict observations (:class:`gpuplace.gymnasium.GymnasiumEnv` otherwise:
    ``action_space.sample()`` draws a valid action; the info is empty but for ``metrics`` at the end
    of an episode). An invalid action raises :class:`gpuplace.InvalidAction` (the env is left
    unchanged)."""

    metadata = {"render_modes": []}

    def __init__(self, scenario: ScenarioLike = "default", overrides: Mapping[str, Any] | None = None):
        super().__init__(scenario, overrides=overrides)
        self.observation_space = dict_space(self.core, self.scenario)

    def _observation(self) -> dict:
        return {OBS_KEY: self._obs.copy(), MASK_KEY: self._mask.astype(np.float32)}

    def _info(self) -> dict:
        return {}


class RLlibVectorEnv(GymnasiumVectorEnv):
    """``num_envs`` gpuplace envs with Dict observations, autoreset NEXT_STEP (see the module
    docstring): :class:`gpuplace.gymnasium.GymnasiumVectorEnv` over one C++ vector env.
    ``reset(seed=s)`` gives env i's k-th episode the seed ``episode_seed(s, i, k)``; without a
    seed, ``s`` is drawn from the env's generator. Actions are checked for every env that steps
    before any env moves: an invalid one raises :class:`gpuplace.InvalidAction` naming the env, and
    nothing changes. The actions of envs whose episode ended in the previous step are ignored
    (those envs start their next episode)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, scenario: ScenarioLike = "default", num_envs: int = 8,
                 overrides: Mapping[str, Any] | None = None, num_threads: int = 1):
        super().__init__(scenario, num_envs, num_threads, overrides=overrides, autoreset_mode=AutoresetMode.NEXT_STEP)
        self.num_actions = int(self.core.num_actions)
        self.single_observation_space = dict_space(self.core, self.scenario)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    def _observations(self, obs: np.ndarray) -> dict:
        return {OBS_KEY: obs, MASK_KEY: self._masks.astype(np.float32)}

    def seed_of(self, i: int) -> int:
        """The seed of env i's current episode."""
        return int(self.core.seed_of(i))


def make_env(config: Mapping[str, Any] | None = None):
    """The env creator for ``tune.register_env``: ``config`` (RLlib's env config, an EnvContext)
    holds ``scenario`` (preset, file, JSON text, dict or :class:`gpuplace.Scenario`) and
    ``overrides``. RLlib adds ``num_envs`` when it asks for the batched entry point
    (``gym_env_vectorize_mode="vector_entry_point"``); then this returns an
    :class:`RLlibVectorEnv`, else one :class:`RLlibEnv`."""
    config = dict(config or {})
    num_envs = config.pop("num_envs", None)
    sc = _scenario_of(config)
    if num_envs is None:
        return RLlibEnv(sc)
    return RLlibVectorEnv(sc, num_envs)


__getattr__ = module_getattr(__name__, {
    "MaskedDictEnv": ("gpuplace.rllib.RLlibEnv", lambda: RLlibEnv),
    "MaskedDictVectorEnv": ("gpuplace.rllib.RLlibVectorEnv", lambda: RLlibVectorEnv),
})
