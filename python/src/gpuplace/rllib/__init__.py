"""gpuplace on Ray: RLlib PPO over many env runners (and machines) and Tune sweeps (needs the
``rllib`` extra: ``pip install 'torch==2.13.0' && pip install './python[rllib]'``).

    import ray
    from gpuplace.rllib import train, sweep
    ray.init()                                    # or ray.init(address="auto") on a cluster
    run = train("default", iterations=20, num_env_runners=2, out="runs/rllib")

- :mod:`gpuplace.rllib.env`: the envs RLlib steps, :class:`RLlibEnv` and :class:`RLlibVectorEnv`
  (the batched entry point over one C++ vector env, NEXT_STEP autoreset; Dict observations with
  the action mask), registered with ``tune.register_env`` by :func:`register`.
- :mod:`gpuplace.rllib.module`: :class:`PerGpuRLModule`, the per-GPU network of
  :mod:`gpuplace.torch_net` as an RLlib RLModule.
- :mod:`gpuplace.rllib.train`: :func:`ppo_config`, :func:`train`, :func:`sweep`.
- ``python -m gpuplace rllib train|tune``: the command line (:func:`main`).
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'torch==2.13.0' && pip install './python[rllib]'  (from a gpuplace checkout)"

try:
    import ray  # noqa: F401
    import ray.rllib  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(f"gpuplace.rllib needs the rllib extra ({e.name or e} is missing): {INSTALL_HINT}") from e

from .cli import main
from .._deprecated import module_getattr
from .env import RLlibEnv, RLlibVectorEnv, make_env
from .module import PerGpuRLModule, mask_logits, module_config
from .train import (
    ENV_NAME,
    HYPERPARAMETERS,
    VALIDATION_SEED_BASE,
    greedy_policy,
    module_of,
    parse_grid,
    ppo_config,
    register,
    set_torch_threads,
    sweep,
    train,
    validation_jct,
)

__all__ = [
    "ENV_NAME",
    "HYPERPARAMETERS",
    "INSTALL_HINT",
    "PerGpuRLModule",
    "RLlibEnv",
    "RLlibVectorEnv",
    "VALIDATION_SEED_BASE",
    "greedy_policy",
    "main",
    "make_env",
    "mask_logits",
    "module_config",
    "module_of",
    "parse_grid",
    "ppo_config",
    "register",
    "set_torch_threads",
    "sweep",
    "train",
    "validation_jct",
]

__getattr__ = module_getattr(__name__, {
    "MaskedDictEnv": ("gpuplace.rllib.RLlibEnv", lambda: RLlibEnv),
    "MaskedDictVectorEnv": ("gpuplace.rllib.RLlibVectorEnv", lambda: RLlibVectorEnv),
})
