"""Hardware failures from Python (docs/realities.md): the gpuplace/Failures-v0 id plays to the end with
failures, the failed GPUs read -2 in gpu_holders() and are masked, the image draws them dark red, and the
episode's metrics carry goodput, wasted GPU-hours and interruptions."""

import gymnasium as gym
import numpy as np

from gpuplace.render import FAILED, occupancy_image


def test_failures_id_masks_failed_gpus_and_reports_goodput():
    env = gym.make("gpuplace/Failures-v0")
    core = env.unwrapped.core
    env.reset(seed=3)
    seen_failed = False
    done = False
    while not done:
        holders = core.gpu_holders()
        mask = env.unwrapped.action_masks()
        failed = holders == -2
        if failed.any():
            assert not mask[:-1][failed].any()
            if not seen_failed:  # drawn once
                image = occupancy_image(core.topology(), holders)
                assert (image.reshape(-1, 3) == FAILED).all(axis=1).any()
            seen_failed = True
        action = int(np.flatnonzero(mask)[0])  # first fit
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert seen_failed
    m = info["metrics"]
    assert 0.0 < m["goodput"] < 1.0
    assert m["wasted_gpu_hours"] > 0.0
    assert m["hardware_failures"] > 0
    assert m["avg_interruptions"] > 0.0
    jobs = core.finished_jobs()  # per job: what failures did to it, summing to the episode's metrics
    n = len(jobs["id"])
    assert jobs["interruptions"].sum() / n == m["avg_interruptions"]
    assert (jobs["interruptions"] >= 0).all() and jobs["interruptions"].max() >= 1
    hit = jobs["interruptions"] > 0
    assert (jobs["lost_gpu_time"][hit] > 0).any()
    assert (jobs["run_time"] <= jobs["end"] - jobs["start"] + 1e-6).all()  # a job holds GPUs only between its start and end
    assert (jobs["checkpoint_gpu_time"] >= 0).all() and jobs["checkpoint_gpu_time"].sum() > 0
    assert (jobs["preemptions"] == 0).all()  # no discipline suspends: only failures stop jobs
