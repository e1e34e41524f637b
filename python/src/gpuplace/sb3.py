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
"""

from __future__ import annotations

import copy
import csv
import math
import os
import time
from typing import Any, Callable, Mapping

import numpy as np

try:
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.utils import LinearSchedule
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from . import _core
from ._sb3_vec_env import SB3VecEnv
from .config import DURATIONS, QUEUES, ScenarioLike, durations_of, load_scenario, make_core_vector_env, queue_name, queue_overrides, scenario_of
from ._files import atomic_open, check_input_file
from .progress import progress_bar
from .spaces import INFORMATION, LAYOUT_ATTR
from .torch_net import (LayoutError, NetConfig, ObsSpec, PerGpuNet, check_compatible, masked_logits, read_checkpoint,
                        spec_from_checkpoint)
from .torch_net import load_checkpoint as _load_net
from .torch_net import save_checkpoint as _save_net

#: Episode seeds the validation of :func:`train_per_gpu` uses: 2000000 + i, disjoint from the
#: held-out seeds (1000000 + i), as gpuplace-train's.
VALIDATION_SEED_BASE = 2_000_000


# ---- queue policies and teachers ---------------------------------------------------------------


def split_teacher(teacher: str) -> tuple[str, str | None]:
    """``"pack+sjf"`` -> ``("pack", "sjf")``; ``"pack"`` -> ``("pack", None)``. Unknown heuristics or
    queue policies raise :class:`gpuplace.ConfigError` naming the known ones."""
    _core.Heuristic(teacher)  # validates both parts
    base, _, queue = teacher.partition("+")
    return base, queue or None


def queue_policy_of(scenario: ScenarioLike) -> str:
    """The queue policy name a scenario runs under (fifo, backfill, sjf, fewest_gpus), or a
    description when it is none of them (e.g. sjf without backfill)."""
    env = load_scenario(scenario)["env"]
    return queue_name(env["queue_policy"], env["backfill"])


def with_queue(scenario: ScenarioLike, queue: str) -> dict:
    """The scenario run under a queue policy (fifo, backfill, sjf, fewest_gpus, las, 2d_las, gittins,
    sjf_oracle, srtf_oracle), as the harness
    runs ``"<heuristic>+<queue>"``."""
    return load_scenario(scenario, queue_overrides(queue))


def teacher_scenario(scenario: ScenarioLike, teacher: str | None) -> dict:
    """The scenario a policy imitating ``teacher`` is trained and evaluated in: under the teacher's
    queue policy when it names one (``"pack+sjf"``), else unchanged."""
    sc = load_scenario(scenario)
    if not teacher:
        return sc
    _, queue = split_teacher(teacher)
    return with_queue(sc, queue) if queue else sc


# ---- model files -------------------------------------------------------------------------------


def model_file(path: str | os.PathLike) -> str:
    """The file a MaskablePPO model path names (SB3 adds ".zip" to a path without it); a
    FileNotFoundError naming the path when there is none."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        return check_input_file(path, "model")  # a FIFO or a device is refused, not read
    if not path.endswith(".zip") and os.path.isfile(path + ".zip"):
        return path + ".zip"
    what = "is a folder, not a model file" if os.path.isdir(path) else "does not exist"
    raise FileNotFoundError(f"model {path} {what} (a MaskablePPO .zip, e.g. train-sb3's OUT/maskable_ppo.zip)")


def load_maskable_ppo(path: str | os.PathLike, device: str = "cpu"):
    """Loads a MaskablePPO model (sb3-contrib) from ``path``. A missing file is a FileNotFoundError
    naming the path; a truncated or corrupt file a :class:`gpuplace.CheckpointError` naming the
    file (not the zipfile / pickle / SB3 error it comes from, which is chained)."""
    file = check_input_file(model_file(path), "model")
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(file, device=device)
    except Exception as e:  # SB3 reports a bad file as BadZipFile, EOFError, KeyError, AssertionError, pickle's...
        raise _core.CheckpointError(
            f"model {file}: cannot be loaded as a MaskablePPO model (truncated, corrupt or not an SB3 .zip): "
            f"{type(e).__name__}: {e}") from e


def save_model(model, path: str | os.PathLike) -> str:
    """``model.save(path)``, atomically (the file is the old one or the new one, never a part):
    SB3 writes a temporary .zip in the same folder, renamed over ``path``. A model with non-finite
    weights (a diverged training) is refused with a :class:`gpuplace.CheckpointError` and nothing
    is written."""
    from ._files import atomic_target

    path = os.fspath(path)
    if not path.endswith(".zip"):
        path += ".zip"  # as SB3 names it
    bad = [n for n, p in getattr(model, "policy", model).named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise _core.CheckpointError(f"model {path}: not written: non-finite weights (NaN or inf) in {', '.join(bad[:4])}"
                                    f"{' ...' if len(bad) > 4 else ''}; the training diverged")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_target(path) as tmp:
        model.save(tmp)
    return path


def model_layout(model) -> dict:
    """The gpuplace observation layout a model was built on (its observation space's
    ``gpuplace_layout``: segments, queue settings, information setting), or {} for a model built
    on another env."""
    space = getattr(model, "observation_space", None) or getattr(getattr(model, "policy", None), "observation_space", None)
    return dict(getattr(space, LAYOUT_ATTR, None) or {})


def model_queue(model) -> str | None:
    """The queue policy a model acts under (fifo, backfill, sjf, fewest_gpus or a description):
    ``model.gpuplace_queue`` when set (train-sb3 sets it for a teacher's queue policy), else the
    one of the env the model was built on (recorded in its observation space); None when the
    model records neither."""
    queue = getattr(model, "gpuplace_queue", None)
    if queue:
        return queue
    q = model_layout(model).get("queue")
    return queue_name(q["queue_policy"], q["backfill"]) if q else None


def scenario_for_model(model, scenario: ScenarioLike, name: str = "maskable_ppo",
                       queue: str | None = None) -> tuple[dict, str]:
    """The scenario a model acts in and the name of its row: the scenario under the model's queue
    policy (:func:`model_queue`), named ``name+<queue>`` when that is not the scenario's own. With
    ``queue`` (a queue policy name, as ``evaluate --queue`` gives it), the scenario under that
    queue policy instead, named ``name+<queue>`` always, whatever the model was trained under. A
    :class:`gpuplace.torch_net.LayoutError` naming what differs when the model cannot act on the
    scenario's observations (another queue window or features; an MlpPolicy on another number of
    GPUs; another information setting), before any episode runs."""
    from .config import make_core_env

    sc = load_scenario(scenario)
    lay = model_layout(model)
    info = lay.get("information", INFORMATION)
    if info not in DURATIONS:
        raise LayoutError(f'the model observes under information setting "{info}"; this gpuplace provides '
                          f'{", ".join(DURATIONS)}')
    if queue is not None:
        sc = with_queue(sc, queue)
        name = f"{name}+{queue}"
        queue = None
    else:
        queue = model_queue(model)
    if queue and queue_policy_of(sc) != queue:
        q = lay.get("queue")
        sc = with_queue(sc, queue) if queue in QUEUES or not q else load_scenario(sc, {"env": dict(q)})
        name = f"{name}+{queue}"
    if durations_of(sc) != info:
        raise LayoutError(f'the model was trained with durations {info} and scenario {sc.get("name", "custom")} has '
                          f'durations {durations_of(sc)}: a model acts only in the information setting it was trained in')
    core = make_core_env(sc)
    want = ObsSpec.from_env(core)
    what = f"scenario {sc.get('name', 'custom')}"
    pol = getattr(model, "policy", model)
    if isinstance(pol, PerGpuPolicy):
        check_compatible(pol.obs_spec, want, pol.net_config, what=what)
    else:
        have_obs = int(np.prod(pol.observation_space.shape))
        have_act = int(getattr(pol.action_space, "n", -1))
        if (have_obs, have_act) != (int(core.observation_size), int(core.num_actions)):
            raise LayoutError(
                f"the model ({type(pol).__name__}) does not fit {what}: it acts on observations of {have_obs} values "
                f"and {have_act} actions, the scenario's have {int(core.observation_size)} and "
                f"{int(core.num_actions)}; a policy over the whole observation (such as MlpPolicy) acts only on the "
                "cluster, queue window and features it was trained on (a PerGpuPolicy acts on any number of GPUs)")
    return sc, name


# ---- the per-GPU policy ------------------------------------------------------------------------

class PerGpuPolicy(MaskableActorCriticPolicy):
    """A MaskablePPO policy whose network is :class:`gpuplace.torch_net.PerGpuNet`, the twin of the
    C++ per_gpu network: one small MLP scores every GPU from its features (and its node's mean and
    max) plus the job / queue / global context, a context MLP gives DEFER's logit, the value MLP
    reads the context and the mean of each per-GPU feature. Its weights do not depend on the number
    of GPUs. The layout comes from the env's observation space (gpuplace envs carry it), or from
    ``obs_spec``. Masked actions get probability 0 (sb3-contrib's masked categorical).

    ``MaskablePPO(PerGpuPolicy, env, policy_kwargs={"hidden": [64, 64], "node_features": True})``

    Args (``policy_kwargs``):
        hidden: layers of the GPU scorer (the first is shared by the GPU and context inputs).
        value_hidden: layers of the value MLP.
        activation: "tanh" or "relu".
        node_features: also score each GPU from the mean and max of every feature over its node.
        obs_spec: an :class:`ObsSpec` (or its dict) for observation spaces without a gpuplace layout.
    """

    def __init__(
        self,
        observation_space,
        action_space,
        lr_schedule,
        hidden=(64, 64),
        value_hidden=(64, 64),
        activation: str = "tanh",
        node_features: bool = True,
        obs_spec: ObsSpec | Mapping[str, int] | None = None,
        optimizer_class=torch.optim.Adam,
        optimizer_kwargs: dict | None = None,
        **unused,
    ):
        if unused:
            raise TypeError(f"PerGpuPolicy: unknown argument(s) {sorted(unused)} (known: hidden, value_hidden, "
                            "activation, node_features, obs_spec, optimizer_class, optimizer_kwargs)")
        if obs_spec is None:
            spec = ObsSpec.from_space(observation_space)
        elif isinstance(obs_spec, ObsSpec):
            spec = obs_spec
        else:
            spec = ObsSpec(**dict(obs_spec))
        if spec.obs_size != int(np.prod(observation_space.shape)) or spec.num_actions != int(action_space.n):
            raise ValueError(f"PerGpuPolicy: obs_spec {spec.to_json()} gives observations of {spec.obs_size} and "
                             f"{spec.num_actions} actions; the spaces have {int(np.prod(observation_space.shape))} and "
                             f"{int(action_space.n)}")
        self.obs_spec = spec
        self.net_config = NetConfig(hidden=tuple(hidden), value_hidden=tuple(value_hidden), activation=activation,
                                    node_features=node_features)
        super().__init__(observation_space, action_space, lr_schedule, optimizer_class=optimizer_class,
                         optimizer_kwargs=optimizer_kwargs)

    def _build(self, lr_schedule) -> None:
        self.net = PerGpuNet(self.obs_spec, self.net_config)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        for k in ("net_arch", "activation_fn", "ortho_init", "features_extractor_class", "features_extractor_kwargs"):
            data.pop(k, None)
        c = self.net_config
        data.update(hidden=list(c.hidden), value_hidden=list(c.value_hidden), activation=c.activation,
                    node_features=c.node_features, obs_spec=self.obs_spec.to_json())
        return data

    def policy_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters of the logits (GPU scorer and DEFER), not of the value."""
        n = self.net
        return [p for m in (n.gpu_in, n.ctx_in, n.tail, n.defer) for p in m.parameters()]

    def _obs(self, obs) -> torch.Tensor:
        return obs.float()

    def _masks(self, action_masks, rows: int) -> torch.Tensor | None:
        # one row per observation, as wide as the observations' cluster (any number of GPUs)
        if action_masks is None:
            return None
        return torch.as_tensor(action_masks, dtype=torch.bool, device=self.device).reshape(rows, -1)

    def _distribution(self, logits, masks):
        d = self.action_dist.proba_distribution(action_logits=logits)
        if masks is not None:
            d.apply_masking(masks)
        return d

    def forward(self, obs, deterministic: bool = False, action_masks=None):
        m = self._masks(action_masks, obs.shape[0])
        logits, values = self.net(self._obs(obs), m)  # with masks, only the valid GPUs are scored
        d = self._distribution(logits, m)
        actions = d.get_actions(deterministic=deterministic)
        return actions, values.unsqueeze(-1), d.log_prob(actions)

    def evaluate_actions(self, obs, actions, action_masks=None):
        m = self._masks(action_masks, obs.shape[0])
        logits, values = self.net(self._obs(obs), m)
        d = self._distribution(logits, m)
        return values.unsqueeze(-1), d.log_prob(actions), d.entropy()

    def get_distribution(self, obs, action_masks=None):
        m = self._masks(action_masks, obs.shape[0])
        return self._distribution(self.net.logits(self._obs(obs), m), m)

    def predict_values(self, obs) -> torch.Tensor:
        return self.net.values(self._obs(obs)).unsqueeze(-1)

    @torch.no_grad()
    def greedy_actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The most probable valid action of each row (numpy in, numpy out), without SB3's predict()."""
        o = torch.as_tensor(obs, dtype=torch.float32, device=self.device).reshape(-1, np.shape(obs)[-1])
        m = self._masks(masks, o.shape[0])
        return masked_logits(self.net.logits(o, m), m).argmax(-1).cpu().numpy()


# ---- C++ checkpoints ---------------------------------------------------------------------------


def _policy_of(model_or_policy) -> PerGpuPolicy:
    p = getattr(model_or_policy, "policy", model_or_policy)
    if not isinstance(p, PerGpuPolicy):
        raise TypeError(f"expected a PerGpuPolicy or a model using one, got {type(p).__name__}")
    return p


def checkpoint_policy_kwargs(path) -> dict:
    """``policy_kwargs`` for a PerGpuPolicy with the network config of a C++ checkpoint."""
    doc, source = read_checkpoint(path)
    _, cfg = spec_from_checkpoint(doc, source)
    if cfg.normalize_obs:
        raise _core.CheckpointError(f"checkpoint {source}: /network/normalize_obs: PerGpuPolicy trains without observation "
                                    "normalisation; load this checkpoint with gpuplace.torch_net.load_checkpoint to act with it")
    return {"hidden": list(cfg.hidden), "value_hidden": list(cfg.value_hidden), "activation": cfg.activation,
            "node_features": cfg.node_features}


def load_cpp_checkpoint(model_or_policy, path) -> dict:
    """Loads the weights of a C++ per_gpu checkpoint (``gpuplace-train``'s ``ppo.json``) into a
    PerGpuPolicy (or a model using one). The network config must be the policy's and the per-GPU
    features and context the env's (the number of GPUs may differ); anything else is an error
    naming what differs, and the policy is left unchanged. Returns the checkpoint's other fields
    (``scenario``, ``ppo``, ``obs_spec``, ``network``)."""
    pol = _policy_of(model_or_policy)
    net, meta = _load_net(path)
    src = path if isinstance(path, (str, os.PathLike)) else "<dict>"
    if net.config != pol.net_config:
        mine, theirs = pol.net_config.to_json(), net.config.to_json()
        diff = {k: (theirs[k], mine[k]) for k in mine if mine[k] != theirs[k]}
        raise _core.CheckpointError(f"checkpoint {src}: network config differs from the policy's (checkpoint, policy): {diff}; "
                                    "make the policy with policy_kwargs=checkpoint_policy_kwargs(path)")
    check_compatible(net.spec, pol.obs_spec, net.config, what=f"this policy's env (checkpoint {src})")
    pol.net.load_state_dict(net.state_dict())
    return meta


def save_cpp_checkpoint(model_or_policy, path, scenario: ScenarioLike | None = None, ppo: Mapping[str, Any] | None = None) -> None:
    """Writes a PerGpuPolicy as a C++ checkpoint (``gpuplace-train --load``, ``gpuplace._core.load_checkpoint``).
    ``scenario``: the one recorded (default: the model's env's)."""
    pol = _policy_of(model_or_policy)
    if scenario is None:
        env = getattr(model_or_policy, "env", None)
        venv = _gpuplace_venv(env) if env is not None else None
        if venv is None:
            raise ValueError("save_cpp_checkpoint: pass the scenario (the policy has no gpuplace env to take it from)")
        scenario = venv.scenario
    _save_net(path, pol.net, load_scenario(scenario), ppo)


# ---- training ----------------------------------------------------------------------------------


#: The newcomer recipe (docs/python.md, "MaskablePPO in ten minutes"): :func:`train_per_gpu`'s
#: arguments for the default scenario on 2 cores, about 5 minutes: MaskablePPO with
#: :class:`PerGpuPolicy`, 100k env steps cloning pack, 10 value-only iterations, PPO to 250k env
#: steps (the C++ trainer's settings, :func:`per_gpu_ppo_kwargs`), the best of the greedy policies
#: on 8 validation seeds kept. scripts/sb3_recipe.py measures it.
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
    (:func:`teacher_scenario`); another env is refused with a message naming both.

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


class ProgressBar(BaseCallback):
    """A tqdm progress bar over the env steps of ``model.learn()``:
    ``model.learn(100_000, callback=ProgressBar())``. It works with the packages gpuplace installs
    (SB3's own ``progress_bar=True`` also needs rich). ``total`` defaults to the steps this
    ``learn()`` call makes."""

    def __init__(self, total: int | None = None, desc: str = "MaskablePPO", show: bool = True):
        super().__init__()
        self._total, self._desc, self._show, self._bar = total, desc, show, None

    def _on_training_start(self) -> None:
        total = self._total
        if total is None:
            total = max(0, int(self.locals.get("total_timesteps", 0)) - int(self.model.num_timesteps))
        self._bar = progress_bar(total=total, desc=self._desc, disable=not self._show)

    def _on_step(self) -> bool:
        self._bar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        self._bar.close()


class KeepBestOnValidation(BaseCallback):
    """Evaluates the greedy policy on validation seeds every ``every`` PPO iterations (and at the
    start and the end of training) and keeps the weights with the lowest mean JCT, as
    gpuplace-train does; :meth:`restore_best` puts them back into the policy."""

    def __init__(self, scenario: ScenarioLike, seeds: int | list[int] = 16, every: int = 5, log: list | None = None):
        super().__init__()
        self.scenario = load_scenario(scenario)
        self.seeds = list(range(VALIDATION_SEED_BASE, VALIDATION_SEED_BASE + seeds)) if isinstance(seeds, int) else list(seeds)
        self.every = max(1, int(every))
        self.best_jct = math.inf
        self.best_state: dict | None = None
        self.best_timesteps = -1
        self.rows = log if log is not None else []
        self._rollouts = 0

    def validate(self) -> float:
        from .evaluation import evaluate_agent, maskable_policy

        rep = evaluate_agent(maskable_policy(self.model), self.scenario, self.seeds, name="validation")
        jct = float(rep.summary("validation", "avg_jct")[0])
        self.rows.append({"timesteps": int(self.model.num_timesteps), "val_jct": jct})
        if jct < self.best_jct:
            self.best_jct, self.best_timesteps = jct, int(self.model.num_timesteps)
            self.best_state = copy.deepcopy(self.model.policy.state_dict())
        return jct

    def _on_training_start(self) -> None:
        if self.best_state is None:
            self.validate()

    def _on_rollout_start(self) -> None:
        # called before each rollout: after the previous iteration's update
        if self._rollouts and self._rollouts % self.every == 0:
            self.validate()
        self._rollouts += 1

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.validate()

    def restore_best(self) -> None:
        if self.best_state is not None:
            self.model.policy.load_state_dict(self.best_state)


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


def tensorboard_logger(folder: str | os.PathLike, verbose: int = 0):
    """SB3's own logger writing TensorBoard event files into ``folder`` (and SB3's table to the
    standard output when ``verbose``): pass it to ``model.set_logger()``. Needs the ``tensorboard``
    package (in the ``sb3`` extra)."""
    from stable_baselines3.common.logger import configure

    try:
        import tensorboard  # noqa: F401  (SB3 writes through torch.utils.tensorboard, which needs it)
    except ImportError:
        raise ImportError("--tensorboard needs the tensorboard package: pip install './python[sb3]'") from None
    return configure(os.fspath(folder), ["tensorboard"] + (["stdout"] if verbose else []))


def quiet_logger(verbose: int = 0):
    """An SB3 logger that writes nowhere but the standard output (when ``verbose``): SB3's default
    logger makes a new empty ``SB3-<date>`` directory in the temporary directory on every
    ``learn()`` call without a tensorboard log. Pass it to ``model.set_logger()``."""
    import sys

    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose else [])


def make_callback(log_csv: str | None = None, show_progress: bool = True, total: int | None = None):
    """A callback that records every finished episode (timesteps, return, length, avg_jct,
    avg_comm_cost) from the VecEnv's infos, optionally into a CSV (the learning curve), and shows a
    progress bar."""

    class EpisodeLog(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rows: list[dict[str, Any]] = []
            self._bar = None
            self._file = None
            self._writer = None

        def _on_training_start(self) -> None:
            self._bar = progress_bar(total=total, desc="MaskablePPO", disable=not show_progress)
            if log_csv:
                os.makedirs(os.path.dirname(os.path.abspath(log_csv)), exist_ok=True)
                new = not os.path.exists(log_csv) or not self.rows
                self._file = open(log_csv, "w" if new else "a", newline="")
                self._writer = csv.DictWriter(
                    self._file, fieldnames=["timesteps", "episode_return", "length", "avg_jct", "avg_comm_cost"]
                )
                if new:
                    self._writer.writeheader()

        def _on_step(self) -> bool:
            n = self.training_env.num_envs
            self._bar.update(n)
            for info in self.locals.get("infos", ()):
                m = info.get("metrics")
                if m is None:
                    continue
                row = {
                    "timesteps": self.num_timesteps,
                    "episode_return": m["episode_return"] if "episode_return" in m else info["episode"]["r"],
                    "length": info["episode"]["l"],
                    "avg_jct": m["avg_jct"],
                    "avg_comm_cost": m["avg_comm_cost"],
                }
                self.rows.append(row)
                if self._writer:
                    self._writer.writerow(row)
            return True

        def _on_training_end(self) -> None:
            if self._bar is not None:
                self._bar.close()
            if self._file:
                self._file.close()
                self._file = self._writer = None
                _write_rows(log_csv, self.rows)  # the final form, whole and atomically (the live one is appended)

    return EpisodeLog()


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


def _write_rows(path: str, rows: list[dict]) -> None:
    if not rows:
        return
    with atomic_open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


__all__ = [
    "KeepBestOnValidation",
    "check_budget",
    "check_hyperparameters",
    "load_maskable_ppo",
    "model_file",
    "save_model",
    "PerGpuPolicy",
    "ProgressBar",
    "SB3VecEnv",
    "VALIDATION_SEED_BASE",
    "checkpoint_policy_kwargs",
    "load_cpp_checkpoint",
    "make_callback",
    "model_layout",
    "model_queue",
    "scenario_for_model",
    "per_gpu_ppo_kwargs",
    "pretrain",
    "queue_policy_of",
    "quiet_logger",
    "save_cpp_checkpoint",
    "split_teacher",
    "tensorboard_logger",
    "teacher_scenario",
    "train_maskable_ppo",
    "train_per_gpu",
    "with_queue",
    "wrap_vec_env",
]
