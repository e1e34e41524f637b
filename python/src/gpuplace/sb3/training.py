"""Behaviour cloning of a C++ heuristic as a warm start (:func:`pretrain`) and the whole training run
(:func:`train_maskable_ppo`, :func:`train_per_gpu`)."""

from __future__ import annotations

import math
import os
import time
from typing import Callable

import numpy as np

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from .. import _core
from .._sb3_vec_env import SB3VecEnv
from ..config import ScenarioLike, make_core_vector_env, scenario_of
from ..progress import progress_bar
from ..torch_net import masked_logits
from .teachers import queue_policy_of, split_teacher, teacher_scenario
from .recipe import _gpuplace_venv, _vec_normalize, check_budget, check_hyperparameters, per_gpu_ppo_kwargs, wrap_vec_env
from .policy import PerGpuPolicy, _policy_of
from .callbacks import KeepBestOnValidation, ProgressBar, _write_rows, make_callback, quiet_logger, tensorboard_logger


def pretrain(
    model,
    teacher: str = "pack",
    steps: int = 400_000,
    *,
    learning_rate: float = 1e-3,
    value_warmup: int = 10,
    seed: int | None = None,
    show_progress: bool = True,
    callback: Callable[[dict], None] | None = None,
) -> dict:
    """Warm start of a MaskablePPO model with a PerGpuPolicy, as the C++ trainer does it:

    1. Behaviour cloning: ``steps`` env steps of the C++ heuristic ``teacher`` acting in
       ``model.n_envs`` copies of the model's env scenario (rolled out in C++, ``model.n_steps`` at
       a time, no Python per step), each batch learnt for ``model.n_epochs`` epochs of minibatches
       of ``model.batch_size`` by cross-entropy on the masked logits (Adam, ``learning_rate``,
       the model's gradient norm clip). The model's reward normaliser (VecNormalize) sees the
       teacher's returns, like the C++ trainer's.
    2. Value warm-up: ``value_warmup`` PPO iterations (``model.learn``) in which only the value
       MLP learns, with fresh Adam moments and the model's initial learning rate.

    Continue with ``model.learn(budget - result["warmup_steps"], reset_num_timesteps=False)`` so
    the learning rate anneals over the whole budget, warm-up included, as in C++.

    A teacher with a queue policy (``"pack+sjf"``) needs the model's env to run under it
    (:func:`teacher_scenario`); another env is refused with a message naming both. In the round
    action mode with ``env.round_advisor`` ``"class_gittins"`` the teacher may be the round planner
    (``"rollout8h20:pack+class_gittins"``, docs/rounds.md): each round its allocation, chosen
    through the slots (its rounds cost what the planner's do, docs/planning.md).

    Returns a dict: ``agreement`` (fraction of the last cloning iteration's samples whose greedy
    action is the teacher's), ``cross_entropy``, ``imitation_steps``, ``warmup_steps``,
    ``seconds``, ``history`` (one dict per cloning iteration). ``callback(row)`` is called after
    each cloning iteration.
    """
    pol = _policy_of(model)
    venv = _gpuplace_venv(model.get_env())
    if venv is None:
        raise ValueError("pretrain: the model's env is not a gpuplace SB3VecEnv (possibly wrapped); "
                         "the teacher acts in copies of its scenario")
    base, queue = split_teacher(teacher)
    if queue is not None and queue_policy_of(venv.scenario) != queue:
        raise _core.ConfigError(
            f'pretrain: teacher "{teacher}" acts under queue policy {queue}, but the model\'s env runs under '
            f"{queue_policy_of(venv.scenario)}; the queue policy is an env setting, so make the env from "
            f'gpuplace.sb3.teacher_scenario(scenario, "{teacher}") (or imitate "{base}" under the env\'s own)'
        )
    N, T = int(model.n_envs), int(model.n_steps)
    per = N * T
    iters = max(0, math.ceil(steps / per))
    if seed is None:
        seed = int(model.seed or 0)
    t0 = time.perf_counter()
    history: list[dict] = []
    if iters:
        vec = make_core_vector_env(venv.scenario, N, int(venv.core.num_threads))
        vec.reset(int(_core.episode_seed(seed, 0x7465, 0)))  # episodes of their own, apart from the model's
        tch = _core.Teacher(teacher, N, seed)
        O, A = int(vec.observation_size), int(vec.num_actions)
        obs = np.empty((T, N, O), np.float32)
        masks = np.empty((T, N, A), np.uint8)
        acts = np.empty((T, N), np.int64)
        rew = np.empty((T, N), np.float64)
        dones = np.empty((T, N), np.bool_)
        norm = _vec_normalize(model.get_env())
        ret = np.zeros(N)
        params = list(pol.parameters())
        opt = torch.optim.Adam(params, lr=learning_rate, eps=1e-5)
        mb = int(model.batch_size)
        pol.set_training_mode(True)
        with progress_bar(total=iters * per, desc=f"cloning {teacher}", disable=not show_progress) as bar:
            for it in range(iters):
                tch.rollout(vec, obs, masks, acts, rew, dones)
                if norm is not None and norm.norm_reward:  # the C++ trainer scales rewards during cloning too
                    for t in range(T):
                        ret = ret * norm.gamma + rew[t]
                        norm.ret_rms.update(ret)
                        ret[dones[t]] = 0
                o = torch.from_numpy(obs.reshape(per, O))
                m = torch.from_numpy(masks.reshape(per, A).view(np.bool_))
                a = torch.from_numpy(acts.reshape(per))
                ce = agree = 0.0
                n_mb = 0
                for _ in range(int(model.n_epochs)):
                    perm = torch.randperm(per)
                    for b in range(0, per - mb + 1, mb):
                        idx = perm[b : b + mb]
                        logits = masked_logits(pol.net.logits(o[idx], m[idx]), m[idx])
                        loss = torch.nn.functional.cross_entropy(logits, a[idx])
                        opt.zero_grad(set_to_none=True)
                        loss.backward()
                        torch.nn.utils.clip_grad_norm_(params, model.max_grad_norm)
                        opt.step()
                        ce += float(loss.detach())
                        agree += float((logits.argmax(-1) == a[idx]).float().mean())
                        n_mb += 1
                row = {"iteration": it + 1, "env_steps": (it + 1) * per, "cross_entropy": ce / max(n_mb, 1),
                       "agreement": agree / max(n_mb, 1), "seconds": time.perf_counter() - t0}
                history.append(row)
                bar.update(per)
                if hasattr(bar, "set_postfix"):
                    bar.set_postfix(agreement=f"{row['agreement']:.3f}", ce=f"{row['cross_entropy']:.3f}")
                if callback is not None:
                    callback(row)
    warm_steps = _value_warmup(model, value_warmup, show_progress) if value_warmup > 0 else 0
    last = history[-1] if history else {"agreement": float("nan"), "cross_entropy": float("nan")}
    return {"agreement": last["agreement"], "cross_entropy": last["cross_entropy"], "imitation_steps": iters * per,
            "warmup_steps": warm_steps, "seconds": time.perf_counter() - t0, "history": history}


def _fresh_optimizer(pol: PerGpuPolicy, lr: float) -> None:
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=lr, **pol.optimizer_kwargs)


def _value_warmup(model, iterations: int, show_progress: bool) -> int:
    """``iterations`` PPO iterations that train only the value MLP (the logits' parameters frozen),
    with fresh Adam moments and the initial learning rate; the optimiser is fresh again after."""
    pol = _policy_of(model)
    lr0 = float(model.lr_schedule(1.0))
    frozen = pol.policy_parameters()
    schedule = model.lr_schedule
    _fresh_optimizer(pol, lr0)
    for p in frozen:
        p.requires_grad_(False)
    steps = iterations * model.n_steps * model.n_envs
    try:
        model.lr_schedule = lambda _: lr0
        model.learn(steps, reset_num_timesteps=True, progress_bar=False,
                    callback=ProgressBar(steps, "value warm-up", show_progress))
    finally:
        model.lr_schedule = schedule
        for p in frozen:
            p.requires_grad_(True)
    # PPO starts with fresh Adam moments (the C++ trainer resets Adam when PPO begins, and the
    # frozen parameters have none)
    _fresh_optimizer(pol, lr0)
    return steps



def train_maskable_ppo(
    scenario: ScenarioLike = "default",
    total_timesteps: int = 50_000,
    num_envs: int = 16,
    seed: int = 0,
    num_threads: int = 1,
    n_steps: int = 128,
    batch_size: int = 256,
    learning_rate: float = 3e-4,
    ent_coef: float = 0.01,
    net_arch=(128, 128),
    gamma: float = 1.0,
    log_csv: str | None = None,
    show_progress: bool = True,
    verbose: int = 0,
    tensorboard_log: str | None = None,
    **ppo_kwargs,
):
    """Trains MaskablePPO with SB3's MlpPolicy on :class:`SB3VecEnv`; returns (model, callback)
    where ``callback.rows`` holds the finished training episodes. gamma is 1 by default (DEFER
    costs no simulated time: with gamma < 1 deferring looks good, see :func:`per_gpu_ppo_kwargs`).
    For the per-GPU policy and the C++ recipe, see :func:`train_per_gpu`."""
    from sb3_contrib import MaskablePPO

    check_hyperparameters("train_maskable_ppo", total_timesteps=total_timesteps, num_envs=num_envs, n_steps=n_steps,
                          batch_size=batch_size, learning_rate=learning_rate, gamma=gamma, ent_coef=ent_coef)
    check_budget("train_maskable_ppo", total_timesteps, n_steps, num_envs)
    torch.set_num_threads(1)
    venv = SB3VecEnv(scenario_of(scenario), num_envs=num_envs, num_threads=num_threads)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=batch_size,
        learning_rate=learning_rate,
        ent_coef=ent_coef,
        gamma=gamma,
        policy_kwargs={"net_arch": list(net_arch)},
        seed=seed,
        verbose=verbose,
        device="cpu",
        **ppo_kwargs,
    )
    if tensorboard_log is not None:
        model.set_logger(tensorboard_logger(tensorboard_log, verbose))
    elif ppo_kwargs.get("tensorboard_log") is None:
        model.set_logger(quiet_logger(verbose))
    cb = make_callback(log_csv, show_progress, total_timesteps)
    model.learn(total_timesteps=total_timesteps, callback=cb)
    return model, cb


def train_per_gpu(
    scenario: ScenarioLike = "default",
    total_timesteps: int = 600_000,
    teacher: str | None = "pack",
    imitation_steps: int = 400_000,
    value_warmup: int = 10,
    num_envs: int = 16,
    n_steps: int = 128,
    seed: int = 1,
    num_threads: int = 1,
    learning_rate: float = 3e-4,
    imitation_learning_rate: float = 1e-3,
    gamma: float = 1.0,
    hidden=(64, 64),
    node_features: bool = True,
    validation_seeds: int = 16,
    validate_every: int = 5,
    log_dir: str | None = None,
    show_progress: bool = True,
    verbose: int = 0,
    tensorboard_log: str | None = None,
    **ppo_kwargs,
):
    """The C++ main job's recipe with MaskablePPO and :class:`PerGpuPolicy`: clone ``teacher`` for
    ``imitation_steps`` env steps, warm the value up for ``value_warmup`` iterations, then PPO for
    the rest of ``total_timesteps`` (warm-up included), keeping the weights with the best greedy
    mean JCT on ``validation_seeds`` validation seeds (checked every ``validate_every`` iterations;
    0 seeds: the last weights).

    A teacher with a queue policy (``"pack+sjf"``) trains (and validates) in the scenario under
    that queue policy (:func:`teacher_scenario`); evaluate the model there too (``info["scenario"]``;
    ``model.gpuplace_queue`` names the queue policy when it is not the scenario's own, and is saved
    with the model: ``python -m gpuplace evaluate --sb3`` applies it).

    Returns ``(model, info)``: info holds ``scenario`` (the one trained in), ``pretrain`` (see
    :func:`pretrain`), ``validation`` (rows of timesteps, val_jct), ``best_val_jct``, ``env_steps``
    (imitation + PPO), ``seconds`` and ``episodes`` (finished training episodes). With
    ``log_dir``: episodes.csv, validation.csv and imitation.csv there. With ``tensorboard_log``: SB3's
    logger writes TensorBoard event files into that folder (:func:`tensorboard_logger`)."""
    from sb3_contrib import MaskablePPO

    check_hyperparameters("train_per_gpu", total_timesteps=total_timesteps, imitation_steps=imitation_steps,
                          value_warmup=value_warmup, num_envs=num_envs, n_steps=n_steps, learning_rate=learning_rate,
                          imitation_learning_rate=imitation_learning_rate, gamma=gamma, validation_seeds=validation_seeds,
                          validate_every=validate_every)
    check_budget("train_per_gpu", total_timesteps, n_steps, num_envs, warmup_iterations=value_warmup)
    torch.set_num_threads(1)
    sc = teacher_scenario(scenario, teacher)
    t0 = time.perf_counter()
    venv = wrap_vec_env(SB3VecEnv(sc, num_envs=num_envs, num_threads=num_threads), gamma=gamma)
    kwargs = per_gpu_ppo_kwargs(learning_rate, gamma, n_steps, num_envs)
    kwargs.update(ppo_kwargs)
    model = MaskablePPO(PerGpuPolicy, venv, policy_kwargs={"hidden": list(hidden), "node_features": node_features},
                        seed=seed, verbose=verbose, device="cpu", **kwargs)
    model.set_logger(quiet_logger(verbose) if tensorboard_log is None else tensorboard_logger(tensorboard_log, verbose))
    queue = queue_policy_of(sc)
    model.gpuplace_queue = queue if queue != queue_policy_of(scenario) else None
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
    val_rows: list[dict] = []
    keep = KeepBestOnValidation(sc, validation_seeds, validate_every, val_rows) if validation_seeds > 0 else None
    pre = {"imitation_steps": 0, "warmup_steps": 0, "history": []}
    if teacher and imitation_steps > 0:
        pre = pretrain(model, teacher, imitation_steps, learning_rate=imitation_learning_rate,
                       value_warmup=value_warmup, seed=seed, show_progress=show_progress)
    elif value_warmup > 0:
        pre["warmup_steps"] = _value_warmup(model, value_warmup, show_progress)
    rest = max(0, total_timesteps - pre["warmup_steps"])
    episodes = make_callback(os.path.join(log_dir, "episodes.csv") if log_dir else None, show_progress, rest)
    callbacks = [episodes] + ([keep] if keep else [])
    model.learn(rest, reset_num_timesteps=False, callback=callbacks)
    if keep:
        keep.restore_best()
    info = {
        "scenario": sc,
        "pretrain": pre,
        "validation": val_rows,
        "best_val_jct": keep.best_jct if keep else float("nan"),
        "best_timesteps": keep.best_timesteps if keep else -1,
        "env_steps": pre["imitation_steps"] + int(model.num_timesteps),
        "seconds": time.perf_counter() - t0,
        "episodes": episodes.rows,
    }
    if log_dir:
        _write_rows(os.path.join(log_dir, "validation.csv"), val_rows)
        _write_rows(os.path.join(log_dir, "imitation.csv"), pre["history"])
    return model, info
