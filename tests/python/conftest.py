"""Shared fixtures of the Python tests. The package must be installed (pip install ./python)."""

import copy

import numpy as np
import pytest

import gpuplace

# A small cluster (16 GPUs) with Proximity-DRL's route cost and 2/4-GPU jobs: spreading a job
# over nodes or racks slows it down a lot, so random placement is clearly worse than compact
# placement, and a short MaskablePPO run reliably learns to beat random.
SMALL = {
    "name": "small",
    "topology": {"preset": "custom", "racks": 2, "nodes_per_rack": 2, "gpus_per_node": 4},
    "comm": {"model": "tree_route"},
    "workload": {
        "kind": "synthetic",
        "num_jobs": 20,
        "load": 1.0,
        "gpu_counts": {"2": 0.5, "4": 0.5},
        "duration_min": 1800,
        "duration_max": 3600,
    },
}

# The same cluster with the ring all-reduce model and DEFER enabled, to cover the other env class.
SMALL_RING = {
    "name": "small_ring",
    "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
    "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.2, "gpu_counts": {"1": 0.5, "2": 0.3, "8": 0.2}},
    "env": {"allow_defer": True},
}



def run_cli(capsys, fn, argv):
    """Runs a command-line entry point `fn` on argv in this process; returns (exit status, stdout,
    stderr). argparse's usage errors exit 2."""
    try:
        code = fn(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err

@pytest.fixture
def small():
    return copy.deepcopy(SMALL)


@pytest.fixture
def small_ring():
    return copy.deepcopy(SMALL_RING)


def random_episode(env, seed, rng_seed=0):
    """Runs a GymnasiumEnv with uniformly random valid actions; returns the trajectory."""
    rng = np.random.default_rng(rng_seed)
    obs, _ = env.reset(seed=seed)
    traj = {"obs": [obs], "masks": [env.action_masks()], "actions": [], "rewards": []}
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, r, term, trunc, info = env.step(a)
        traj["actions"].append(a)
        traj["rewards"].append(r)
        traj["obs"].append(obs)
        traj["masks"].append(env.action_masks())
        done = term or trunc
    traj["info"] = info
    return traj
