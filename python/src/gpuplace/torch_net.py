"""The per-GPU actor-critic network in PyTorch, the twin of the C++ ``per_gpu`` network
(include/gpuplace/rl/actor_critic.hpp), with its checkpoint format (include/gpuplace/rl/checkpoint.hpp).

One small MLP scores every GPU from its own features (and, with ``node_features``, the mean and the
max of each feature over its node) plus the job / queue / global context; a context MLP gives
DEFER's logit; the value MLP reads the context and the mean of every per-GPU feature. The weights
do not depend on the number of GPUs: a network acts on any cluster whose observations have the
same per-GPU features and context (the number of GPUs is read from the width of the observation).

Plain PyTorch, no RL framework: :mod:`gpuplace.sb3` wraps it as a MaskablePPO policy, and other
frameworks can wrap the same module. Needs torch (the ``sb3`` extra pins ``torch==2.13.0``).

    spec = ObsSpec.from_space(env.observation_space)        # or ObsSpec.from_layout(...)
    net = PerGpuNet(spec, NetConfig(hidden=(64, 64), node_features=True))
    logits, values = net(obs)                                # (B, G + 1), (B,)
    action = masked_logits(logits, masks).argmax(-1)
    net, meta = load_checkpoint("out/train/ppo.json")        # a C++ checkpoint
    save_checkpoint("ppo.json", net, scenario=meta["scenario"])  # readable by gpuplace-train --load
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from ._core import CheckpointError, ConfigError
from ._files import atomic_open
from .spaces import LAYOUT_ATTR, layout_of

#: Checkpoint format and version read and written here (rl/checkpoint.hpp's "gpuplace-ppo", version 1).
CHECKPOINT_FORMAT = "gpuplace-ppo"
CHECKPOINT_VERSION = 1


#: Batches with at least this many GPU rows (batch x GPUs) score only the valid GPUs when given
#: the masks (measured on the default scenario, 1 thread: a minibatch of 512 x 64 GPUs, 22% of
#: them valid, learns in 16 ms instead of 61 ms; a rollout step of 16 x 64 is faster without).
SUBSET_ROWS = 4096

_PART_NAMES = ("gpu_in", "ctx_in", "tail", "defer", "value")
_NETWORK_KEYS = ("architecture", "hidden", "value_hidden", "activation", "shared_trunk", "normalize_obs", "node_features")


class LayoutError(ConfigError):
    """An observation layout or a network config does not fit a network; the message says what differs."""


# ---- observation layout ----------------------------------------------------------------------


@dataclass(frozen=True)
class ObsSpec:
    """Where the per-item features and the context sit in the flat observation (C++ ``obs_spec``):
    ``gpu_features`` segments of ``num_gpus`` values first (feature-major), then ``context``
    values. The items are what every action but the last chooses: GPUs (``items`` "gpu", the GPU
    action mode), candidate placements ("candidate") or queue slots ("slot"); ``num_gpus`` counts
    them. ``gpus_per_node``: GPUs are numbered node by node, this many per node (0 = unknown).
    ``names``: what each input is, the per-item segments' names then each context value's
    ``"<segment>.<field>"`` (empty when unknown): saved with a network, so that it refuses an env
    whose observation differs, naming the difference (:func:`check_compatible`)."""

    num_gpus: int
    gpu_features: int
    context: int
    gpus_per_node: int = 0
    items: str = "gpu"
    names: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "names", tuple(str(n) for n in self.names))

    @property
    def obs_size(self) -> int:
        return self.num_gpus * self.gpu_features + self.context

    @property
    def num_actions(self) -> int:
        return self.num_gpus + 1

    def same_shape(self, other: "ObsSpec") -> bool:
        """Every count and the items equal (not the names, which either side may not record)."""
        return (self.num_gpus, self.gpu_features, self.context, self.gpus_per_node, self.items) == (
            other.num_gpus, other.gpu_features, other.context, other.gpus_per_node, other.items)

    def name_difference(self, other: "ObsSpec", mine: str = "the network", theirs: str = "the env") -> str:
        """How this spec's inputs differ from ``other``'s by name, as the C++ ``obs_spec::name_difference``
        says it ("" when they do not or either records none)."""
        if not self.names or not other.names or self.names == other.names:
            return ""

        def only(a, b):
            rest = [x for x in a if x not in set(b)]
            text = ", ".join(rest[:6])
            return text + (f" and {len(rest) - 6} more" if len(rest) > 6 else "")

        a, b = only(self.names, other.names), only(other.names, self.names)
        why = []
        if a:
            why.append(f"{mine} reads {a}, which {theirs} does not observe")
        if b:
            why.append(f"{theirs} observes {b}, which {mine} was not trained on")
        return "; ".join(why) or "the same inputs in another order"

    @classmethod
    def from_layout(cls, segments: Sequence[Mapping[str, Any]], observation_size: int, num_gpus: int,
                    gpus_per_node: int = 0) -> "ObsSpec":
        """Like the C++ ``obs_spec::of``: the leading segments whose ``item`` is set (what they have a
        value for: "gpu", "candidate" or "slot") of ``num_gpus`` values (the items: num_actions - 1) at
        consecutive offsets are the per-item features, the rest is the context. A layout recorded
        without ``item`` (an observation space saved before it was) is read by the segments' names:
        ``<items>_*``, items being the first segment's name up to its '_'."""
        if segments and "item" not in segments[0]:  # a layout recorded before "item"
            first = str(segments[0]["name"])
            legacy = first.split("_", 1)[0] if "_" in first else "gpu"
            segments = [dict(s, item=legacy if str(s["name"]).startswith(legacy + "_") else "") for s in segments]
        items = str(segments[0]["item"]) if segments and segments[0]["item"] else "gpu"
        f = off = 0
        names = []
        for s in segments:
            if str(s["item"]) != items or int(s["size"]) != num_gpus or int(s["offset"]) != off:
                break
            f += 1
            off += num_gpus
            names.append(str(s["name"]))
        for s in segments:
            if int(s["offset"]) >= off:
                names += [f'{s["name"]}.{x}' for x in s.get("fields", ())]
        context = int(observation_size) - off
        if len(names) != f + context:
            names = []  # a layout without every field's name
        return cls(int(num_gpus), f, context, int(gpus_per_node) if items == "gpu" else 0, items, tuple(names))

    @classmethod
    def from_space(cls, space) -> "ObsSpec":
        """From an observation space made by a gpuplace env (it carries the layout in
        ``space.gpuplace_layout``)."""
        lay = getattr(space, LAYOUT_ATTR, None)
        if lay is None:
            raise LayoutError(
                f"the observation space {space!r} carries no gpuplace observation layout (attribute "
                f"{LAYOUT_ATTR!r}); build the env with gpuplace.gymnasium, gpuplace.sb3 or gpuplace.rllib "
                "or pass the layout explicitly (ObsSpec.from_env(env))"
            )
        return cls.from_layout(lay["segments"], int(np.prod(space.shape)), lay.get("num_items", lay["num_gpus"]),
                               lay.get("gpus_per_node", 0))

    @classmethod
    def from_env(cls, env) -> "ObsSpec":
        """From any gpuplace env object with ``observation_layout`` (Python or C++ core, single or vector)."""
        core = getattr(env, "core", env)
        topo = core.topology()
        return cls.from_layout(core.observation_layout, int(core.observation_size), int(core.num_actions) - 1,
                               int(topo.get("gpus_per_node", 0)))

    def to_json(self) -> dict:
        j = {"num_gpus": self.num_gpus, "gpu_features": self.gpu_features, "context": self.context,
             "gpus_per_node": self.gpus_per_node}
        if self.items != "gpu":  # as the C++ checkpoint writes it
            j["items"] = self.items
        if self.names:
            j["names"] = list(self.names)
        return j


# ---- network config --------------------------------------------------------------------------


@dataclass(frozen=True)
class NetConfig:
    """The C++ ``network_config`` of a per_gpu network (the defaults of gpuplace-train's main job)."""

    hidden: tuple[int, ...] = (64, 64)
    value_hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    node_features: bool = True
    normalize_obs: bool = False

    def __post_init__(self):
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        object.__setattr__(self, "value_hidden", tuple(int(h) for h in self.value_hidden))
        if not self.hidden or not self.value_hidden or min(self.hidden + self.value_hidden) < 1:
            raise LayoutError(f"network: hidden {list(self.hidden)} and value_hidden {list(self.value_hidden)} "
                              "must be non-empty lists of sizes >= 1")
        if self.activation not in ("tanh", "relu"):
            raise LayoutError(f'network: unknown activation "{self.activation}" (allowed: tanh, relu)')

    def to_json(self) -> dict:
        return {"architecture": "per_gpu", "hidden": list(self.hidden), "value_hidden": list(self.value_hidden),
                "activation": self.activation, "shared_trunk": False, "normalize_obs": self.normalize_obs,
                "node_features": self.node_features}

    @classmethod
    def from_json(cls, j: Mapping[str, Any], where: str = "/network") -> "NetConfig":
        """Reads a C++ network config; options this module does not implement are refused by name."""
        unknown = sorted(set(j) - set(_NETWORK_KEYS))
        if unknown:
            raise LayoutError(f"{where}: network option(s) {unknown} not supported by gpuplace.torch_net "
                              f"(known: {', '.join(_NETWORK_KEYS)})")
        arch = j.get("architecture", "per_gpu")
        if arch != "per_gpu":
            raise LayoutError(f'{where}/architecture: "{arch}" is not supported by gpuplace.torch_net (only per_gpu)')
        if j.get("shared_trunk", False):
            raise LayoutError(f"{where}/shared_trunk: true has no meaning for per_gpu")
        d = cls()
        return cls(hidden=tuple(j.get("hidden", d.hidden)), value_hidden=tuple(j.get("value_hidden", d.value_hidden)),
                   activation=str(j.get("activation", d.activation)), node_features=bool(j.get("node_features", False)),
                   normalize_obs=bool(j.get("normalize_obs", False)))


# ---- the network -----------------------------------------------------------------------------


def _mlp(sizes: Sequence[int], act: type[nn.Module]) -> nn.Sequential:
    """Linear layers with the activation between them (none after the last), as the C++ basic_mlp."""
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        if i:
            layers.append(act())
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
    return nn.Sequential(*layers)


def _linears(m: nn.Module) -> list[nn.Linear]:
    return [x for x in m.modules() if isinstance(x, nn.Linear)]


def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with the invalid actions at -inf (their probability is exactly 0; argmax never picks
    one while any action is valid)."""
    return logits.masked_fill(~masks.to(torch.bool), float("-inf"))


class PerGpuNet(nn.Module):
    """The per_gpu actor-critic (see the module docstring). ``forward(obs)`` returns the logits
    ``(B, G + 1)`` (GPU scores, then DEFER) and the values ``(B,)`` for observations ``(B, O)``
    of any cluster with this spec's per-GPU features and context."""

    def __init__(self, spec: ObsSpec, config: NetConfig = NetConfig()):
        super().__init__()
        if spec.gpu_features < 1:
            raise LayoutError("PerGpuNet: the observation has no per-GPU segments (gpu_*)")
        # node_features pools GPUs over nodes: nothing to pool when the items are candidates or queue slots
        self._pool = bool(config.node_features and spec.items == "gpu")
        if self._pool and (spec.gpus_per_node < 1 or spec.num_gpus % spec.gpus_per_node):
            raise LayoutError(f"PerGpuNet: node_features needs GPUs numbered node by node (gpus_per_node "
                              f"{spec.gpus_per_node}, {spec.num_gpus} GPUs)")
        self.spec, self.config = spec, config
        act = nn.Tanh if config.activation == "tanh" else nn.ReLU
        self._act = torch.tanh if config.activation == "tanh" else torch.relu
        F, C, h, vh = spec.gpu_features, spec.context, config.hidden, config.value_hidden
        self.gpu_in = nn.Linear(self.gpu_inputs, h[0])
        self.ctx_in = nn.Linear(C, h[0])
        self.tail = _mlp([h[0], *h[1:], 1], act)
        self.defer = _mlp([C, h[-1], 1], act)
        self.value = _mlp([C + F, *vh, 1], act)
        if config.normalize_obs:  # frozen statistics (loaded from a checkpoint), as rl/normalizer.hpp applies them
            for name, n in (("gpu", self.gpu_inputs), ("ctx", C)):
                self.register_buffer(f"norm_{name}_mean", torch.zeros(n, dtype=torch.float64))
                self.register_buffer(f"norm_{name}_var", torch.ones(n, dtype=torch.float64))
                self.register_buffer(f"norm_{name}_count", torch.zeros((), dtype=torch.float64))
        self.reset_parameters()

    @property
    def gpu_inputs(self) -> int:
        return self.spec.gpu_features * (3 if self._pool else 1)

    def parts(self) -> dict[str, nn.Module]:
        """The sub-networks by checkpoint name, in the C++ order."""
        return {n: getattr(self, n) for n in _PART_NAMES}

    def part_sizes(self) -> dict[str, list[int]]:
        """Layer sizes of each part, as a C++ checkpoint's ``parts/<name>/sizes``."""
        out = {}
        for name, m in self.parts().items():
            lin = _linears(m)
            out[name] = [lin[0].in_features] + [x.out_features for x in lin]
        return out

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """The C++ initialisation: orthogonal weights (gain sqrt(2); the last layer of tail and defer
        0.01, of value 1), zero biases."""
        for name, m in self.parts().items():
            lin = _linears(m)
            for i, layer in enumerate(lin):
                last = i + 1 == len(lin)
                gain = (1.0 if name == "value" else 0.01 if name in ("tail", "defer") else math.sqrt(2)) if last else math.sqrt(2)
                nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
                layer.bias.zero_()

    def num_gpus_of(self, obs: torch.Tensor) -> int:
        F, C = self.spec.gpu_features, self.spec.context
        width = obs.shape[-1]
        G, rest = divmod(width - C, F)
        if G < 1 or rest:
            raise LayoutError(f"PerGpuNet: observation of width {width} does not fit {F} per-GPU features and "
                              f"{C} context values (width = G x {F} + {C})")
        if self._pool and G % self.spec.gpus_per_node:
            raise LayoutError(f"PerGpuNet: {G} GPUs are not whole nodes of {self.spec.gpus_per_node}")
        return G

    def _normalize(self, x: torch.Tensor, which: str, first: int = 0) -> torch.Tensor:
        """x normalised along its last dimension with dimensions first.. of the ``which`` statistics."""
        if not self.config.normalize_obs:
            return x
        n = x.shape[-1]
        mean = getattr(self, f"norm_{which}_mean")[first : first + n]
        inv = 1.0 / torch.sqrt(getattr(self, f"norm_{which}_var")[first : first + n] + 1e-8)  # in double, as C++
        return ((x - mean.to(x.dtype)) * inv.to(x.dtype)).clamp(-10.0, 10.0)

    def _features(self, obs: torch.Tensor):
        """(per-GPU features (B, F, G), feature-major as in the observation; context (B, C))."""
        G = self.num_gpus_of(obs)
        F = self.spec.gpu_features
        return obs[:, : G * F].reshape(obs.shape[0], F, G), obs[:, G * F :]

    def gpu_scores(self, obs: torch.Tensor, masks: torch.Tensor | None = None) -> torch.Tensor:
        """The scorer's output for every GPU (B, G). With ``masks`` (B, >= G), the invalid GPUs'
        scores are unspecified (mask them: a masked categorical ignores them): for batches of
        ``SUBSET_ROWS`` GPU rows or more only the valid GPUs are scored (the others are 0, as in
        C++), which on a busy cluster is a fraction of the work; smaller batches score every GPU
        (gathering the valid ones costs more than it saves there).

        gpu_in reads [own features, node mean, node max] (C++ order); its product is computed in
        two parts, the own features per GPU and the node statistics once per node (the same sum in
        another order of additions)."""
        feat, ctx = self._features(obs)
        B, F, G = feat.shape
        W, b = self.gpu_in.weight, self.gpu_in.bias
        base = self.ctx_in(self._normalize(ctx, "ctx")) + b  # (B, H): the context's and the bias's share
        own = self._normalize(feat.transpose(1, 2), "gpu")  # (B, G, F)
        if self._pool:
            n = self.spec.gpus_per_node
            fv = feat.reshape(B, F, G // n, n)
            stats = torch.cat([fv.mean(-1), fv.amax(-1)], 1).transpose(1, 2)  # (B, nodes, 2F)
            base = base.unsqueeze(1) + self._normalize(stats, "gpu", F) @ W[:, F:].t()  # (B, nodes, H)
        else:
            n = G
            base = base.unsqueeze(1)  # (B, 1, H)
        if masks is None or B * G < SUBSET_ROWS:
            pre = (own @ W[:, :F].t()).reshape(B, G // n, n, -1) + base.unsqueeze(2)
            return self.tail(self._act(pre)).reshape(B, G)
        bi, gi = masks[:, :G].to(torch.bool).nonzero(as_tuple=True)
        pre = own[bi, gi] @ W[:, :F].t() + base[bi, gi // n]
        scores = self.tail(self._act(pre)).squeeze(-1)
        return obs.new_zeros(B, G).index_put((bi, gi), scores)

    def logits(self, obs: torch.Tensor, masks: torch.Tensor | None = None) -> torch.Tensor:
        """(B, G + 1): the GPU scores, then DEFER's logit. With ``masks``, the invalid GPUs' logits
        are unspecified (see :meth:`gpu_scores`): mask them before use (:func:`masked_logits`)."""
        _, ctx = self._features(obs)
        return torch.cat([self.gpu_scores(obs, masks), self.defer(self._normalize(ctx, "ctx"))], -1)

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        feat, ctx = self._features(obs)
        means = self._normalize(feat.mean(-1), "gpu")  # (B, F): the mean of each per-GPU feature
        return self.value(torch.cat([self._normalize(ctx, "ctx"), means], -1)).squeeze(-1)

    def forward(self, obs: torch.Tensor, masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.logits(obs, masks), self.values(obs)

    @torch.no_grad()
    def act(self, obs, masks) -> np.ndarray:
        """Greedy actions (the most probable valid one) for numpy observations (B, O) and masks (B, A)."""
        o = torch.as_tensor(np.asarray(obs, dtype=np.float32)).reshape(-1, np.shape(obs)[-1])
        m = torch.as_tensor(np.asarray(masks, dtype=bool)).reshape(o.shape[0], -1)
        return masked_logits(self.logits(o, m), m).argmax(-1).numpy()

    # ---- C++ checkpoints ---------------------------------------------------------------------

    def checkpoint_parts(self) -> dict:
        """``parts`` of a C++ checkpoint: per part its sizes and its parameters, layer by layer the
        weight matrix (out x in) column by column, then the bias."""
        out = {}
        for name, m in self.parts().items():
            vals: list[float] = []
            for layer in _linears(m):
                vals += layer.weight.detach().double().t().reshape(-1).tolist() + layer.bias.detach().double().tolist()
            out[name] = {"sizes": self.part_sizes()[name], "params": vals}
        return out

    def checkpoint_json(self, scenario: Mapping[str, Any], ppo: Mapping[str, Any] | None = None) -> dict:
        """The network as a C++ checkpoint document (rl/checkpoint.hpp, version 1). ``ppo``: the PPO
        config recorded with it (C++ ``ppo_config`` keys; default: the C++ defaults with this network)."""
        norms = []
        for which, n in (("gpu", self.gpu_inputs), ("ctx", self.spec.context)):
            if self.config.normalize_obs:
                norms.append({"mean": getattr(self, f"norm_{which}_mean").tolist(),
                              "var": getattr(self, f"norm_{which}_var").tolist(),
                              "count": float(getattr(self, f"norm_{which}_count"))})
            else:
                norms.append({"mean": [0.0] * n, "var": [1.0] * n, "count": 0.0})
        ppo = dict(ppo or {})
        ppo["network"] = self.config.to_json()
        return {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "obs_spec": self.spec.to_json(),
                "network": self.config.to_json(), "ppo": ppo, "scenario": dict(scenario),
                "parts": self.checkpoint_parts(), "normalizers": norms}

    @torch.no_grad()
    def load_checkpoint_parts(self, parts: Mapping[str, Any], source: str = "<checkpoint>") -> None:
        """Sets the weights from a C++ checkpoint's ``parts`` (sizes checked first, nothing changes
        on an error)."""
        mine = self.part_sizes()
        staged = []
        for name, m in self.parts().items():
            if name not in parts:
                raise CheckpointError(f"checkpoint {source}: /parts/{name}: missing")
            p = parts[name]
            if list(p.get("sizes", [])) != mine[name]:
                raise CheckpointError(f"checkpoint {source}: /parts/{name}/sizes: {list(p.get('sizes', []))} differ from "
                                  f"this network's {mine[name]}")
            vals = np.asarray(p.get("params", []), dtype=np.float64)
            need = sum(x.weight.numel() + x.bias.numel() for x in _linears(m))
            if vals.shape != (need,) or not np.isfinite(vals).all():
                raise CheckpointError(f"checkpoint {source}: /parts/{name}/params: {vals.size} values"
                                  f"{'' if np.isfinite(vals).all() else ' (not all finite)'}, expected {need} finite")
            k = 0
            for layer in _linears(m):
                o, i = layer.weight.shape
                w = torch.from_numpy(vals[k : k + o * i].reshape(i, o).T.copy())
                k += o * i
                b = torch.from_numpy(vals[k : k + o].copy())
                k += o
                staged.append((layer, w, b))
        for layer, w, b in staged:
            layer.weight.copy_(w)
            layer.bias.copy_(b)

    @torch.no_grad()
    def load_normalizers(self, norms: Sequence[Mapping[str, Any]], source: str = "<checkpoint>") -> None:
        if not self.config.normalize_obs:
            return
        if len(norms) != 2:
            raise CheckpointError(f"checkpoint {source}: /normalizers: {len(norms)} normalizers, expected 2")
        for k, (which, n) in enumerate((("gpu", self.gpu_inputs), ("ctx", self.spec.context))):
            for key in ("mean", "var"):
                v = np.asarray(norms[k][key], dtype=np.float64)
                if v.shape != (n,):
                    raise CheckpointError(f"checkpoint {source}: /normalizers/{k}/{key}: {v.size} values, expected {n}")
                getattr(self, f"norm_{which}_{key}").copy_(torch.from_numpy(v))
            getattr(self, f"norm_{which}_count").fill_(float(norms[k].get("count", 0.0)))


def spec_from_checkpoint(doc: Mapping[str, Any], source: str = "<checkpoint>") -> tuple[ObsSpec, NetConfig]:
    """The observation spec and network config a C++ checkpoint document was written for."""
    if doc.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f'checkpoint {source}: /format: expected "{CHECKPOINT_FORMAT}", got {doc.get("format")!r}')
    if doc.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"checkpoint {source}: /version: unsupported version {doc.get('version')!r} "
                          f"(this module reads version {CHECKPOINT_VERSION})")
    sj = doc.get("obs_spec")
    if not isinstance(sj, Mapping):
        raise CheckpointError(f"checkpoint {source}: /obs_spec: missing")
    for k in ("num_gpus", "gpu_features", "context"):
        if not isinstance(sj.get(k), int) or sj[k] < 0:
            raise CheckpointError(f"checkpoint {source}: /obs_spec/{k}: expected a non-negative integer, got {sj.get(k)!r}")
    items = sj.get("items", "gpu")
    if items not in ("gpu", "candidate", "slot"):
        raise CheckpointError(f'checkpoint {source}: /obs_spec/items: expected "gpu", "candidate" or "slot", got {items!r}')
    names = sj.get("names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CheckpointError(f"checkpoint {source}: /obs_spec/names: expected a list of input names")
    if names and len(names) != sj["gpu_features"] + sj["context"]:
        raise CheckpointError(f"checkpoint {source}: /obs_spec/names: {len(names)} names for {sj['gpu_features']} "
                              f"per-item features + {sj['context']} context values")
    spec = ObsSpec(sj["num_gpus"], sj["gpu_features"], sj["context"], int(sj.get("gpus_per_node", 0)), items, tuple(names))
    if not isinstance(doc.get("network"), Mapping):
        raise CheckpointError(f"checkpoint {source}: /network: missing")
    try:
        cfg = NetConfig.from_json(doc["network"])
    except LayoutError as e:
        raise CheckpointError(f"checkpoint {source}: {e}") from None
    return spec, cfg


def read_checkpoint(path_or_doc) -> tuple[dict, str]:
    if isinstance(path_or_doc, Mapping):
        return dict(path_or_doc), "<dict>"
    path = os.fspath(path_or_doc)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), path
    except OSError as e:
        raise CheckpointError(f"checkpoint {path}: cannot open: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise CheckpointError(f"checkpoint {path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


def load_checkpoint(path_or_doc) -> tuple[PerGpuNet, dict]:
    """A C++ per_gpu checkpoint (file or parsed document) as a :class:`PerGpuNet`, with the rest of
    the document (``scenario``, ``ppo``, ``obs_spec``, ``network``)."""
    doc, source = read_checkpoint(path_or_doc)
    spec, cfg = spec_from_checkpoint(doc, source)
    try:
        net = PerGpuNet(spec, cfg)
    except LayoutError as e:
        raise CheckpointError(f"checkpoint {source}: {e}") from None
    parts = doc.get("parts") or {}
    extra = sorted(set(parts) - set(_PART_NAMES))
    if extra:
        raise CheckpointError(f"checkpoint {source}: /parts: part(s) {extra} unknown to a per_gpu network "
                          f"(known: {', '.join(_PART_NAMES)})")
    net.load_checkpoint_parts(parts, source)
    net.load_normalizers(doc.get("normalizers") or [], source)
    return net, {k: v for k, v in doc.items() if k not in ("parts", "normalizers")}


def save_checkpoint(path, net: PerGpuNet, scenario: Mapping[str, Any], ppo: Mapping[str, Any] | None = None) -> None:
    """Writes ``net`` as a C++ checkpoint (loadable by ``gpuplace-train --load``, ``gpuplace._core.load_checkpoint``),
    atomically (a temporary file renamed over the target)."""
    path = os.fspath(path)
    bad = [name for name, m in net.parts().items() if not all(bool(torch.isfinite(p).all()) for p in m.parameters())]
    if bad:
        raise CheckpointError(f"checkpoint {path}: not written: non-finite weights (NaN or inf) in /parts/"
                              f"{', /parts/'.join(bad)}; the training diverged (e.g. a NaN gamma or learning rate), "
                              "and gpuplace-train could not load it")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(net.checkpoint_json(scenario, ppo), f, allow_nan=False)
        f.write("\n")


def check_compatible(have: ObsSpec, want: ObsSpec, config: NetConfig, what: str = "the env") -> None:
    """Raises LayoutError naming what differs when a network built for ``have`` cannot act on
    observations of ``want`` (the number of GPUs may differ; per-GPU features, context and, with
    node features, the node size may not)."""
    diffs = []
    if have.items != want.items:
        diffs.append(f"the network scores {have.items}s (its action mode), the env's actions choose {want.items}s")
    if have.gpu_features != want.gpu_features:
        diffs.append(f"{have.gpu_features} per-GPU features vs {want.gpu_features}")
    if have.context != want.context:
        diffs.append(f"{have.context} context values vs {want.context} (the env's queue_window or features differ)")
    if config.node_features and have.items == "gpu" and have.gpus_per_node != want.gpus_per_node:
        diffs.append(f"nodes of {have.gpus_per_node} GPUs vs {want.gpus_per_node} (node_features)")
    if config.node_features and want.items == "gpu" and want.gpus_per_node and want.num_gpus % want.gpus_per_node:
        diffs.append(f"{want.num_gpus} GPUs are not whole nodes of {want.gpus_per_node}")
    named = have.name_difference(want, theirs=what)
    if named:
        diffs.append(named)
    if diffs:
        raise LayoutError(f"the network does not fit {what}: " + "; ".join(diffs))


__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "LAYOUT_ATTR",
    "LayoutError",
    "NetConfig",
    "ObsSpec",
    "PerGpuNet",
    "check_compatible",
    "layout_of",
    "load_checkpoint",
    "masked_logits",
    "save_checkpoint",
    "spec_from_checkpoint",
]
