"""The per-GPU torch network and MaskablePPO policy (gpuplace.torch_net, gpuplace.sb3): masking,
size independence, the C++ checkpoint twin, behaviour cloning from C++ teachers, a short training
run that neither collapses into DEFER nor loses to random, and the env checkers."""

import copy
import json
import os
import pickle

import numpy as np
import pytest

import gpuplace
from gpuplace import _core

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from gpuplace.evaluation import evaluate_agent, maskable_policy  # noqa: E402
from gpuplace.sb3 import (  # noqa: E402
    PerGpuPolicy,
    checkpoint_policy_kwargs,
    load_cpp_checkpoint,
    per_gpu_ppo_kwargs,
    pretrain,
    queue_policy_of,
    save_cpp_checkpoint,
    teacher_scenario,
    train_per_gpu,
    wrap_vec_env,
)
from gpuplace.torch_net import LayoutError, NetConfig, ObsSpec, PerGpuNet, load_checkpoint, masked_logits  # noqa: E402
from gpuplace.sb3 import SB3VecEnv  # noqa: E402

# the default scenario's cluster cut to 2 nodes (16 GPUs), same workload shape and queue window
SIXTEEN = {"name": "sixteen", "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
           "workload": {"kind": "synthetic", "num_jobs": 40, "load": 1.0}, "env": {"allow_defer": True}}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _states(scenario, n, seed=0, policy=None):
    """n (observation, mask) pairs from episodes of random valid actions (or a heuristic)."""
    rng = np.random.default_rng(seed)
    e = gpuplace.make_core_env(scenario)
    h = _core.Heuristic(policy) if policy else None
    obs, masks, s = [], [], 1000
    e.reset(s)
    while len(obs) < n:
        if e.done:
            s += 1
            e.reset(s)
            continue
        obs.append(e.observation.copy())
        masks.append(e.action_mask.view(np.bool_).copy())
        e.step(h.act(e) if h else int(rng.choice(np.flatnonzero(masks[-1]))))
    return np.stack(obs), np.stack(masks)


def _random_net(spec, seed=0, scale=1.0):
    torch.manual_seed(seed)
    net = PerGpuNet(spec, NetConfig(node_features=True))
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, scale)
    return net


# Two float implementations of one network (torch and the C++ one, each with its own kernels and
# reduction order) give logits that agree to about 1e-7 relative, not bit for bit. Both take the
# first maximal valid action, so they choose alike wherever the best logit leads the next by more
# than this tolerance; within it (GPUs with equal features score equal logits up to rounding)
# either choice is a maximal one.
TIE_TOLERANCE = 1e-5


def assert_same_greedy(torch_actions, cpp_actions, torch_logits, masks, tol=TIE_TOLERANCE):
    """Identical greedy choices wherever the top two (masked) torch logits differ by more than
    ``tol * (1 + |best|)``; elsewhere the C++ choice must be valid and within that of the best."""
    best = torch_logits.max(-1).values.numpy().astype(np.float64)
    at_cpp = torch_logits[torch.arange(len(cpp_actions)), torch.as_tensor(cpp_actions)].numpy().astype(np.float64)
    valid = masks[np.arange(len(cpp_actions)), cpp_actions]
    assert valid.all(), f"C++ chose masked actions in states {np.flatnonzero(~valid)[:5]}"
    slack = tol * (1.0 + np.abs(best))
    far = np.flatnonzero((torch_actions != cpp_actions) & (best - at_cpp > slack))
    gaps = [(float(best[i]), float(at_cpp[i])) for i in far[:5]]
    assert far.size == 0, f"{far.size} of {len(cpp_actions)} choices differ beyond a tie (torch max vs C++ choice {gaps})"


def test_tie_rule_is_the_first_maximal_valid_action():
    # equal logits: the lowest valid index wins, in torch as in the C++ categorical (argmax over
    # valid actions with a strict comparison)
    lg = torch.tensor([[1.0, 2.0, 2.0, 2.0], [0.5, 0.5, 0.5, 0.5]])
    m = torch.tensor([[True, False, True, True], [False, False, True, True]])
    assert masked_logits(lg, m).argmax(-1).tolist() == [2, 2]


def test_layout_is_read_from_the_observation_space_and_survives_pickling():
    env = gpuplace.GymnasiumEnv("default")
    spec = ObsSpec.from_space(env.observation_space)
    assert spec.same_shape(ObsSpec(num_gpus=64, gpu_features=6, context=41, gpus_per_node=8))
    assert len(spec.names) == 6 + 41 and spec.names[:2] == ("gpu_busy", "gpu_picked")
    assert spec.obs_size == env.observation_space.shape[0] and spec.num_actions == env.action_space.n
    for space in (pickle.loads(pickle.dumps(env.observation_space)), copy.deepcopy(env.observation_space),
                  SB3VecEnv("default", num_envs=2).observation_space,
                  gpuplace.GymnasiumVectorEnv("default", 2).single_observation_space):
        assert ObsSpec.from_space(space) == spec
    with pytest.raises(LayoutError, match="carries no gpuplace observation layout"):
        ObsSpec.from_space(type(env.observation_space)(0.0, 1.0, shape=(425,), dtype=np.float32))


def test_masked_logits_never_win():
    obs, masks = _states("default", 400, seed=1)
    spec = ObsSpec.from_space(gpuplace.GymnasiumEnv("default").observation_space)
    o, m = torch.from_numpy(obs), torch.from_numpy(masks)
    for seed in range(3):
        net = _random_net(spec, seed, scale=3.0)  # large weights: masked GPUs often score highest
        logits = net.logits(o)
        raw_best = logits.argmax(-1)
        assert not m[torch.arange(len(m)), raw_best].all(), "the test needs states where a masked action scores best"
        best = masked_logits(logits, m).argmax(-1)
        assert m[torch.arange(len(m)), best].all()
        # through the MaskablePPO policy: masked actions have probability 0, sampled or greedy
        policy = PerGpuPolicy(gpuplace.GymnasiumEnv("default").observation_space,
                              gpuplace.GymnasiumEnv("default").action_space, lambda _: 3e-4)
        policy.net.load_state_dict(net.state_dict())
        d = policy.get_distribution(o, action_masks=masks)
        probs = d.distribution.probs
        assert (probs[~m] == 0).all() and torch.allclose(probs.sum(-1), torch.ones(len(m)))
        for _ in range(5):
            assert m[torch.arange(len(m)), d.get_actions()].all()
        assert (torch.as_tensor(policy.greedy_actions(obs, masks)) == best).all()
        actions, values, logp = policy(o, action_masks=masks)
        assert m[torch.arange(len(m)), actions].all() and torch.isfinite(logp).all() and values.shape == (len(m), 1)


def test_the_same_weights_act_alike_on_16_and_64_gpus():
    obs16, masks16 = _states(SIXTEEN, 300, seed=2)
    env16, env64 = gpuplace.GymnasiumEnv(SIXTEEN), gpuplace.GymnasiumEnv("default")
    spec16, spec64 = ObsSpec.from_space(env16.observation_space), ObsSpec.from_space(env64.observation_space)
    assert spec16.num_gpus == 16 and (spec16.gpu_features, spec16.context) == (spec64.gpu_features, spec64.context)
    # the 64-GPU observation: the 16 GPUs' features four times over (same node statistics and means),
    # the same context; only the first 16 GPUs (and DEFER) may be chosen
    F, G = spec16.gpu_features, 16
    gpu = obs16[:, : F * G].reshape(-1, F, G)
    obs64 = np.concatenate([np.tile(gpu, (1, 1, 4)).reshape(len(obs16), -1), obs16[:, F * G :]], axis=1)
    masks64 = np.zeros((len(obs16), 65), bool)
    masks64[:, :16] = masks16[:, :16]
    masks64[:, 64] = masks16[:, 16]
    p16 = PerGpuPolicy(env16.observation_space, env16.action_space, lambda _: 3e-4)
    p64 = PerGpuPolicy(env64.observation_space, env64.action_space, lambda _: 3e-4)
    with torch.no_grad():
        for p in p16.parameters():
            p.normal_(0.0, 0.5)
    p64.load_state_dict(p16.state_dict())  # the weights do not depend on the number of GPUs
    with torch.no_grad():
        d16 = p16.get_distribution(torch.from_numpy(obs16), masks16).distribution.probs
        d64 = p64.get_distribution(torch.from_numpy(obs64), masks64).distribution.probs
        v16 = p16.predict_values(torch.from_numpy(obs16))
        v64 = p64.predict_values(torch.from_numpy(obs64))
    assert torch.allclose(d64[:, :16], d16[:, :16], atol=1e-6) and torch.allclose(d64[:, 64], d16[:, 16], atol=1e-6)
    assert (d64[:, 16:64] == 0).all()
    assert torch.allclose(v16, v64, atol=1e-5)
    # one network object acts on both widths (it reads the number of GPUs from the observation)
    with torch.no_grad():
        assert torch.allclose(p16.net.logits(torch.from_numpy(obs64))[:, :16], p64.net.logits(torch.from_numpy(obs64))[:, :16])


@pytest.fixture(scope="module")
def cpp_checkpoint(tmp_path_factory):
    """A C++ per_gpu checkpoint of the main job's network config, after a little cloning and PPO."""
    if not getattr(_core, "has_ppo", False):
        pytest.fail("this build of gpuplace._core has no C++ PPO")
    path = tmp_path_factory.mktemp("ckpt") / "ppo.json"
    cfg = {"total_steps": 2048, "num_envs": 8, "num_steps": 128, "teacher": "pack", "imitation_steps": 2048,
           "gamma": 1.0, "clip": 0.1, "ent_coef": 0.0, "seed": 3,
           "network": {"architecture": "per_gpu", "hidden": [64, 64], "value_hidden": [64, 64], "activation": "tanh",
                       "node_features": True}}
    trainer = _core.PPO("default", cfg)
    while not trainer.done:
        trainer.iterate()
    trainer.save(str(path))
    return path


def test_a_loaded_cpp_checkpoint_acts_like_the_cpp_network_and_exports_back(cpp_checkpoint, tmp_path):
    net, meta = load_checkpoint(cpp_checkpoint)
    assert meta["obs_spec"]["num_gpus"] == 64 and net.config == NetConfig(node_features=True)
    exported = tmp_path / "exported.json"
    from gpuplace.torch_net import save_checkpoint

    save_checkpoint(exported, net, meta["scenario"], meta["ppo"])
    a, b = json.loads(cpp_checkpoint.read_text()), json.loads(exported.read_text())
    assert a["parts"] == b["parts"] and a["obs_spec"] == b["obs_spec"] and a["network"] == b["network"]
    cpp, back = _core.load_checkpoint(str(cpp_checkpoint)), _core.load_checkpoint(str(exported))
    # 1,000 recorded states: half on the C++ network's own trajectory, half under random actions
    rng = np.random.default_rng(0)
    e = gpuplace.make_core_env("default")
    obs, masks, acts, acts_back = [], [], [], []
    seed = 1_000_000
    e.reset(seed)
    while len(obs) < 1000:
        if e.done:
            seed += 1
            e.reset(seed)
        obs.append(e.observation.copy())
        masks.append(e.action_mask.view(np.bool_).copy())
        acts.append(cpp.act(e))
        acts_back.append(back.act(e))
        e.step(acts[-1] if len(obs) < 500 else int(rng.choice(np.flatnonzero(masks[-1]))))
    obs, masks, acts = np.stack(obs), np.stack(masks), np.array(acts)
    with torch.no_grad():
        lg = masked_logits(net.logits(torch.from_numpy(obs)), torch.from_numpy(masks))
    assert_same_greedy(net.act(obs, masks), acts, lg, masks)
    assert (np.array(acts_back) == acts).all()
    # into a MaskablePPO model, and out again
    venv = SB3VecEnv("default", num_envs=2)
    model = MaskablePPO(PerGpuPolicy, venv, policy_kwargs=checkpoint_policy_kwargs(cpp_checkpoint), device="cpu")
    load_cpp_checkpoint(model, cpp_checkpoint)
    assert_same_greedy(np.asarray(model.policy.greedy_actions(obs, masks)), acts, lg, masks)
    save_cpp_checkpoint(model, tmp_path / "from_sb3.json")
    assert json.loads((tmp_path / "from_sb3.json").read_text())["parts"] == a["parts"]
    assert (_core.load_checkpoint(str(tmp_path / "from_sb3.json")).act(e) == cpp.act(e))


def test_checkpoints_that_do_not_fit_are_refused_by_name(cpp_checkpoint, tmp_path):
    doc = json.loads(cpp_checkpoint.read_text())
    env = SB3VecEnv("default", num_envs=2)
    # another network config
    model = MaskablePPO(PerGpuPolicy, env, policy_kwargs={"node_features": False}, device="cpu")
    before = copy.deepcopy(model.policy.state_dict())
    with pytest.raises(gpuplace.CheckpointError, match="node_features"):
        load_cpp_checkpoint(model, cpp_checkpoint)
    # another context (queue window 4 instead of 8)
    small_q = SB3VecEnv("default", num_envs=2, overrides={"env": {"queue_window": 4}})
    m2 = MaskablePPO(PerGpuPolicy, small_q, policy_kwargs=checkpoint_policy_kwargs(cpp_checkpoint), device="cpu")
    with pytest.raises(LayoutError, match="41 context values vs 25"):
        load_cpp_checkpoint(m2, cpp_checkpoint)
    # options this module does not know (a newer C++ network), wrong sizes, a flat network
    for patch, match in (({"network": {**doc["network"], "gpu_embedding": 8}}, "gpu_embedding"),
                         ({"network": {**doc["network"], "architecture": "flat"}}, "only per_gpu"),
                         ({"parts": {**doc["parts"], "tail": {**doc["parts"]["tail"], "sizes": [64, 32, 1]}}},
                          r"/parts/tail/sizes"),
                         ({"version": 2}, "unsupported version 2")):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**doc, **patch}))
        with pytest.raises(gpuplace.CheckpointError, match=match):
            load_cpp_checkpoint(model, bad)
    assert all(torch.equal(before[k], v) for k, v in model.policy.state_dict().items())
    # a 16-GPU env takes the 64-GPU network (same per-GPU features and context)
    m16 = MaskablePPO(PerGpuPolicy, SB3VecEnv(SIXTEEN, num_envs=2),
                      policy_kwargs=checkpoint_policy_kwargs(cpp_checkpoint), device="cpu")
    load_cpp_checkpoint(m16, cpp_checkpoint)


def test_teacher_rollout_in_cpp_matches_the_heuristic_episode():
    vec = gpuplace.make_core_vector_env("default", 4)
    vec.reset(7)
    T = 300
    obs = np.empty((T, 4, vec.observation_size), np.float32)
    masks = np.empty((T, 4, vec.num_actions), np.uint8)
    acts = np.empty((T, 4), np.int64)
    rew = np.empty((T, 4))
    dones = np.empty((T, 4), bool)
    first = vec.observations.copy()
    _core.Teacher("pack", 4).rollout(vec, obs, masks, acts, rew, dones)
    assert np.array_equal(obs[0], first)
    ref = gpuplace.run_episode("default", "pack", seed=gpuplace.episode_seed(7, 2, 0))
    n = min(T, len(ref["actions"]))
    assert np.array_equal(acts[:n, 2], ref["actions"][:n]) and np.array_equal(rew[:n, 2], ref["rewards"][:n])
    assert np.array_equal(obs[:n, 2], ref["observations"][:n]) and np.array_equal(masks[:n, 2], ref["masks"][:n])
    # wrong buffers are refused before anything moves
    before = vec.observations.copy()
    with pytest.raises(ValueError, match=r"masks_out must be .* shape \(300, 4, 65\)"):
        _core.Teacher("pack", 4).rollout(vec, obs, masks[:, :3], acts)
    with pytest.raises(ValueError, match="made for 3 envs"):
        _core.Teacher("pack", 3).act(vec)
    assert np.array_equal(vec.observations, before)
    # a queue policy is an env setting: pack+sjf only acts in an env that runs under sjf
    with pytest.raises(gpuplace.ConfigError, match=r'"pack\+sjf" runs under queue policy sjf .*queue_policy fifo'):
        _core.Teacher("pack+sjf", 4).act(vec)
    sjf = gpuplace.make_core_vector_env(teacher_scenario("default", "pack+sjf"), 4)
    sjf.reset(7)
    a = _core.Teacher("pack+sjf", 4).act(sjf)
    assert sjf.action_masks[np.arange(4), a].all()
    with pytest.raises(gpuplace.ConfigError, match="unknown queue policy"):
        _core.Teacher("pack+lifo", 4)


def test_pretrain_clones_the_teacher_and_refuses_a_queue_the_env_lacks():
    venv = wrap_vec_env(SB3VecEnv("default", num_envs=8))
    model = MaskablePPO(PerGpuPolicy, venv, **per_gpu_ppo_kwargs(num_envs=8), seed=0, device="cpu")
    with pytest.raises(gpuplace.ConfigError, match=r"queue policy sjf, but the model's env runs under backfill"):
        pretrain(model, "pack+sjf", 2048, show_progress=False)
    res = pretrain(model, "pack", 8 * 128 * 6, value_warmup=1, show_progress=False)
    assert res["imitation_steps"] == 6144 and res["warmup_steps"] == 1024 and len(res["history"]) == 6
    assert res["agreement"] > 0.8 and res["history"][-1]["cross_entropy"] < res["history"][0]["cross_entropy"]
    assert venv.ret_rms.count > 6144  # the reward normaliser saw the teacher's returns
    assert all(p.requires_grad for p in model.policy.parameters())
    sjf = SB3VecEnv(teacher_scenario("default", "pack+sjf"), num_envs=8)
    assert queue_policy_of(sjf.scenario) == "sjf"
    m2 = MaskablePPO(PerGpuPolicy, sjf, **per_gpu_ppo_kwargs(num_envs=8), seed=0, device="cpu")
    assert pretrain(m2, "pack+sjf", 1024, value_warmup=0, show_progress=False)["imitation_steps"] == 1024


def test_a_short_run_neither_defers_everything_nor_loses_to_random(tmp_path):
    model, info = train_per_gpu("default", total_timesteps=4096, imitation_steps=8192, value_warmup=1, num_envs=8,
                                seed=1, validation_seeds=2, validate_every=1, log_dir=str(tmp_path), show_progress=False)
    assert info["env_steps"] == 8192 + 4096 and model.gamma == 1.0 and len(info["validation"]) >= 3
    assert (tmp_path / "episodes.csv").exists() and (tmp_path / "validation.csv").exists()
    seeds = gpuplace.held_out_seeds(4)
    rep = gpuplace.evaluate("default", ["random", "pack"], seeds)
    decisions = []
    greedy = maskable_policy(model)

    def counting(obs, masks):
        a = greedy(obs, masks)
        decisions.append(a == masks.shape[1] - 1)
        return a

    evaluate_agent(counting, "default", seeds, name="per_gpu", report=rep)
    defer_share = float(np.concatenate(decisions).mean())
    assert defer_share < 0.2, f"greedy DEFER share {defer_share:.2f}"
    jct, _ = rep.summary("per_gpu", "avg_jct")
    rnd, _ = rep.summary("random", "avg_jct")
    assert jct < rnd, rep.table()


def test_save_and_load_keep_the_policy_and_its_layout(tmp_path):
    venv = SB3VecEnv("default", num_envs=2)
    model = MaskablePPO(PerGpuPolicy, venv, policy_kwargs={"hidden": [32, 32]}, n_steps=64, batch_size=64, device="cpu")
    model.gpuplace_queue = "sjf"
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(loaded.policy, PerGpuPolicy) and loaded.policy.net_config.hidden == (32, 32)
    assert loaded.gpuplace_queue == "sjf"
    obs = venv.reset()
    assert (loaded.policy.greedy_actions(obs, venv.action_masks()) == model.policy.greedy_actions(obs, venv.action_masks())).all()
    with pytest.raises(TypeError, match="unknown argument"):
        MaskablePPO(PerGpuPolicy, venv, policy_kwargs={"net_arch": [64]}, device="cpu")


def test_env_checkers_pass():
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    gym_check(gpuplace.GymnasiumEnv("default"), skip_render_check=True)
    sb3_check(gpuplace.GymnasiumEnv("default"), warn=True)


def test_evaluation_progress_counts_decisions(monkeypatch):
    import gpuplace.evaluation as ev

    bars = []

    class Bar:
        def __init__(self, **kw):
            self.n, self.postfix = 0, ""
            bars.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, s):
            self.postfix = s

        def __enter__(self):
            return self

        def __exit__(self, *a):
            pass

    monkeypatch.setattr(ev, "progress_bar", lambda **kw: Bar(**kw))
    calls = []

    def first_valid(o, m):
        calls.append(len(o))
        return m.argmax(1)

    evaluate_agent(first_valid, SIXTEEN, 3, name="first", show_progress=True)
    assert bars[0].n == sum(calls) > 3 * 40 and bars[0].postfix == "episodes 3/3"


def test_the_newcomer_recipe_runs_as_documented(tmp_path):
    """gpuplace.sb3.NEWCOMER_RECIPE (docs/python.md quotes it; experiments/sb3_recipe.py measures it at
    full budget) with tiny budgets: it trains, keeps weights from validation and acts greedily."""
    import re

    from gpuplace.sb3 import NEWCOMER_RECIPE

    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md"), encoding="utf-8").read()
    section = doc[doc.index("### MaskablePPO in ten minutes"):]
    for k, v in NEWCOMER_RECIPE.items():  # the docs state the recipe's values
        shown = f"{v:_}" if isinstance(v, int) else f'"{v}"' if isinstance(v, str) else repr(v).replace(" ", "")
        assert re.search(rf"\b{k}={re.escape(shown)}", section.replace(" ", "")), (k, shown)
    tiny = dict(NEWCOMER_RECIPE, imitation_steps=4096, total_timesteps=2048, value_warmup=1, num_envs=4,
                validation_seeds=2, validate_every=1)
    model, info = train_per_gpu("default", seed=1, show_progress=False, **tiny)
    assert info["env_steps"] == 4096 + 2048 and info["best_timesteps"] >= 0
    rep = evaluate_agent(maskable_policy(model), "default", 2, name="recipe")
    assert rep.summary("recipe", "avg_jct")[0] > 0
