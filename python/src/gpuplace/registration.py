"""Gymnasium ids, one per preset scenario: gpuplace/Default-v0, gpuplace/ProximityDRL-v0,
gpuplace/Colocation-v0, gpuplace/Philly-v0 (windows of the training trace files) and
gpuplace/Heterogeneous-v0 (V100, P100 and K80 racks)."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS = {
    "gpuplace/Default-v0": "default",
    "gpuplace/ProximityDRL-v0": "proximity_drl",
    "gpuplace/Colocation-v0": "colocation",
    "gpuplace/Philly-v0": "philly",
    "gpuplace/Heterogeneous-v0": "heterogeneous",
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
