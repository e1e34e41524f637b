"""Action spaces whose ``sample()`` respects the environment's current action mask.

``Discrete(G + 1)`` contains every action, but in a given state only the masked ones are valid,
and ``step`` rejects the others with ``InvalidAction``. So that random agents, Gymnasium's and
SB3's environment checkers and any code that calls ``env.action_space.sample()`` get a valid
action, these spaces sample under the live mask when no mask is given. They pickle and deep-copy
as the plain Gymnasium space (without the link to the environment), so saved models stay portable.

The observation space is a plain ``Box`` that carries the env's observation layout in its
``gpuplace_layout`` attribute (plain Python data, kept by pickle and deepcopy): size-free networks
(``gpuplace.torch_net``, ``gpuplace.sb3.PerGpuPolicy``) read where the per-GPU features are from it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from gymnasium import spaces


#: The observation space attribute holding the layout: ``{"segments": [{"name", "offset", "size", "fields",
#: "item"}, ...]`` (``item``: what a per-item segment has a value for, "" for context),
#: "num_gpus": G, "num_items": num_actions - 1, "gpus_per_node": n}``, and, for an env made from a
#: scenario, what a policy trained on it acts under: ``"queue": {"queue_policy", "backfill"}`` (the
#: env settings; the order jobs wait in is not in the observation) and ``"information"`` (what the
#: observation tells of a job's duration: the scenario's durations.mode, ``"oracle"`` (the truth),
#: ``"hidden"`` (nothing) or ``"predicted"`` (an estimate); docs/information.md).
LAYOUT_ATTR = "gpuplace_layout"

#: The information setting of a layout that records none (made before it was recorded): the true durations.
INFORMATION = "oracle"


def layout_of(core, scenario: dict | None = None) -> dict:
    """The observation layout of a C++ core env or vector env, as plain Python data; with the
    env's ``scenario``, its queue settings and information setting too."""
    topo = core.topology()
    lay = {
        "segments": [{"name": str(s["name"]), "offset": int(s["offset"]), "size": int(s["size"]),
                      "fields": [str(f) for f in s["fields"]], "item": str(s["item"])}
                     for s in core.observation_layout],
        "num_gpus": int(core.num_gpus),
        "num_items": int(core.num_actions) - 1,  # what every action but the last chooses: GPUs, candidates or slots
        "gpus_per_node": int(topo.get("gpus_per_node", 0)),
    }
    if scenario is not None:
        env = scenario["env"]
        lay["queue"] = {"queue_policy": str(env["queue_policy"]), "backfill": bool(env["backfill"])}
        lay["information"] = str((scenario.get("durations") or {}).get("mode", INFORMATION))
    return lay


def observation_box(core, scenario: dict | None = None) -> spaces.Box:
    """``Box(0, 1, (observation_size,), float32)`` of a core env, carrying its layout (``LAYOUT_ATTR``)."""
    box = spaces.Box(0.0, 1.0, shape=(int(core.observation_size),), dtype=np.float32)
    setattr(box, LAYOUT_ATTR, layout_of(core, scenario))
    return box


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws among the currently valid actions."""

    def __init__(self, n: int, mask_fn: Callable[[], np.ndarray | None], seed=None):
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._mask_fn is not None:
            m = self._mask_fn()
            if m is not None and m.any():
                return super().sample(mask=m.astype(np.int8))
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), None, int(self.start)))


class MaskedMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete([n] * N)`` whose ``sample()`` without a mask draws a valid action per env."""

    def __init__(self, nvec, mask_fn: Callable[[], np.ndarray | None], seed=None):
        super().__init__(nvec, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._mask_fn is not None:
            m = self._mask_fn()
            if m is not None:
                return super().sample(mask=tuple(row.astype(np.int8) for row in m))
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.MultiDiscrete, (np.array(self.nvec), self.dtype))
