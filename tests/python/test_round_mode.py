"""The round action mode from Python (docs/rounds.md, "An agent builds the allocation"): the
registered ids gpuplace/PhillyHiddenRound-v0 and gpuplace/HeterogeneousRound-v0, zero-copy
observations and masks, masks and the reward identity under random play, determinism by seed, and
short training runs of the C++ PPO and of SB3's MaskablePPO."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace.config import load_scenario
from gpuplace.registration import ROUND_OVERRIDES
from gpuplace.sb3 import SB3VecEnv

SMALL = {"name": "small", "workload": {"kind": "synthetic", "num_jobs": 30, "load": 1.5},
         "env": {"action_mode": "round", "slots": 4}}
SHORT = {"workload": {"episode_jobs": 30}}  # philly_hidden windows of 30 jobs


def test_round_ids_are_round_mode_scenarios():
    env = gym.make("gpuplace/PhillyHiddenRound-v0", overrides=SHORT).unwrapped
    sc = env.scenario
    assert sc["env"]["action_mode"] == "round"
    assert sc["durations"]["mode"] == "hidden"
    assert sc["preemption"]["enabled"] is False  # the id's overrides, merged with the caller's
    assert sc["workload"]["episode_jobs"] == 30
    assert env.action_space.n == sc["env"]["slots"] + 1
    names = [s["name"] for s in env.observation_layout]
    assert names[0] == "slot_valid" and names[-1] == "round"
    het = gym.make("gpuplace/HeterogeneousRound-v0").unwrapped
    assert {"slot_speed_v100", "slot_speed_p100", "slot_speed_k80", "slot_on_k80"} <= {s["name"] for s in het.observation_layout}


def test_the_advisor_orders_the_slots_and_its_fill_is_class_gittins():
    over = {**SHORT, "env": {"round_advisor": "class_gittins"}}
    env = gym.make("gpuplace/PhillyHiddenRound-v0", overrides=over).unwrapped
    assert env.scenario["env"]["round_advisor"] == "class_gittins"
    lay = {s["name"]: s for s in env.observation_layout}
    rank = lay["slot_advice_rank"]
    assert "slot_advised" in lay
    env.reset(seed=1000000)
    done = False
    while not done:  # the first valid slot, the advisor's highest ranked job that fits
        obs = env.observation_view
        mask = env.action_masks()
        valid = np.flatnonzero(mask[:-1])
        ranks = obs[rank["offset"] + valid]
        assert np.all(np.diff(ranks) < 0)
        _, _, term, trunc, _ = env.step(int(valid[0]))
        done = term or trunc
    jobs = env.core.finished_jobs()
    fill = float(np.mean(jobs["end"] - jobs["submit"]))
    sc = load_scenario("philly_hidden", {**ROUND_OVERRIDES, **SHORT})
    rep = _core.evaluate(sc, ["pack+class_gittins"], [1000000], 1)
    (m,) = rep.per_seed("pack+class_gittins")
    assert fill == pytest.approx(m["avg_jct"], rel=1e-12)


@pytest.mark.parametrize("env_id", ["gpuplace/PhillyHiddenRound-v0", "gpuplace/HeterogeneousRound-v0"])
def test_random_play_masks_and_reward_identity(env_id):
    env = gym.make(env_id, overrides=SHORT if "Philly" in env_id else {"workload": {"num_jobs": 30}}).unwrapped
    K = env.action_space.n - 1
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=2)
    view, mask_view = env.observation_view, env.action_mask_view
    total, done, info = 0.0, False, {}
    while not done:
        mask = env.action_masks()
        assert mask.any()  # a decision always has a valid action
        assert np.array_equal(mask, env.core.action_mask.astype(bool))
        a = K if mask[K] and rng.random() < 0.2 else int(rng.choice(np.flatnonzero(mask)))
        obs, r, term, trunc, info = env.step(a)
        assert obs in env.observation_space
        total += r
        done = term or trunc
    assert view.base is not None and mask_view.base is not None  # views on the C++ buffers (no copy)
    assert term and info["jobs_done"] == info["jobs_total"] == 30
    jobs = env.core.finished_jobs()
    jct = float(np.sum(jobs["end"] - jobs["submit"]))
    assert total == pytest.approx(-jct / env.scenario["reward"]["time_scale"], rel=1e-9)


def test_the_same_seed_gives_the_same_episode():
    def run():
        env = gpuplace.GymnasiumEnv(SMALL)
        rng = np.random.default_rng(1)
        env.reset(seed=7)
        out, done = [], False
        while not done:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, r, term, trunc, _ = env.step(a)
            out.append((obs.tobytes(), r))
            done = term or trunc
        return out

    assert run() == run()


def test_checkers_pass_in_the_round_mode_of_another_preset():
    from gymnasium.utils.env_checker import check_env as gym_check

    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        small = {"workload": {"num_jobs": 30}, "env": {"slots": 4}}
        gym_check(gym.make("gpuplace/Default-v0", action_mode="round", overrides=small).unwrapped)
        sb3_checker.check_env(gym.make("gpuplace/Default-v0", action_mode="round", overrides=small).unwrapped, warn=True)
    assert [str(w.message) for w in caught] == []


@pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")
def test_the_cpp_ppo_trains_in_the_round_mode(tmp_path):
    cfg = {"total_steps": 512, "num_envs": 4, "num_steps": 32, "minibatches": 2, "epochs": 2, "teacher": "pack",
           "imitation_steps": 256, "network": {"hidden": [8, 8], "value_hidden": [8]}}
    p = _core.PPO(SMALL, cfg)
    stats = [p.iterate() for _ in range(4)]
    assert all(np.isfinite(s["policy_loss"]) for s in stats)
    path = tmp_path / "ppo.json"
    p.save(str(path))
    net = _core.load_checkpoint(str(path))
    rep = _core.evaluate_network(SMALL, net, [1000000], "ppo", 1)
    (m,) = rep.per_seed("ppo")
    assert m["jobs_done"] == m["jobs_total"] == 30


def test_maskable_ppo_trains_in_the_round_mode():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import PerGpuPolicy
    from gpuplace.torch_net import ObsSpec

    v = SB3VecEnv(SMALL, num_envs=2)
    spec = ObsSpec.from_space(v.observation_space)
    assert spec.items == "slot" and spec.num_actions == 5
    model = MaskablePPO(PerGpuPolicy, v, n_steps=32, batch_size=32, n_epochs=1, seed=1,
                        policy_kwargs={"hidden": (16, 16), "value_hidden": (16,)})
    model.learn(128)
    obs = v.reset()
    masks = np.stack(v.env_method("action_masks"))
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert all(masks[i, a] for i, a in enumerate(actions))


PLANNER = "rollout2h3:pack+class_gittins"
ADVISED = {**SHORT, "env": {"round_advisor": "class_gittins"}}
ROUND = {"preemption": {"enabled": False}, "env": {"queue_policy": "fifo", "action_mode": "round"}}  # ROUND_OVERRIDES, round mode


def _round_vec(overrides, n=2, seed=1000000):
    sc = load_scenario(load_scenario("philly_hidden", ROUND), overrides)
    vec = gpuplace.make_core_vector_env(sc, n)
    vec.reset(seed)
    return sc, vec


def _rollout(teacher, vec, steps):
    O, A, N = int(vec.observation_size), int(vec.num_actions), int(vec.num_envs)
    obs = np.empty((steps, N, O), np.float32)
    masks = np.empty((steps, N, A), np.uint8)
    acts = np.empty((steps, N), np.int64)
    teacher.rollout(vec, obs, masks, acts)
    return obs, masks, acts


def test_the_round_planner_is_a_teacher_from_python():
    from gpuplace.sb3 import split_teacher, teacher_scenario

    full = {"env": {"round_advisor": "class_gittins"}}  # 200-job windows: contested rounds within 300 steps
    sc, vec = _round_vec(full)
    t = _core.Teacher(PLANNER, 2, seed=5)
    assert t.queue == ""  # it acts in the env as it is, its base the env's advisor
    assert split_teacher(PLANNER) == (PLANNER, None)
    assert teacher_scenario(sc, PLANNER) == sc
    obs, masks, acts = _rollout(t, vec, 300)
    assert all(masks[s, i, acts[s, i]] for s in range(300) for i in range(2))  # every action valid
    _, vec2 = _round_vec(full)
    _, _, again = _rollout(_core.Teacher(PLANNER, 2, seed=5), vec2, 300)
    assert np.array_equal(acts, again)  # a function of the seeds
    first_valid = masks[:, :, :-1].argmax(-1)
    assert np.any(acts != first_valid)  # the planner, not the advisor's fill (its first valid slot)


def test_the_round_planner_refuses_an_env_it_cannot_act_in_before_anything_moves():
    for over, says in [(SHORT, "the env's action mode is round, without an advisor"),
                       ({**ADVISED, "rounds": {"elastic": {"share": 0.5}}}, "a scenario with elastic jobs")]:
        _, vec = _round_vec(over)
        before = np.array(vec.observations, copy=True)
        with pytest.raises(_core.ConfigError, match=says):
            _rollout(_core.Teacher(PLANNER, 2), vec, 4)
        with pytest.raises(_core.ConfigError, match=says):
            _core.Teacher(PLANNER, 2).act(vec)
        assert np.array_equal(vec.observations, before)
    with pytest.raises(_core.ConfigError, match="a rollout planner labels the states the network visits"):
        _core.Teacher("rollout4:pack_wait+sjf", 2)


@pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")
def test_the_cpp_ppo_refuses_the_round_planner_as_teacher_without_the_advisor():
    cfg = {"total_steps": 64, "num_envs": 2, "num_steps": 32, "teacher": PLANNER, "imitation_steps": 64}
    sc = load_scenario(load_scenario("philly_hidden", ROUND), SHORT)
    with pytest.raises(_core.ConfigError, match="without an advisor"):
        _core.PPO(sc, cfg)


def test_maskable_ppo_clones_the_round_planner():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import PerGpuPolicy, pretrain

    sc = load_scenario("philly_hidden", ROUND)
    v = SB3VecEnv(load_scenario(sc, ADVISED), num_envs=2)
    model = MaskablePPO(PerGpuPolicy, v, n_steps=32, batch_size=32, n_epochs=1, seed=1,
                        policy_kwargs={"hidden": (16, 16), "value_hidden": (16,)})
    out = pretrain(model, PLANNER, steps=128, value_warmup=0, show_progress=False)
    assert out["imitation_steps"] == 128 and 0.0 <= out["agreement"] <= 1.0
    with pytest.raises(_core.ConfigError, match="without an advisor"):
        pretrain(MaskablePPO(PerGpuPolicy, SB3VecEnv(load_scenario(sc, SHORT), num_envs=2), n_steps=32, batch_size=32,
                             policy_kwargs={"hidden": (8,), "value_hidden": (8,)}), PLANNER, steps=64, show_progress=False)


def test_the_round_planner_with_hindsight_runs_by_name_and_repeats_by_seed():
    # hindsight<...>: plays each alternative on the episode's own future: NOT causal (docs/planning.md)
    sc = load_scenario("philly_hidden:e13805", {**ROUND_OVERRIDES, **SHORT})
    names = ["hindsighth3v:pack+class_gittins", "pack+class_gittins"]
    a = _core.evaluate(sc, names, [1000000, 1000001], 1)
    b = _core.evaluate(sc, names[:1], [1000000, 1000001], 1)
    runs = a.per_seed(names[0])
    assert all(m["jobs_done"] == m["jobs_total"] > 0 for m in runs)
    assert [m["avg_jct"] for m in runs] == [m["avg_jct"] for m in b.per_seed(names[0])]
    with pytest.raises(_core.ConfigError, match="hindsight plays the one true future with no margin"):
        _core.evaluate(sc, ["hindsight8h3:pack+class_gittins"], [1000000], 1)
