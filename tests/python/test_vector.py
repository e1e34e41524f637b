"""The vector facades (gpuplace.sb3.SB3VecEnv, gpuplace.gymnasium.GymnasiumVectorEnv) over the C++
VectorEnv."""

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from gpuplace.gymnasium import GymnasiumVectorEnv


def _valid_actions(masks, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)


def test_core_vector_views_are_zero_copy(small):
    v = gpuplace.make_core_vector_env(small, num_envs=3)
    v.reset(0)
    for name, dtype, shape in [
        ("observations", np.float32, (3, v.observation_size)),
        ("action_masks", np.uint8, (3, 17)),
        ("rewards", np.float64, (3,)),
        ("terminated", np.bool_, (3,)),
        ("truncated", np.bool_, (3,)),
        ("final_observations", np.float32, (3, v.observation_size)),
    ]:
        a = getattr(v, name)
        assert a.dtype == dtype and a.shape == shape, name
        assert a.base is v and not a.flags.writeable and not a.flags.owndata
    obs = v.observations
    before = obs.copy()
    v.step(np.array([np.flatnonzero(m)[0] for m in v.action_masks], dtype=np.int64))
    assert not np.array_equal(before, obs)  # the same view sees the new step


def test_core_vector_rejects_bad_batches(small):
    v = gpuplace.make_core_vector_env(small, num_envs=3)
    with pytest.raises(gpuplace.StateError, match="before reset"):
        v.step(np.zeros(3, np.int64))
    v.reset(0)
    before = v.observations.copy()
    with pytest.raises(TypeError, match="dtype int64, got float64"):
        v.step(np.zeros(3))
    with pytest.raises(TypeError, match="numpy int64 array"):
        v.step([0, 1, 2])
    with pytest.raises(ValueError, match=r"shape \(3,\), got \(4,\)"):
        v.step(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match=r"shape \(3,\), got \(3, 1\)"):
        v.step(np.zeros((3, 1), np.int64))
    acts = np.array([np.flatnonzero(m)[0] for m in v.action_masks], dtype=np.int64)
    acts[1] = 16  # DEFER is disabled
    with pytest.raises(gpuplace.InvalidAction, match="env 1: invalid action 16"):
        v.step(acts)
    np.testing.assert_array_equal(v.observations, before)  # no env moved
    with pytest.raises(IndexError):
        v.final_info(3)
    with pytest.raises(gpuplace.ConfigError, match="num_envs"):
        gpuplace.make_core_vector_env(small, num_envs=0)
    # a non-contiguous int64 array is fine
    wide = np.zeros((3, 2), np.int64)
    wide[:, 0] = [np.flatnonzero(m)[0] for m in v.action_masks]
    v.step(wide[:, 0])


def test_sb3_vecenv_protocol(small):
    pytest.importorskip("stable_baselines3")
    from gpuplace.sb3 import SB3VecEnv

    venv = SB3VecEnv(small, num_envs=4)
    venv.seed(5)
    obs = venv.reset()
    assert obs.shape == (4, venv.observation_space.shape[0]) and obs.dtype == np.float32
    assert venv.has_attr("action_masks") and not venv.has_attr("nope")
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (4, 17) and masks.dtype == np.bool_
    np.testing.assert_array_equal(masks, venv.action_masks())
    assert venv.get_attr("render_mode") == [None] * 4
    assert venv.env_method("action_masks", indices=[2])[0].shape == (17,)
    rng = np.random.default_rng(0)
    seen_end = False
    for _ in range(400):
        prev_obs = obs
        obs, rew, dones, infos = venv.step(_valid_actions(venv.action_masks(), rng))
        assert rew.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 4
        assert not np.shares_memory(prev_obs, obs)  # SB3 keeps past observations
        for i in np.flatnonzero(dones):
            info = infos[i]
            seen_end = True
            assert info["terminal_observation"].shape == obs.shape[1:]
            assert info["TimeLimit.truncated"] is False
            assert set(info["episode"]) == {"r", "l", "t"}
            assert info["episode"]["r"] == pytest.approx(info["metrics"]["episode_return"])
            assert info["metrics"]["jobs_done"] == 20
    assert seen_end
    with pytest.raises(TypeError, match="integers"):
        venv.step(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        venv.step(np.zeros(5, np.int64))
    with pytest.raises(gpuplace.InvalidAction, match="invalid action 16"):
        venv.step(np.full(4, 16, np.int64))


def test_sb3_vecenv_matches_single_env_episode(small):
    pytest.importorskip("stable_baselines3")
    from gpuplace.sb3 import SB3VecEnv

    venv = SB3VecEnv(small, num_envs=2)
    venv.seed(3)
    venv.reset()
    ret = None
    for _ in range(1000):
        acts = np.argmax(venv.action_masks()[:, :16], axis=1).astype(np.int64)  # first fit: lowest valid GPU
        _, _, dones, infos = venv.step(acts)
        if dones[1]:
            ret = infos[1]
            break
    ref = gpuplace.run_episode(small, "first_fit", seed=gpuplace.episode_seed(3, 1, 0), record=False)
    assert ret["metrics"]["avg_jct"] == ref["metrics"]["avg_jct"]
    assert ret["episode"]["l"] == ref["steps"]
    np.testing.assert_array_equal(ret["terminal_observation"], gpuplace.run_episode(
        small, "first_fit", seed=gpuplace.episode_seed(3, 1, 0))["observations"][-1])


def test_gymnasium_vector_env(small):
    envs = GymnasiumVectorEnv(num_envs=3, scenario=small)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, info = envs.reset(seed=4)
    assert obs in envs.observation_space and info == {}
    done_count = 0
    for _ in range(300):
        acts = envs.action_space.sample()  # masked: valid for every env
        assert envs.action_masks()[np.arange(3), acts].all()
        obs, rew, term, trunc, info = envs.step(acts)
        assert rew.dtype == np.float64 and term.dtype == np.bool_
        if term.any():
            assert info["_final_obs"].tolist() == term.tolist()
            for i in np.flatnonzero(term):
                assert info["final_obs"][i].shape == (envs.single_observation_space.shape[0],)
                assert info["final_info"]["jobs_done"][i] == 20
                done_count += 1
    assert done_count > 0
    with pytest.raises(ValueError, match="one int seed"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(TypeError, match="integers"):
        envs.step(np.zeros(3))


def test_make_vec_uses_the_vector_entry_point():
    envs = gym.make_vec("gpuplace/ProximityDRL-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, GymnasiumVectorEnv)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, envs.single_observation_space.shape[0])
    obs2, *_ = envs.step(envs.action_space.sample())
    assert obs2.shape == obs.shape


def test_render_vector_envs(small):
    envs = GymnasiumVectorEnv(num_envs=2, scenario=small, render_mode="rgb_array")
    envs.reset(seed=0)
    imgs = envs.render()
    assert len(imgs) == 2 and imgs[0].dtype == np.uint8


def test_both_vector_envs_take_the_scenario_first(small):
    from gpuplace.sb3 import SB3VecEnv

    for cls in (GymnasiumVectorEnv, SB3VecEnv):
        positional, keywords = cls(small, 3), cls(num_envs=3, scenario=small)
        for v in (positional, keywords):
            assert v.num_envs == 3 and v.scenario["name"] == "small"
        assert cls(small).num_envs == 8
    # the old order, (num_envs, scenario), is only the deprecated name's (test_deprecated_names.py)
    with pytest.raises(TypeError, match="scenario must be a preset name, a file path, JSON text, a dict"):
        GymnasiumVectorEnv(3, small)


def _next_step_run(scenario, n, threads, seed, steps):
    """Plays a NEXT_STEP GymnasiumVectorEnv with random valid actions beside n single GymnasiumEnvs
    that reset with the episode seeds; checks every observation, mask, reward, flag and the final
    metrics against them; returns everything seen."""
    envs = GymnasiumVectorEnv(scenario, n, threads, autoreset_mode="next_step")
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert envs.core.autoreset == "next_step"
    singles = [gpuplace.GymnasiumEnv(scenario) for _ in range(n)]
    episode = [0] * n
    obs, _ = envs.reset(seed=seed)
    for i, e in enumerate(singles):
        np.testing.assert_array_equal(obs[i], e.reset(seed=gpuplace.episode_seed(seed, i, 0))[0])
    rng = np.random.default_rng(seed)
    restarting = np.zeros(n, dtype=bool)
    seen, restarts = [obs], 0
    for _ in range(steps):
        masks = envs.action_masks()
        acts = np.array([10**6 if restarting[i] else rng.choice(np.flatnonzero(masks[i])) for i in range(n)])
        obs, rew, term, trunc, infos = envs.step(acts)  # a restarting env's action is ignored, whatever it is
        for i, e in enumerate(singles):
            if restarting[i]:
                episode[i] += 1
                o, _ = e.reset(seed=gpuplace.episode_seed(seed, i, episode[i]))
                r, te, tr, info = 0.0, False, False, {}
                restarts += 1
            else:
                o, r, te, tr, info = e.step(int(acts[i]))
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(envs.action_masks()[i], e.action_masks())
            assert (rew[i], term[i], trunc[i]) == (r, te, tr)
            if te or tr:
                assert infos["_metrics"][i] and infos["metrics"]["avg_jct"][i] == info["metrics"]["avg_jct"]
                assert infos["metrics"]["seed"][i] == gpuplace.episode_seed(seed, i, episode[i])
        restarting = term | trunc
        seen += [obs, rew]
    assert restarts >= n, "every env should have restarted"
    assert "final_obs" not in infos
    return np.concatenate([np.ravel(x) for x in seen])


def test_gymnasium_vector_env_next_step_is_the_single_envs_a_step_later(small, small_ring):
    one = _next_step_run(small, 3, 1, 11, 400)
    np.testing.assert_array_equal(one, _next_step_run(small, 3, 3, 11, 400))  # whatever the thread count
    _next_step_run(small_ring, 2, 2, 4, 300)
    with pytest.raises(ValueError, match=r"autoreset_mode 'later': expected AutoresetMode.SAME_STEP or"):
        GymnasiumVectorEnv(small, 2, autoreset_mode="later")


def test_core_vector_env_next_step_sampler(small):
    """In NEXT_STEP mode the C++ sampler draws nothing for an env that restarts (-1), and
    step_random() is still sample_valid_actions() then step()."""
    a = gpuplace.make_core_vector_env(small, 4, 2, autoreset="next_step")
    b = gpuplace.make_core_vector_env(small, 4, 1, autoreset="next_step")
    a.reset(9)
    b.reset(9)
    acts_a, acts_b = np.empty(4, np.int64), np.empty(4, np.int64)
    minus = 0
    for _ in range(500):
        restarting = a.dones.copy()
        a.step_random(acts_a)
        b.sample_valid_actions(acts_b)
        b.step(acts_b)
        np.testing.assert_array_equal(acts_a, acts_b)
        np.testing.assert_array_equal(acts_a == -1, restarting)
        np.testing.assert_array_equal(a.observations, b.observations)
        minus += int(restarting.sum())
    assert minus > 0
    with pytest.raises(gpuplace.ConfigError, match=r'unknown autoreset mode "NextStep" \(allowed: same_step, next_step\)'):
        gpuplace.make_core_vector_env(small, 2, autoreset="NextStep")
