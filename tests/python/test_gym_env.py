"""GymnasiumEnv: Gymnasium semantics, checkers, config sources, rendering, errors."""

import json
import pickle
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from conftest import random_episode


@pytest.mark.parametrize("env_id", sorted(gpuplace.ENV_IDS))
def test_gymnasium_check_env_without_warnings(env_id):
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", sorted(gpuplace.ENV_IDS))
def test_sb3_check_env_without_warnings(env_id):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env.unwrapped, warn=True)
    assert [str(w.message) for w in caught] == []


def test_registered_ids_and_spaces():
    env = gym.make("gpuplace/ProximityDRL-v0")
    u = env.unwrapped
    assert isinstance(u, gpuplace.GymnasiumEnv)
    assert u.scenario["name"] == "proximity_drl"
    assert env.action_space.n == 33  # 32 GPUs + DEFER
    assert env.observation_space.dtype == np.float32
    assert env.observation_space.low.min() == 0.0 and env.observation_space.high.max() == 1.0
    assert gym.make("gpuplace/Default-v0").action_space.n == 65


def test_step_types_and_final_metrics(small):
    env = gpuplace.GymnasiumEnv(small)
    obs, info = env.reset(seed=3)
    assert obs.dtype == np.float32 and obs in env.observation_space
    assert info["jobs_total"] == 20
    total, done = 0.0, False
    while not done:
        a = env.action_space.sample()  # masked sampling: always a valid action
        assert env.action_masks()[a]
        obs, r, term, trunc, info = env.step(a)
        assert type(r) is float and type(term) is bool and type(trunc) is bool
        assert obs in env.observation_space
        total += r
        done = term or trunc
    assert term and not trunc
    m = info["metrics"]
    assert m["jobs_done"] == 20
    # the default reward sums to -(sum of JCTs) / time_scale
    assert total == pytest.approx(-m["avg_jct"] * 20 / 3600.0, rel=1e-9)
    assert info["episode_return"] == pytest.approx(total, rel=1e-12)


def test_observations_are_copies_unless_asked(small):
    env = gpuplace.GymnasiumEnv(small)
    o0, _ = env.reset(seed=0)
    o1, *_ = env.step(env.action_space.sample())
    assert not np.shares_memory(o0, o1)
    view_env = gpuplace.GymnasiumEnv(small, copy_obs=False)
    v0, _ = view_env.reset(seed=0)
    assert np.shares_memory(v0, view_env.observation_view)
    assert v0.base is view_env.core


def test_reset_seed_semantics(small):
    env = gpuplace.GymnasiumEnv(small)
    a, _ = env.reset(seed=11)
    b, _ = env.reset()
    c, _ = env.reset(seed=11)
    d, _ = env.reset()
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)
    assert env.core.seed != 11
    core = gpuplace.make_core_env(small)
    core.reset(11)
    np.testing.assert_array_equal(core.observation, a)
    with pytest.raises(ValueError, match="unknown option"):
        env.reset(options={"foo": 1})


def test_config_sources(tmp_path, small):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    for src in (small, json.dumps(small), str(path), path):
        env = gpuplace.GymnasiumEnv(src)
        assert env.scenario["name"] == "small" and env.num_gpus == 16
    assert gpuplace.GymnasiumEnv("proximity_drl").num_gpus == 32
    env = gpuplace.GymnasiumEnv(small, overrides={"env": {"max_steps": 5}})
    env.reset(seed=0)
    for _ in range(5):
        *_, term, trunc, info = env.step(env.action_space.sample())
    assert trunc and not term and "metrics" in info


def test_bad_config_names_the_key(tmp_path, small):
    bad = dict(small, workload=dict(small["workload"], num_jobz=3))
    with pytest.raises(gpuplace.ConfigError, match=r"/workload/num_jobz"):
        gpuplace.GymnasiumEnv(bad)
    with pytest.raises(ValueError, match=r"/topology/racks"):
        gpuplace.GymnasiumEnv(dict(small, topology={"preset": "custom", "racks": 0}))
    with pytest.raises(gpuplace.ConfigError, match="unknown key \"bogus\""):
        gpuplace.GymnasiumEnv("default", overrides={"bogus": 1})
    with pytest.raises(gpuplace.ConfigError, match=r'scenario "defualt": not JSON text .* not a preset \(default, '):
        gpuplace.GymnasiumEnv("defualt")
    missing = tmp_path / "missing.json"
    with pytest.raises(gpuplace.ConfigError, match=re.escape(f'not a file (no file "{missing}")')):
        gpuplace.GymnasiumEnv(str(missing))
    with pytest.raises(gpuplace.ConfigError, match=re.escape(f'cannot open scenario file "{missing}"')):
        gpuplace.GymnasiumEnv(missing)  # a path object names a file, whatever its name
    p = tmp_path / "broken.json"
    p.write_text('{"name": "x",\n "env": {')
    with pytest.raises(gpuplace.ConfigError, match=r"broken.json: invalid JSON at byte 24: .* line 2, column 10"):
        gpuplace.GymnasiumEnv(str(p))
    with pytest.raises(gpuplace.ConfigError, match="invalid JSON"):
        gpuplace.GymnasiumEnv('{"name": ')
    with pytest.raises(TypeError, match="scenario must be"):
        gpuplace.GymnasiumEnv(42)


def test_invalid_action_through_gymnasium(small):
    env = gym.make("gpuplace/ProximityDRL-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="invalid action 32 \\(DEFER\\)"):
        env.step(32)
    with pytest.raises(ValueError, match="invalid action 77"):
        env.step(77)
    # still usable
    env.step(env.action_space.sample())


def test_render_modes(small):
    env = gpuplace.GymnasiumEnv(small, render_mode="rgb_array")
    env.reset(seed=1)
    for _ in range(6):
        env.step(env.action_space.sample())
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    # busy GPUs are coloured, free ones light grey: more than 2 colours once jobs run
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 2
    text = gpuplace.GymnasiumEnv(small, render_mode="ansi")
    text.reset(seed=1)
    assert "node" in text.render()
    with pytest.raises(ValueError, match="render_mode"):
        gpuplace.GymnasiumEnv(small, render_mode="human")


def test_action_space_pickles_as_plain_discrete(small):
    env = gpuplace.GymnasiumEnv(small)
    env.reset(seed=0)
    sp = pickle.loads(pickle.dumps(env.action_space))
    assert type(sp) is gym.spaces.Discrete and sp == env.action_space


def test_segments(small):
    env = gpuplace.GymnasiumEnv(small)
    env.reset(seed=0)
    assert env.segment("gpu_busy").shape == (16,)
    with pytest.raises(KeyError, match="gpu_busy"):
        env.segment("nope")


def test_random_episode_helper_terminates(small_ring):
    t = random_episode(gpuplace.GymnasiumEnv(small_ring), seed=2)
    assert t["info"]["metrics"]["jobs_done"] == 12
