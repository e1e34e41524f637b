"""The placement and job action modes from Python (the action_mode kwarg): spaces, the Gymnasium
and SB3 checkers, masks and the reward identity under random play, errors, and MaskablePPO with the
per-item policy (PerGpuPolicy scores candidates or queue slots with the same network)."""

import warnings

import numpy as np
import pytest

import gpuplace
from gpuplace.sb3 import SB3VecEnv
from gpuplace.gymnasium import GymnasiumVectorEnv

MODES = ("placement", "job")
SMALL = {"name": "small", "workload": {"kind": "synthetic", "num_jobs": 30, "load": 1.0}, "env": {"allow_defer": True}}


@pytest.mark.parametrize("mode", MODES)
def test_spaces_and_layout(mode):
    env = gpuplace.GymnasiumEnv(SMALL, action_mode=mode, overrides={"env": {"slots": 5}})
    assert env.scenario["env"]["action_mode"] == mode
    assert env.action_space.n == 6
    names = [s["name"] for s in env.observation_layout]
    assert names[0] == ("candidate_valid" if mode == "placement" else "slot_valid")
    assert env.observation_space.shape == (int(env.core.observation_size),)
    obs, _ = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape
    assert env.action_masks().shape == (6,)


@pytest.mark.parametrize("mode", MODES)
def test_checkers_pass_without_warnings(mode):
    from gymnasium.utils.env_checker import check_env as gym_check

    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    import gymnasium as gym

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("gpuplace/Default-v0", action_mode=mode)  # the Gymnasium kwarg
        assert env.unwrapped.action_space.n == 9
        gym_check(env.unwrapped)
        sb3_checker.check_env(gym.make("gpuplace/Default-v0", action_mode=mode).unwrapped, warn=True)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("mode", MODES)
def test_random_play_masks_and_reward_identity(mode):
    env = gpuplace.GymnasiumEnv(SMALL, action_mode=mode)
    rng = np.random.default_rng(3)
    for seed in (1, 2):
        env.reset(seed=seed)
        total, done, info = 0.0, False, {}
        while not done:
            mask = env.action_masks()
            assert mask.any()  # never all zero before the end
            a = int(rng.choice(np.flatnonzero(mask)))
            _, r, term, trunc, info = env.step(a)
            total += r
            done = term or trunc
        m = info["metrics"]
        assert m["jobs_done"] == 30
        assert total == pytest.approx(-m["avg_jct"] * 30 / 3600.0, rel=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_invalid_action_raises_and_changes_nothing(mode):
    env = gpuplace.GymnasiumEnv(SMALL, action_mode=mode, overrides={"env": {"slots": 4}})
    obs, _ = env.reset(seed=4)
    with pytest.raises(gpuplace.InvalidAction, match=r"out of range \[0, 4\]"):
        env.step(9)
    bad = np.flatnonzero(~env.action_masks())
    if len(bad):
        with pytest.raises(gpuplace.InvalidAction):
            env.step(int(bad[0]))
    assert np.array_equal(obs, env.observation_view)


def test_bad_action_mode_is_a_config_error():
    with pytest.raises(gpuplace.ConfigError, match="/env/action_mode"):
        gpuplace.GymnasiumEnv(SMALL, action_mode="jobs")
    with pytest.raises(gpuplace.ConfigError, match="/env/slots"):
        gpuplace.GymnasiumEnv(SMALL, action_mode="job", overrides={"env": {"slots": 0}})


@pytest.mark.parametrize("mode", MODES)
def test_vector_envs_take_the_mode(mode):
    v = SB3VecEnv(SMALL, num_envs=3, action_mode=mode)
    assert v.action_space.n == 9
    v.reset()
    masks = v.env_method("action_masks")
    assert all(m.any() for m in masks)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    v.step(acts)
    g = GymnasiumVectorEnv(SMALL, num_envs=2, action_mode=mode)
    assert g.single_action_space.n == 9
    g.close()


@pytest.mark.parametrize("mode", MODES)
def test_maskable_ppo_with_the_per_item_policy(mode):
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import PerGpuPolicy, pretrain
    from gpuplace.torch_net import ObsSpec

    v = SB3VecEnv(SMALL, num_envs=2, action_mode=mode)
    spec = ObsSpec.from_space(v.observation_space)
    assert spec.items == ("candidate" if mode == "placement" else "slot")
    assert spec.num_gpus == 8 and spec.num_actions == 9
    model = MaskablePPO(PerGpuPolicy, v, n_steps=32, batch_size=32, n_epochs=1, seed=1,
                        policy_kwargs={"hidden": (16, 16), "value_hidden": (16,)})
    stats = pretrain(model, "pack_wait", steps=512, show_progress=False, seed=1)
    assert stats["agreement"] > 0.5  # the teacher's choices are learnable from the candidates / slots
    model.learn(64)
    obs = v.reset()
    actions, _ = model.predict(obs, action_masks=np.stack(v.env_method("action_masks")), deterministic=True)
    assert all(np.stack(v.env_method("action_masks"))[i, a] for i, a in enumerate(actions))
