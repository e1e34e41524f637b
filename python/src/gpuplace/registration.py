"""Gymnasium ids: gpuplace/Default-v0 and gpuplace/ProximityDRL-v0."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS = {
    "gpuplace/Default-v0": "default",
    "gpuplace/ProximityDRL-v0": "proximity_drl",
}


def register_envs() -> None:
    """Registers every id (idempotent)."""
    for env_id, preset in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point="gpuplace.env:GpuPlaceEnv",
            vector_entry_point="gpuplace.vector:GpuPlaceVectorEnv",
            kwargs={"scenario": preset},
            nondeterministic=False,
        )
