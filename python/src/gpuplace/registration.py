"""Gymnasium ids, one per preset scenario: gpuplace/Default-v0, gpuplace/ProximityDRL-v0,
gpuplace/Colocation-v0, gpuplace/Philly-v0 (windows of the training trace files),
gpuplace/Heterogeneous-v0 (V100, P100 and K80 racks) and gpuplace/PhillyHidden-v0 (the realistic
information setting on the training trace files: durations hidden, preemption under LAS;
docs/information.md). In the round action mode (docs/rounds.md, "An agent builds the allocation"):
gpuplace/PhillyHiddenRound-v0 (philly_hidden with rounds deciding who runs instead of preemption)
and gpuplace/HeterogeneousRound-v0. gpuplace/Failures-v0: nodes that fail and jobs that restart
from checkpoints; gpuplace/Tenants-v0 (three tenants with quotas under the capacity scheduler),
gpuplace/Spot-v0 (a spot class evicted for guaranteed jobs) and gpuplace/Deadlines-v0 (deadlines
under EDF with admission control), each observing its job field (docs/realities.md). Every id takes the env's keyword arguments, e.g.
``durations="hidden"``."""

from __future__ import annotations

import functools

import gymnasium as gym

ENV_IDS = {
    "gpuplace/Default-v0": "default",
    "gpuplace/ProximityDRL-v0": "proximity_drl",
    "gpuplace/Colocation-v0": "colocation",
    "gpuplace/Philly-v0": "philly",
    "gpuplace/Heterogeneous-v0": "heterogeneous",
    "gpuplace/PhillyHidden-v0": "philly_hidden",
    "gpuplace/PhillyHiddenRound-v0": "philly_hidden",
    "gpuplace/HeterogeneousRound-v0": "heterogeneous",
    "gpuplace/Failures-v0": "failures",
    "gpuplace/Tenants-v0": "tenants",
    "gpuplace/Spot-v0": "spot",
    "gpuplace/Deadlines-v0": "deadlines",
}

#: The scenario overrides that make philly_hidden a round-mode scenario: rounds replace the
#: preemptive discipline (its queue order is then irrelevant: the agent chooses who runs).
ROUND_OVERRIDES = {"preemption": {"enabled": False}, "env": {"queue_policy": "fifo"}}

#: The keyword arguments an id adds to its preset's (the round-mode ids); ``overrides`` given to
#: ``gym.make`` are merged into these.
ENV_KWARGS = {
    "gpuplace/PhillyHiddenRound-v0": {"action_mode": "round", "overrides": ROUND_OVERRIDES},
    "gpuplace/HeterogeneousRound-v0": {"action_mode": "round"},
}


def _merged(base: dict | None, over: dict | None) -> dict | None:
    """``over`` merged into a copy of ``base`` key by key (``over`` wins)."""
    if base is None or over is None:
        return over if base is None else base
    out = dict(base)
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _with_id_kwargs(base: dict | None, kwargs: dict) -> dict:
    """The keyword arguments of an id (``base``: its ``ENV_KWARGS``) under the caller's; the
    caller's ``overrides`` are merged into the id's instead of replacing them."""
    if not base:
        return kwargs
    out = {**base, **kwargs}
    if "overrides" in base and kwargs.get("overrides") is not None:
        out["overrides"] = _merged(base["overrides"], dict(kwargs["overrides"]))
    return out


def make_env(preset: str, scenario=None, _id_kwargs: dict | None = None, **kwargs):
    """The entry point of a registered id: ``GymnasiumEnv`` of the id's preset, or of ``scenario``
    when one is given (``gym.make(id, scenario=None)`` is the id's preset, not the default)."""
    from .gymnasium import GymnasiumEnv

    return GymnasiumEnv(preset if scenario is None else scenario, **_with_id_kwargs(_id_kwargs, kwargs))


def make_vector_env(preset: str, scenario=None, _id_kwargs: dict | None = None, **kwargs):
    """The vector entry point of a registered id (``gym.make_vec``), as :func:`make_env`."""
    from .gymnasium import GymnasiumVectorEnv

    return GymnasiumVectorEnv(preset if scenario is None else scenario, **_with_id_kwargs(_id_kwargs, kwargs))


def register_envs() -> None:
    """Registers every id (idempotent)."""
    for env_id, preset in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=functools.partial(make_env, preset, _id_kwargs=ENV_KWARGS.get(env_id)),
            vector_entry_point=functools.partial(make_vector_env, preset, _id_kwargs=ENV_KWARGS.get(env_id)),
            kwargs={"scenario": preset},
            nondeterministic=False,
        )
