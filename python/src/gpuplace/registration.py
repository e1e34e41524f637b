"""Gymnasium ids, one per preset scenario: gpuplace/Default-v0, gpuplace/ProximityDRL-v0,
gpuplace/Colocation-v0, gpuplace/Philly-v0 (windows of the training trace files),
gpuplace/Heterogeneous-v0 (V100, P100 and K80 racks) and gpuplace/PhillyHidden-v0 (the realistic
information setting on the training trace files: durations hidden, preemption under LAS;
docs/information.md). Every id takes the env's keyword arguments, e.g. ``durations="hidden"``."""

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
}


def make_env(preset: str, scenario=None, **kwargs):
    """The entry point of a registered id: ``GymnasiumEnv`` of the id's preset, or of ``scenario``
    when one is given (``gym.make(id, scenario=None)`` is the id's preset, not the default)."""
    from .gymnasium import GymnasiumEnv

    return GymnasiumEnv(preset if scenario is None else scenario, **kwargs)


def make_vector_env(preset: str, scenario=None, **kwargs):
    """The vector entry point of a registered id (``gym.make_vec``), as :func:`make_env`."""
    from .gymnasium import GymnasiumVectorEnv

    return GymnasiumVectorEnv(preset if scenario is None else scenario, **kwargs)


def register_envs() -> None:
    """Registers every id (idempotent)."""
    for env_id, preset in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=functools.partial(make_env, preset),
            vector_entry_point=functools.partial(make_vector_env, preset),
            kwargs={"scenario": preset},
            nondeterministic=False,
        )
