"""gpuplace: reinforcement-learning environments for topology-aware GPU job scheduling.

A multi-GPU job's GPUs are picked one at a time under an action mask (Proximity-DRL style). The
simulation runs in C++ (``gpuplace._core``); this package adds the Gymnasium environment, the
Stable-Baselines3 and Gymnasium vector environments backed by the C++ VectorEnv, the evaluation
harness, plots and the ``python -m gpuplace`` command line.

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
    StateError,
    TraceError,
    TreeRouteEnv,
    TreeRouteVectorEnv,
    VectorEnv,
    comm_cost,
    episode_seed,
    eval_metric_names,
    held_out_seeds,
    heuristic_names,
    run_episode,
)
import os as _os  # noqa: E402

# "$GPUPLACE_DATA/..." paths (include/gpuplace/data.hpp) name the data this package ships, unless
# the environment variable GPUPLACE_DATA names another folder.
if not _os.environ.get("GPUPLACE_DATA") and _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "data")):
    _core.set_data_dir(_os.path.join(_os.path.dirname(__file__), "data"))

from .config import PRESETS, load_scenario, make_core_env, make_core_vector_env  # noqa: E402
from .env import GpuPlaceEnv
from .evaluation import evaluate, evaluate_agent
from .registration import ENV_IDS, register_envs

__version__ = _core.__version__

register_envs()


def __getattr__(name):
    # The vector environments import their frameworks lazily (stable-baselines3 is optional).
    if name == "GpuPlaceVecEnv":
        from .vec_env import GpuPlaceVecEnv

        return GpuPlaceVecEnv
    if name == "GpuPlaceVectorEnv":
        from .vector import GpuPlaceVectorEnv

        return GpuPlaceVectorEnv
    raise AttributeError(f"module 'gpuplace' has no attribute {name!r}")


__all__ = [
    "CheckpointError",
    "ConfigError",
    "ENV_IDS",
    "Env",
    "Error",
    "EvalReport",
    "GpuPlaceEnv",
    "GpuPlaceVecEnv",
    "core_variant",
    "GpuPlaceVectorEnv",
    "Heuristic",
    "InvalidAction",
    "PRESETS",
    "StateError",
    "TraceError",
    "TreeRouteEnv",
    "TreeRouteVectorEnv",
    "VectorEnv",
    "comm_cost",
    "episode_seed",
    "eval_metric_names",
    "evaluate",
    "evaluate_agent",
    "held_out_seeds",
    "heuristic_names",
    "load_scenario",
    "make_core_env",
    "make_core_vector_env",
    "register_envs",
    "run_episode",
]
