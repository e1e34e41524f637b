"""gpuplace's RLlib RLModule (new API stack, torch): the per-GPU actor-critic of
:mod:`gpuplace.torch_net` (the network SB3's ``PerGpuPolicy`` and the C++ trainer use) behind
RLlib's ``TorchRLModule`` and ``ValueFunctionAPI``.

Observations are the Dict of :mod:`gpuplace.rllib.env`. The logits of invalid actions are set to
the lowest finite float (not -inf: a row with no valid action, the last observation of an
episode, still gives a finite distribution), so an invalid action has probability exactly 0 and
never wins the argmax while any action is valid. Values are ``PerGpuNet.values`` of the
observation (the mask does not enter them).

    spec = RLModuleSpec(module_class=PerGpuRLModule, model_config=module_config(env))
"""

from __future__ import annotations

from typing import Any, Mapping

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from ..torch_net import NetConfig, ObsSpec, PerGpuNet, check_compatible
from .env import MASK_KEY, OBS_KEY


def module_config(observation_space, network: Mapping[str, Any] | None = None) -> dict:
    """The RLModule's ``model_config``: the observation spec read from the env's (Dict)
    observation space and the network options (:class:`gpuplace.torch_net.NetConfig` fields:
    hidden, value_hidden, activation, node_features). Plain data, so it travels to every actor."""
    box = observation_space[OBS_KEY] if hasattr(observation_space, "spaces") else observation_space
    spec = ObsSpec.from_space(box)
    net = dict(network or {})
    cfg = NetConfig(**net) if net else NetConfig(node_features=spec.gpus_per_node > 0)
    return {"obs_spec": spec.to_json(), "network": {"hidden": list(cfg.hidden), "value_hidden": list(cfg.value_hidden),
                                                    "activation": cfg.activation, "node_features": cfg.node_features}}


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with every action whose mask entry is 0 at the lowest finite value of the dtype."""
    return logits.masked_fill(mask <= 0.5, torch.finfo(logits.dtype).min)


class PerGpuRLModule(TorchRLModule, ValueFunctionAPI):
    """The per-GPU actor-critic as an RLlib RLModule (see the module docstring). ``self.net`` is a
    :class:`gpuplace.torch_net.PerGpuNet` (``save_checkpoint`` writes it as a C++ checkpoint)."""

    def setup(self):
        mc = dict(self.model_config or {})
        if "obs_spec" in mc:
            spec = ObsSpec(**mc["obs_spec"])
            space = self.observation_space
            if space is not None and hasattr(space, "spaces"):
                lay = getattr(space[OBS_KEY], "gpuplace_layout", None)
                if lay is not None:
                    check_compatible(spec, ObsSpec.from_space(space[OBS_KEY]), NetConfig(**mc.get("network", {})))
        else:
            mc = module_config(self.observation_space, mc.get("network"))
            spec = ObsSpec(**mc["obs_spec"])
        self.net = PerGpuNet(spec, NetConfig(**mc["network"]))

    def _logits(self, batch: Mapping[str, Any]) -> torch.Tensor:
        obs = batch[Columns.OBS]
        x, mask = obs[OBS_KEY], obs[MASK_KEY]
        return mask_logits(self.net.logits(x, mask > 0.5), mask)

    def _forward(self, batch: Mapping[str, Any], **kwargs) -> dict:
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch)}

    def _forward_train(self, batch: Mapping[str, Any], **kwargs) -> dict:
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch)}

    def compute_values(self, batch: Mapping[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.net.values(batch[Columns.OBS][OBS_KEY])

    @torch.no_grad()
    def greedy_actions(self, obs, masks):
        """The most probable valid action for numpy observations (B, O) and bool masks (B, A),
        through this module's inference forward pass."""
        o = torch.as_tensor(obs, dtype=torch.float32)
        m = torch.as_tensor(masks).to(torch.float32)
        out = self.forward_inference({Columns.OBS: {OBS_KEY: o, MASK_KEY: m}})
        return out[Columns.ACTION_DIST_INPUTS].argmax(-1).numpy()
