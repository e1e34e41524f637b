"""The training recipe of the C++ reference PPO: MaskablePPO arguments, reward normalisation, the
newcomer recipe, and the checks of training arguments before any work."""

from __future__ import annotations

import math

import numpy as np

try:
    from stable_baselines3.common.utils import LinearSchedule
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from .. import _core
from .._sb3_vec_env import SB3VecEnv


#: The newcomer recipe (docs/python.md, "MaskablePPO in ten minutes"): :func:`train_per_gpu`'s
#: arguments for the default scenario on 2 cores, about 5 minutes: MaskablePPO with
#: :class:`PerGpuPolicy`, 100k env steps cloning pack, 10 value-only iterations, PPO to 250k env
#: steps (the C++ trainer's settings, :func:`per_gpu_ppo_kwargs`), the best of the greedy policies
#: on 8 validation seeds kept. experiments/sb3_recipe.py measures it.
NEWCOMER_RECIPE: dict = {
    "teacher": "pack",
    "imitation_steps": 100_000,
    "value_warmup": 10,
    "total_timesteps": 250_000,
    "num_envs": 16,
    "n_steps": 128,
    "hidden": (64, 64),
    "validation_seeds": 8,
    "validate_every": 5,
}


def per_gpu_ppo_kwargs(learning_rate: float = 3e-4, gamma: float = 1.0, n_steps: int = 128, num_envs: int = 16) -> dict:
    """MaskablePPO arguments of the C++ main job (apps/gpuplace_train.cpp): rollouts of 128 steps,
    4 epochs of 4 minibatches, learning rate 3e-4 annealed linearly to 0, gamma 1, GAE lambda
    0.95, clip 0.1, no entropy bonus, gradient norm 0.5. ``vf_coef`` is 0.25 because SB3's value
    loss is the mean squared error, twice the C++ trainer's 0.5 * squared error.

    gamma is 1 because DEFER costs no simulated time: with a per-step discount below 1 every DEFER
    postpones the time penalty and looks good, and the policy learns to defer almost always."""
    return {
        "n_steps": n_steps,
        "batch_size": n_steps * num_envs // 4,
        "n_epochs": 4,
        "learning_rate": LinearSchedule(learning_rate, 0.0, 1.0),
        "gamma": gamma,
        "gae_lambda": 0.95,
        "clip_range": 0.1,
        "ent_coef": 0.0,
        "vf_coef": 0.25,
        "max_grad_norm": 0.5,
        "normalize_advantage": True,
    }


def wrap_vec_env(venv: VecEnv, gamma: float = 1.0) -> VecNormalize:
    """Reward normalisation as the C++ trainer does it: rewards divided by the running standard
    deviation of the return discounted by ``gamma`` (reset at episode ends), no clipping, the
    observations untouched (SB3's VecNormalize)."""
    return VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=gamma, clip_reward=np.inf)


def _gpuplace_venv(env):
    """The SB3VecEnv under any VecEnv wrappers, or None."""
    while env is not None:
        if isinstance(env, SB3VecEnv):
            return env
        env = getattr(env, "venv", None) if isinstance(env, VecEnvWrapper) else None
    return None


def _vec_normalize(env):
    while isinstance(env, VecEnvWrapper):
        if isinstance(env, VecNormalize):
            return env
        env = env.venv
    return None


def check_budget(where: str, total_timesteps: int, n_steps: int, num_envs: int, warmup_iterations: int = 0) -> None:
    """A budget that leaves PPO less than one iteration (``n_steps * num_envs`` env steps, after
    ``warmup_iterations`` value warm-up iterations) trains nothing while looking like a run: a
    :class:`gpuplace.ConfigError` naming the budget and what one iteration needs."""
    one = n_steps * num_envs
    warm = warmup_iterations * one
    if total_timesteps - warm < one:
        spent = f" ({warmup_iterations} value warm-up iterations take {warm} of them)" if warm else ""
        raise _core.ConfigError(
            f"{where}: total_timesteps {total_timesteps} is less than one PPO iteration"
            f"{' after the value warm-up' if warm else ''}{spent}: one "
            f"iteration is n_steps * num_envs = {n_steps} * {num_envs} = {one} env steps; give at least {warm + one} "
            f"(or fewer n_steps or num_envs)")


#: Hyperparameters checked by :func:`check_hyperparameters`: (kind, lowest, highest, lowest excluded).
_HYPERPARAMETERS = {
    "total_timesteps": ("int", 1, None, False),
    "imitation_steps": ("int", 0, None, False),
    "value_warmup": ("int", 0, None, False),
    "num_envs": ("int", 1, None, False),
    "n_steps": ("int", 1, None, False),
    "batch_size": ("int", 1, None, False),
    "validation_seeds": ("int", 0, None, False),
    "validate_every": ("int", 1, None, False),
    "learning_rate": ("float", 0.0, math.inf, True),
    "imitation_learning_rate": ("float", 0.0, math.inf, True),
    "gamma": ("float", 0.0, 1.0, True),
    "ent_coef": ("float", 0.0, math.inf, False),
}


def check_hyperparameters(where: str, **values) -> None:
    """Checks training arguments before any work: whole numbers >= their minimum (numpy integers
    too, bools not), finite numbers in range (gamma in (0, 1], learning rates > 0). A
    :class:`gpuplace.ConfigError` naming the function, the argument and the value otherwise."""
    for name, v in values.items():
        kind, lo, hi, lo_open = _HYPERPARAMETERS[name]
        if kind == "int":
            ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= lo
            if not ok:
                raise _core.ConfigError(f"{where}: {name} {v!r}: expected a whole number >= {lo}")
        else:
            if callable(v) and name.endswith("learning_rate"):  # an SB3 schedule
                continue
            ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) \
                and math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
            if not ok:
                interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]" if math.isfinite(hi) else (f"> {lo:g}" if lo_open else f">= {lo:g}")
                raise _core.ConfigError(f"{where}: {name} {v!r}: expected a finite number {'in ' if math.isfinite(hi) else ''}{interval}")
