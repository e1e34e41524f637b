"""VectorEnv's C++ action sampler (sample_valid_actions, step_random), the obs_out copy and the
dones buffer: valid, deterministic by seed, independent of the thread count, equal to the
NumPy-driven path, and clear errors for bad buffers."""

import json

import numpy as np
import pytest

import gpuplace
from gpuplace import _core


def make(scenario, n, threads=1):
    return gpuplace.make_core_vector_env(scenario, n, threads)


def run(v, steps, fused, seed=5):
    """Steps v with sampled actions; returns every action, reward, done flag and observation."""
    v.reset(seed)
    n, O = int(v.num_envs), int(v.observation_size)
    a = np.zeros(n, np.int64)
    obs = np.zeros((n, O), np.float32)
    out = []
    ended_total = 0
    for _ in range(steps):
        masks = v.action_masks.copy()
        if fused:
            ended = v.step_random(a, obs)
        else:
            assert v.sample_valid_actions(a) is a
            ended = v.step(a, obs)
        assert np.all(masks[np.arange(n), a] == 1)  # every action was valid when drawn
        assert np.array_equal(obs, v.observations)
        assert np.array_equal(v.dones, v.terminated | v.truncated)
        assert ended == int(v.dones.sum())
        ended_total += ended
        out += [a.copy(), v.rewards.copy(), v.dones.copy(), obs.copy()]
    return out, ended_total


@pytest.mark.parametrize("scenario", ["small", "small_ring"])
def test_sampler_is_deterministic_and_independent_of_threads(scenario, request):
    sc = request.getfixturevalue(scenario)
    ref, ended = run(make(sc, 5, 1), 300, fused=False)
    assert ended > 0  # autoresets happened
    for threads, fused in [(1, True), (2, True), (2, False), (3, True)]:
        got, _ = run(make(sc, 5, threads), 300, fused)
        assert all(np.array_equal(x, y) for x, y in zip(ref, got)), (threads, fused)
    other, _ = run(make(sc, 5, 1), 300, fused=True, seed=6)
    assert not all(np.array_equal(x, y) for x, y in zip(ref, other))


def test_sampler_matches_stepping_with_the_same_actions(small_ring):
    """step_random's trajectory is the one step() gives with those actions."""
    a_env, b_env = make(small_ring, 3), make(small_ring, 3)
    a_env.reset(9)
    b_env.reset(9)
    acts = np.zeros(3, np.int64)
    for _ in range(200):
        a_env.step_random(acts)
        b_env.step(acts.copy())
        assert np.array_equal(a_env.observations, b_env.observations)
        assert np.array_equal(a_env.rewards, b_env.rewards)


def test_sample_valid_actions_is_uniform_and_returns_a_new_array(small_ring):
    v = make(small_ring, 2)
    v.reset(1)
    for _ in range(3):
        v.step_random()
    masks = v.action_masks.copy()
    draws = np.stack([v.sample_valid_actions() for _ in range(20000)])
    assert draws.dtype == np.int64 and draws.shape == (20000, 2)
    for i in range(2):
        counts = np.bincount(draws[:, i], minlength=masks.shape[1])
        valid = masks[i].astype(bool)
        assert counts[~valid].sum() == 0
        expected = 20000 / valid.sum()
        assert np.all(np.abs(counts[valid] - expected) < 0.15 * expected)
    assert _core.sampler_seed(1, 0) != _core.sampler_seed(1, 1)


def test_sampler_buffer_errors(small):
    v = make(small, 4)
    with pytest.raises(_core.StateError, match="before reset"):
        v.sample_valid_actions()
    with pytest.raises(_core.StateError, match="before reset"):
        v.step_random()
    v.reset(0)
    O = int(v.observation_size)
    want_a = r"out must be a writable C-contiguous numpy int64 array of shape \(4,\)"
    with pytest.raises(TypeError, match=want_a + ", got list"):
        v.sample_valid_actions([0, 0, 0, 0])
    with pytest.raises(TypeError, match=want_a + ", got dtype int32"):
        v.sample_valid_actions(np.zeros(4, np.int32))
    with pytest.raises(ValueError, match=want_a + r", got shape \(3,\)"):
        v.sample_valid_actions(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match=want_a + ", got a non-contiguous array"):
        v.sample_valid_actions(np.zeros(8, np.int64)[::2])
    ro = np.zeros(4, np.int64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=want_a + ", got a read-only array"):
        v.sample_valid_actions(ro)
    with pytest.raises(TypeError, match=r"actions_out must be a writable C-contiguous numpy int64 array of shape \(4,\), got dtype float64"):
        v.step_random(np.zeros(4))
    want_o = rf"obs_out must be a writable C-contiguous numpy float32 array of shape \(4, {O}\)"
    with pytest.raises(TypeError, match=want_o + ", got dtype float64"):
        v.step_random(obs_out=np.zeros((4, O)))
    with pytest.raises(ValueError, match=want_o + rf", got shape \(4, {O + 1}\)"):
        v.step(v.sample_valid_actions(), np.zeros((4, O + 1), np.float32))
    with pytest.raises(ValueError, match=want_o + ", got a read-only array"):
        v.step_random(obs_out=v.observations)  # the env's own (read-only) view
    # no env moved after the errors
    assert [v.episode_length(i) for i in range(4)] == [0, 0, 0, 0]
    assert v.step_random() == 0
    assert [v.episode_length(i) for i in range(4)] == [1, 1, 1, 1]


def test_wrappers_fill_fresh_observation_arrays(small):
    """The SB3 and Gymnasium wrappers return a new array per step (copy=True) equal to the view."""
    from gpuplace.gymnasium import GymnasiumVectorEnv

    env = GymnasiumVectorEnv(small, 4)
    env.reset(seed=3)
    prev = None
    for _ in range(60):
        obs, rew, term, trunc, info = env.step(env.core.sample_valid_actions())
        assert np.array_equal(obs, env.core.observations)
        assert obs.flags.writeable and obs is not prev
        prev = obs
    env.close()
