"""Stable-Baselines3 (sb3-contrib MaskablePPO) on gpuplace: :class:`SB3VecEnv` (the VecEnv over one
C++ vector env), the per-GPU policy, behaviour cloning of a C++ heuristic as a warm start, and the
training recipe of the C++ reference PPO (needs the [sb3] extra).

    from sb3_contrib import MaskablePPO
    from gpuplace.sb3 import PerGpuPolicy, SB3VecEnv, per_gpu_ppo_kwargs, pretrain, wrap_vec_env
    venv = wrap_vec_env(SB3VecEnv("default", num_envs=16))   # + reward normalisation
    model = MaskablePPO(PerGpuPolicy, venv, **per_gpu_ppo_kwargs(), seed=1)
    stats = pretrain(model, teacher="pack", steps=400_000)          # clone, then value warm-up
    model.learn(600_000 - stats["warmup_steps"], reset_num_timesteps=False)

or all of it, with selection on validation seeds, in :func:`train_per_gpu` (``python -m gpuplace
train-sb3``). A teacher ``"<heuristic>+<queue>"`` (e.g. ``"pack+sjf"``) acts under that queue
policy, which is an env setting: the model's env must run under it (:func:`teacher_scenario`
makes such a scenario); :func:`pretrain` refuses another env with a message that says so.

The package's parts: :mod:`.teachers` (queue policies and teachers), :mod:`.models` (model files and
the scenario a model acts in), :mod:`.policy` (the per-GPU policy and C++ checkpoints),
:mod:`.recipe` (the C++ trainer's settings and argument checks), :mod:`.callbacks` (progress,
validation, logs) and :mod:`.training` (cloning and the whole run).
"""

from __future__ import annotations

from .._sb3_vec_env import SB3VecEnv
from .teachers import queue_policy_of, split_teacher, teacher_scenario, with_queue
from .recipe import NEWCOMER_RECIPE, check_budget, check_hyperparameters, per_gpu_ppo_kwargs, wrap_vec_env
from .policy import PerGpuPolicy, checkpoint_policy_kwargs, load_cpp_checkpoint, save_cpp_checkpoint
from .models import load_maskable_ppo, model_file, model_layout, model_queue, save_model, scenario_for_model
from .callbacks import KeepBestOnValidation, ProgressBar, VALIDATION_SEED_BASE, make_callback, quiet_logger, tensorboard_logger
from .training import pretrain, train_maskable_ppo, train_per_gpu

__all__ = [
    "KeepBestOnValidation",
    "NEWCOMER_RECIPE",
    "PerGpuPolicy",
    "ProgressBar",
    "SB3VecEnv",
    "VALIDATION_SEED_BASE",
    "check_budget",
    "check_hyperparameters",
    "checkpoint_policy_kwargs",
    "load_cpp_checkpoint",
    "load_maskable_ppo",
    "make_callback",
    "model_file",
    "model_layout",
    "model_queue",
    "per_gpu_ppo_kwargs",
    "pretrain",
    "queue_policy_of",
    "quiet_logger",
    "save_cpp_checkpoint",
    "save_model",
    "scenario_for_model",
    "split_teacher",
    "teacher_scenario",
    "tensorboard_logger",
    "train_maskable_ppo",
    "train_per_gpu",
    "with_queue",
    "wrap_vec_env",
]
