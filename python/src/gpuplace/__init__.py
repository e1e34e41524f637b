"""gpuplace: reinforcement-learning environments for topology-aware GPU job scheduling.

A multi-GPU job's GPUs are picked one at a time under an action mask (Proximity-DRL style). The
simulation runs in C++ (``gpuplace._core``); this package adds one facade per framework, each
over the C++ env and vector env: :mod:`gpuplace.gymnasium` (``GymnasiumEnv``,
``GymnasiumVectorEnv``), :mod:`gpuplace.sb3` (``SB3VecEnv`` and MaskablePPO helpers) and
:mod:`gpuplace.rllib` (``RLlibEnv``, ``RLlibVectorEnv``); the evaluation harness, plots and the
``python -m gpuplace`` command line.

    import gymnasium as gym
    import gpuplace  # registers gpuplace/Default-v0 and gpuplace/ProximityDRL-v0
    env = gym.make("gpuplace/Default-v0")
"""

from ._load import load_core

core_variant = load_core(__name__)  # "portable", "x86-64-v3", "x86-64-v4" or "native": see gpuplace/_load.py
from . import _core  # noqa: E402  (the build load_core() chose)
from ._core import (  # noqa: E402
    CheckpointError,
    ConfigError,
    Env,
    Error,
    EvalReport,
    Heuristic,
    InvalidAction,
    Scenario,
    StateError,
    TraceError,
    VectorEnv,
    comm_cost,
    episode_seed,
    eval_metric_names,
    held_out_seeds,
    have_lp_solver,
    heuristic_names,
    round_policy_names,
    run_episode,
    run_rounds,
)
import os as _os  # noqa: E402

# "$GPUPLACE_DATA/..." paths (include/gpuplace/data.hpp) name the data this package ships, unless
# the environment variable GPUPLACE_DATA names another folder.
if not _os.environ.get("GPUPLACE_DATA") and _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "data")):
    _core.set_data_dir(_os.path.join(_os.path.dirname(__file__), "data"))

from .config import PRESETS, load_scenario, make_core_env, make_core_vector_env  # noqa: E402
from ._deprecated import module_getattr  # noqa: E402
from .evaluation import evaluate, evaluate_agent  # noqa: E402
from .gymnasium import GymnasiumEnv, GymnasiumVectorEnv  # noqa: E402
from .registration import ENV_IDS, register_envs  # noqa: E402
from .registry import (  # noqa: E402
    register_comm_model,
    register_discipline,
    register_observation_feature,
    register_policy,
    register_reward_term,
    register_scenario,
    register_topology,
    register_trace_format,
    register_workload_kind,
    registered_policies,
    unregister_comm_model,
    unregister_discipline,
    unregister_observation_feature,
    unregister_reward_term,
    unregister_scenario,
    unregister_topology,
    unregister_trace_format,
    unregister_workload_kind,
)

__version__ = _core.__version__

register_envs()


def _sb3_vec_env():
    from ._sb3_vec_env import SB3VecEnv  # stable-baselines3 is optional: imported when asked for

    return SB3VecEnv


def _old_vector_env():
    import warnings

    from . import vector

    with warnings.catch_warnings():  # one warning, about gpuplace.GpuPlaceVectorEnv
        warnings.simplefilter("ignore", DeprecationWarning)
        return vector.GpuPlaceVectorEnv


# The names of the release before, each warning and naming its replacement (CHANGELOG.md).
__getattr__ = module_getattr(__name__, {
    "GpuPlaceEnv": ("gpuplace.gymnasium.GymnasiumEnv", lambda: GymnasiumEnv),
    "GpuPlaceVectorEnv": ("gpuplace.gymnasium.GymnasiumVectorEnv", _old_vector_env),
    "GpuPlaceVecEnv": ("gpuplace.sb3.SB3VecEnv", _sb3_vec_env),
    "TreeRouteEnv": ("gpuplace.Env", lambda: Env),  # one C++ env type serves every comm model
    "TreeRouteVectorEnv": ("gpuplace.VectorEnv", lambda: VectorEnv),
})


__all__ = [
    "CheckpointError",
    "ConfigError",
    "ENV_IDS",
    "Env",
    "Error",
    "EvalReport",
    "GymnasiumEnv",
    "GymnasiumVectorEnv",
    "core_variant",
    "Heuristic",
    "InvalidAction",
    "PRESETS",
    "Scenario",
    "StateError",
    "TraceError",
    "VectorEnv",
    "comm_cost",
    "episode_seed",
    "eval_metric_names",
    "evaluate",
    "evaluate_agent",
    "have_lp_solver",
    "held_out_seeds",
    "heuristic_names",
    "load_scenario",
    "make_core_env",
    "make_core_vector_env",
    "register_envs",
    "round_policy_names",
    "run_episode",
    "run_rounds",
]
