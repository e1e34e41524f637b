"""GpuPlaceEnv: the Gymnasium environment backed by the C++ core."""

from __future__ import annotations

import json
from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from ._vec_common import check_seed
from .config import ScenarioLike, core_classes, load_scenario
from .render import check_render_mode, occupancy_image, status_title
from .spaces import MaskedDiscrete, observation_box

_SEED_BOUND = 2**63


class GpuPlaceEnv(gym.Env):
    """Sequential GPU selection for the jobs of a cluster (one GPU pick per step).

    Actions: ``Discrete(G + 1)``; action ``g < G`` picks GPU g for the current job, action ``G`` is
    DEFER (valid only when the scenario enables it). With ``action_mode="placement"`` an action
    chooses a whole placement of the current job among ``K = env.slots`` candidates (then DEFER),
    with ``action_mode="job"`` which waiting job starts next (then wait): ``Discrete(K + 1)``
    (docs/mdp.md). Use :meth:`action_masks` (sb3-contrib's
    MaskablePPO does) to know which actions are valid; an invalid action raises
    :class:`gpuplace.InvalidAction` (a ``ValueError``) naming it, and the env is left unchanged.

    ``action_space.sample()`` draws among the valid actions of the current state.

    Observations: ``Box(0, 1, (n,), float32)``; :attr:`observation_layout` names its segments.

    Rewards: by default ``-(jobs in system x elapsed time) / time_scale``, so an episode's rewards
    sum to ``-(sum of JCTs) / time_scale``. The episode terminates when every job has finished; it
    is truncated at the scenario's step or time limit. The final step's ``info["metrics"]`` holds
    the episode metrics (times in seconds).

    Args:
        scenario: a preset name ("default", "proximity_drl"), a JSON file, JSON text or a dict.
        render_mode: None, "ansi" (text) or "rgb_array" (cluster occupancy as an image).
        overrides: nested dict merged into the scenario, e.g. ``{"env": {"max_steps": 200}}``.
        copy_obs: return copies of the observation (default). False returns the read-only view on
            the C++ buffer, which the next reset/step overwrites in place.
        action_mode: "gpu" (the default), "placement" or "job": sets the scenario's env.action_mode.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        scenario: ScenarioLike = "default",
        render_mode: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        copy_obs: bool = True,
        action_mode: str | None = None,
    ):
        super().__init__()
        check_render_mode(render_mode, "GpuPlaceEnv")
        self.scenario = load_scenario(scenario, overrides, action_mode)
        self.core = core_classes(self.scenario)[0](json.dumps(self.scenario))
        self.render_mode = render_mode
        self.copy_obs = bool(copy_obs)
        self._obs = self.core.observation  # views on the C++ buffers, updated in place
        self._mask = self.core.action_mask
        self._mask_bool = self._mask.view(np.bool_)
        self.num_gpus = int(self.core.num_gpus)
        self.observation_space = observation_box(self.core, self.scenario)  # carries the layout (gpuplace.spaces)
        # sample() draws among the valid actions of the current state (see gpuplace.spaces)
        self.action_space = MaskedDiscrete(int(self.core.num_actions), self._live_mask)
        self.observation_layout = self.core.observation_layout
        self._node_of = self.core.node_of()
        self._rack_of = self.core.rack_of()
        self._topology = self.core.topology()
        self._started = False

    # ---- Gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Starts an episode. ``seed`` is the episode's workload seed (the same seed gives the same
        episode as the C++ core's ``reset(seed)``); without it, the seed is drawn from the env's
        generator (itself seeded by the last seed given). No options are defined."""
        seed = check_seed(seed)  # numpy integers too; bools, negative and too large: a clear error
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} (GpuPlaceEnv takes none)")
        if seed is not None:
            episode_seed = seed
        else:
            episode_seed = int(self.np_random.integers(0, _SEED_BOUND))
        self.core.reset(episode_seed)
        self._started = True
        return self._observation(), self._info()

    def step(self, action):
        reward, terminated, truncated = self.core.step(action)
        info = self._info()
        if terminated or truncated:
            info["metrics"] = self.core.metrics()
        return self._observation(), float(reward), bool(terminated), bool(truncated), info

    def action_masks(self) -> np.ndarray:
        """Valid actions (bool array of length num_actions: G + 1, or K + 1 in the placement and job
        modes), as sb3-contrib's MaskablePPO expects."""
        return self._mask_bool.copy()

    def render(self):
        if self.render_mode is None:
            gym.logger.warn(
                "GpuPlaceEnv.render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'"
            )
            return None
        if self.render_mode == "ansi":
            return self.core.render_ansi()
        return occupancy_image(self._topology, self.core.gpu_holders(), self.core.picked(),
                               title=status_title(self.core.info()))

    def close(self):
        pass

    # ---- extras --------------------------------------------------------------------------------

    @property
    def observation_view(self) -> np.ndarray:
        """The read-only float32 view on the C++ observation buffer (no copy)."""
        return self._obs

    @property
    def action_mask_view(self) -> np.ndarray:
        """The read-only uint8 view on the C++ mask buffer (no copy)."""
        return self._mask

    def segment(self, name: str) -> np.ndarray:
        """A named segment of the current observation (a view), e.g. ``segment("gpu_busy")``."""
        for s in self.observation_layout:
            if s["name"] == name:
                return self._obs[s["offset"] : s["offset"] + s["size"]]
        names = ", ".join(s["name"] for s in self.observation_layout)
        raise KeyError(f"no observation segment {name!r} (segments: {names})")

    def metrics(self) -> dict:
        """Metrics of the jobs finished so far (times in seconds)."""
        return self.core.metrics()

    def comm_cost(self, gpus, model=None) -> dict:
        """Cost and slowdown of placing the current job (or a job of ``model``) on ``gpus``."""
        return self.core.comm_cost(gpus, model)

    def _live_mask(self):
        return self._mask if self._started and not self.core.done else None

    def _observation(self) -> np.ndarray:
        return self._obs.copy() if self.copy_obs else self._obs

    def _info(self) -> dict:
        return self.core.info()
