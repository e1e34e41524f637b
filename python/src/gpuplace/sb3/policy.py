"""The per-GPU MaskablePPO policy (:class:`PerGpuPolicy`) and its C++ checkpoints."""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

try:
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from .. import _core
from ..config import ScenarioLike, load_scenario
from ..torch_net import NetConfig, ObsSpec, PerGpuNet, check_compatible, masked_logits, read_checkpoint, spec_from_checkpoint
from ..torch_net import load_checkpoint as _load_net
from ..torch_net import save_checkpoint as _save_net
from .recipe import _gpuplace_venv


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
