"""gpuplace for Gymnasium: :class:`GymnasiumEnv` (one environment, ``gymnasium.Env``) and
:class:`GymnasiumVectorEnv` (``gymnasium.vector.VectorEnv`` over one C++ vector env, autoreset
SAME_STEP or NEXT_STEP). The ids ``gpuplace/Default-v0``, ... (``gym.make``, ``gym.make_vec``)
make these.

    import gymnasium as gym
    from gpuplace.gymnasium import GymnasiumEnv, GymnasiumVectorEnv
    env = GymnasiumEnv("proximity_drl")
    envs = GymnasiumVectorEnv("default", num_envs=64, num_threads=2)
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ._vec_common import CoreVectorMixin, check_seed
from .config import ScenarioLike, core_classes, scenario_of, warn_short_episodes
from .render import check_render_mode, occupancy_image, status_title
from .spaces import MaskedDiscrete, MaskedMultiDiscrete, observation_box

_SEED_BOUND = 2**63

__all__ = ["GymnasiumEnv", "GymnasiumVectorEnv"]


class GymnasiumEnv(gym.Env):
    """Sequential GPU selection for the jobs of a cluster (one GPU pick per step).

    Actions: ``Discrete(G + 1)``; action ``g < G`` picks GPU g for the current job, action ``G`` is
    DEFER (valid only when the scenario enables it). With ``action_mode="placement"`` an action
    chooses a whole placement of the current job among ``K = env.slots`` candidates (then DEFER),
    with ``action_mode="job"`` which waiting job starts next (then wait): ``Discrete(K + 1)``
    (docs/mdp.md); with ``action_mode="round"`` which active job runs in the next round (then stop:
    the round runs; docs/rounds.md). Use :meth:`action_masks` (sb3-contrib's
    MaskablePPO does) to know which actions are valid; an invalid action raises
    :class:`gpuplace.InvalidAction` (a ``ValueError``) naming it, and the env is left unchanged.

    ``action_space.sample()`` draws among the valid actions of the current state.

    Observations: ``Box(0, 1, (n,), float32)``; :attr:`observation_layout` names its segments.

    Rewards: by default ``-(jobs in system x elapsed time) / time_scale``, so an episode's rewards
    sum to ``-(sum of JCTs) / time_scale``. The episode terminates when every job has finished; it
    is truncated at the scenario's step or time limit. The final step's ``info["metrics"]`` holds
    the episode metrics (times in seconds).

    Args:
        scenario: a preset name ("default", "proximity_drl"), a JSON file, JSON text, a dict or a
            :class:`gpuplace.Scenario`.
        render_mode: None, "ansi" (text) or "rgb_array" (cluster occupancy as an image).
        overrides: nested dict merged into the scenario, e.g. ``{"env": {"max_steps": 200}}``.
        copy_obs: return copies of the observation (default). False returns the read-only view on
            the C++ buffer, which the next reset/step overwrites in place.
        action_mode: "gpu" (the default), "placement", "job" or "round": sets the scenario's env.action_mode.
        durations: what the scheduler knows of job durations: "oracle" (the truth), "hidden"
            (nothing: attained service and preemptions only) or "predicted" (an estimate); sets the
            scenario's durations.mode (default: the scenario's own; docs/information.md).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        scenario: ScenarioLike = "default",
        render_mode: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        copy_obs: bool = True,
        action_mode: str | None = None,
        durations: str | None = None,
    ):
        super().__init__()
        check_render_mode(render_mode, type(self).__name__)
        sc = scenario_of(scenario, overrides, action_mode, durations)
        self.scenario = sc.to_dict()
        self.core = core_classes(sc)[0](sc)
        warn_short_episodes(self.core)  # a trace that cannot fill the episodes asked: the real count
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
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} ({type(self).__name__} takes none)")
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
                f"{type(self).__name__}.render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'"
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


_AUTORESET = {AutoresetMode.SAME_STEP: "same_step", AutoresetMode.NEXT_STEP: "next_step"}


def _autoreset_mode(mode) -> AutoresetMode:
    """An AutoresetMode from the enum or its name ("same_step", "next_step", "SameStep", ...)."""
    if isinstance(mode, AutoresetMode):
        if mode in _AUTORESET:
            return mode
    elif isinstance(mode, str):
        for m, name in _AUTORESET.items():
            if mode in (name, m.value, m.name):
                return m
    raise ValueError(f"autoreset_mode {mode!r}: expected AutoresetMode.SAME_STEP or AutoresetMode.NEXT_STEP "
                     "(or \"same_step\", \"next_step\")")


class GymnasiumVectorEnv(CoreVectorMixin, VectorEnv):
    """``num_envs`` environments stepped by one C++ call with the GIL released.

    Autoreset (``autoreset_mode``, also in ``metadata["autoreset_mode"]``):

    - ``SAME_STEP`` (the default): when env i's episode ends, the returned observation is already
      the first of its next episode, and ``infos["final_obs"][i]`` / ``infos["final_info"]`` (with
      the masks ``infos["_final_obs"]``, ``infos["_final_info"]``) hold the last observation and
      the episode's metrics, return, length and seed.
    - ``NEXT_STEP`` (Gymnasium's default for its own vector envs): the step that ends env i's
      episode returns its last observation, with ``infos["metrics"]`` (masked by
      ``infos["_metrics"]``) as in SAME_STEP's final info; the next step ignores env i's action and
      returns the first observation of its next episode, with reward 0 and neither flag.

    ``reset(seed=s)`` gives env i's k-th episode the seed ``episode_seed(s, i, k)``.
    :meth:`action_masks` returns the (num_envs, num_actions) bool mask of valid actions.

    Args (scenario first, as :class:`gpuplace.sb3.SB3VecEnv` and ``make_core_vector_env``):
        scenario: preset name, JSON file, JSON text, dict or :class:`gpuplace.Scenario`.
        num_envs: number of environments.
        num_threads: C++ worker threads (results do not depend on it).
        render_mode: None, "ansi" or "rgb_array" (renders every env).
        overrides: nested dict merged into the scenario.
        copy: return copies (default). False returns read-only views that the next step overwrites.
        action_mode: "gpu" (the default), "placement", "job" or "round": sets the scenario's env.action_mode.
        durations: what the scheduler knows of job durations: "oracle" (the truth), "hidden"
            (nothing: attained service and preemptions only) or "predicted" (an estimate); sets the
            scenario's durations.mode (default: the scenario's own; docs/information.md).
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default) or ``NEXT_STEP`` (or their names).
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
        durations: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
    ):
        mode = _autoreset_mode(autoreset_mode)
        self._open_core(scenario, num_envs, num_threads, overrides, action_mode, durations, _AUTORESET[mode], copy, render_mode,
                        type(self).__name__)
        self.metadata = dict(type(self).metadata, autoreset_mode=mode)
        self.num_envs = int(self.core.num_envs)
        self.single_observation_space = observation_box(self.core, self.scenario)  # carries the layout (gpuplace.spaces)
        self.single_action_space = spaces.Discrete(int(self.core.num_actions))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        # sample() draws a valid action for every env (see gpuplace.spaces)
        self.action_space = MaskedMultiDiscrete(
            np.full(self.num_envs, int(self.core.num_actions)), lambda: self._masks if self._started else None
        )
        self._started = False

    def reset(self, *, seed: int | list | None = None, options: dict[str, Any] | None = None):
        if isinstance(seed, (list, tuple)):
            raise ValueError(
                f"{type(self).__name__}.reset: pass one int seed (env i's episodes get episode_seed(seed, i, k)), "
                f"not a list of {len(seed)} seeds"
            )
        if options:
            raise ValueError(f"reset(): unknown option(s) {sorted(options)} ({type(self).__name__} takes none)")
        seed = check_seed(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)
        if seed is None:
            seed = int(self.np_random.integers(0, _SEED_BOUND))
        self.core.reset(seed)
        self._started = True
        return self._observations(self._obs.copy() if self.copy else self._obs), {}

    def step(self, actions):
        obs, ended = self._step_core(actions)
        term, trunc = self._term.copy(), self._trunc.copy()
        infos: dict[str, Any] = {}
        if ended:
            same_step = self.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
            for i in np.flatnonzero(self._dones):
                i = int(i)
                fin = self.core.final_info(i)
                fin["seed"] = np.uint64(fin["seed"])  # seeds span the full 64 bits
                item = {"final_obs": self._final_obs[i].copy(), "final_info": fin} if same_step else {"metrics": fin}
                infos = self._add_info(infos, item, i)
        return self._observations(obs), self._rewards.copy(), term, trunc, infos

    def render(self):
        if self.render_mode is None:
            return None
        return tuple(self._render_env(i, self.render_mode) for i in range(self.num_envs))

    def close_extras(self, **kwargs):
        pass

    def _observations(self, obs: np.ndarray):
        """What reset() and step() return as observations (RLlib's facade adds the masks)."""
        return obs

