"""The same seed gives the same trajectory in Python as in C++ (bit for bit)."""

import numpy as np
import pytest

import gpuplace
from conftest import random_episode


@pytest.mark.parametrize("which", ["small", "small_ring", "proximity_drl"])
def test_python_trajectory_equals_cpp_replay(which, small, small_ring):
    sc = {"small": small, "small_ring": small_ring, "proximity_drl": "proximity_drl"}[which]
    env = gpuplace.GymnasiumEnv(sc)
    t = random_episode(env, seed=21, rng_seed=5)
    ref = gpuplace.run_episode(gpuplace.load_scenario(sc), actions=t["actions"], seed=21)
    assert ref["steps"] == len(t["actions"]) and ref["terminated"]
    # exact equality: same floats, not approximately
    np.testing.assert_array_equal(np.asarray(t["rewards"]), ref["rewards"])
    np.testing.assert_array_equal(np.stack(t["obs"]), ref["observations"])
    np.testing.assert_array_equal(np.stack(t["masks"]).astype(np.uint8), ref["masks"])
    assert t["info"]["metrics"] == ref["metrics"]


@pytest.mark.parametrize("policy", gpuplace.heuristic_names())
def test_heuristic_driven_from_python_equals_cpp_run(policy, small):
    ref = gpuplace.run_episode(small, policy, seed=8)
    env = gpuplace.GymnasiumEnv(small)
    h = gpuplace.Heuristic(policy)
    h.reset(8)
    env.reset(seed=8)
    actions, rewards, done = [], [], False
    while not done:
        a = h.act(env.core)
        _, r, term, trunc, info = env.step(a)
        actions.append(a)
        rewards.append(r)
        done = term or trunc
    np.testing.assert_array_equal(np.asarray(actions), ref["actions"])
    np.testing.assert_array_equal(np.asarray(rewards), ref["rewards"])
    assert info["metrics"] == ref["metrics"]


def test_run_episode_is_deterministic_and_validates(small):
    a = gpuplace.run_episode(small, "random", seed=3)
    b = gpuplace.run_episode(small, "random", seed=3)
    np.testing.assert_array_equal(a["observations"], b["observations"])
    np.testing.assert_array_equal(a["actions"], b["actions"])
    with pytest.raises(ValueError, match="step 0: invalid action 99"):
        gpuplace.run_episode(small, actions=[99], seed=0)
    with pytest.raises(ValueError, match="either policy or actions"):
        gpuplace.run_episode(small, "random", actions=[0])
    with pytest.raises(gpuplace.ConfigError, match="unknown policy"):
        gpuplace.run_episode(small, "nope")
    with pytest.warns(UserWarning, match="the 5 actions ran out before the episode ended"):
        part = gpuplace.run_episode(small, actions=a["actions"][:5], seed=3)
    assert part["steps"] == 5 and not part["terminated"] and part["actions_ran_out"]
    np.testing.assert_array_equal(part["observations"], a["observations"][:6])


def test_run_episode_runs_a_heuristic_under_its_queue_policy(small):
    # "pack+sjf" is pack under the sjf queue policy, as evaluate() runs it, not pack under the scenario's
    seeds = [1_000_000, 1_000_001, 1_000_002]
    rep = gpuplace.evaluate(small, ["pack", "pack+sjf"], seeds)
    for policy in ("pack", "pack+sjf"):
        jcts = [gpuplace.run_episode(small, policy, seed=s, record=False)["metrics"]["avg_jct"] for s in seeds]
        assert jcts == [row["avg_jct"] for row in rep.per_seed(policy)], policy
    assert rep.per_seed("pack") != rep.per_seed("pack+sjf")
    with pytest.raises(gpuplace.ConfigError, match="unknown queue policy"):
        gpuplace.run_episode(small, "pack+nope")


def test_vector_env_equals_single_envs_and_ignores_thread_count(small):
    n = 4
    results = []
    for threads in (1, 2):
        v = gpuplace.make_core_vector_env(small, num_envs=n, num_threads=threads)
        v.reset(9)
        rng = np.random.default_rng(0)
        obs, rews, finals = [v.observations.copy()], [], []
        for _ in range(150):
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in v.action_masks], dtype=np.int64)
            v.step(acts)
            obs.append(v.observations.copy())
            rews.append(v.rewards.copy())
            for i in np.flatnonzero(v.terminated | v.truncated):
                finals.append((int(i), v.final_info(int(i))))
        results.append((np.stack(obs), np.stack(rews), finals))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] and len(results[0][2]) > 0
    # env i's first episode is a single env reset with episode_seed(9, i, 0)
    i, fin = results[0][2][0]
    assert fin["seed"] == gpuplace.episode_seed(9, i, 0)
