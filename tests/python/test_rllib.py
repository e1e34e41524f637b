"""gpuplace on Ray (gpuplace.rllib): the batched entry point against single envs, the RLModule's
masking and values, one PPO iteration through the command line, a 2-trial Tune sweep, and the
message a user without the extra gets."""

import csv
import json
import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpuplace
from gpuplace import _core

from conftest import SMALL, SMALL_RING

torch = pytest.importorskip("torch")
ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModule  # noqa: E402

from gpuplace.rllib import (  # noqa: E402
    RLlibEnv,
    RLlibVectorEnv,
    PerGpuRLModule,
    make_env,
    module_config,
    parse_grid,
)
from gpuplace.rllib.cli import main as rllib_main  # noqa: E402
from gpuplace.torch_net import load_checkpoint  # noqa: E402

# PPO settings small enough for one iteration in a few seconds on one shared core
TINY = ["--set", "train_batch_size=128", "--set", "minibatch_size=64", "--set", "n_epochs=1", "--num-envs-per-runner", "2"]


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


# ---- the env RLlib steps -----------------------------------------------------------------------


@pytest.mark.parametrize("scenario", [SMALL, SMALL_RING], ids=["tree_route", "ring_defer"])
def test_batched_entry_point_gives_the_single_envs_trajectories(scenario):
    """Env i of the batch plays episode k with seed episode_seed(seed, i, k) exactly as a single
    GymnasiumEnv reset with that seed; after an episode ends, the next step starts the next one
    (NEXT_STEP autoreset: that env's action is ignored, reward 0)."""
    n, seed = 3, 11
    vec = make_env({"scenario": scenario, "num_envs": n})
    assert isinstance(vec, RLlibVectorEnv) and vec.metadata["autoreset_mode"].value == "NextStep"
    singles = [gpuplace.GymnasiumEnv(scenario) for _ in range(n)]
    episode = [0] * n
    obs, _ = vec.reset(seed=seed)
    for i, e in enumerate(singles):
        o, _ = e.reset(seed=gpuplace.episode_seed(seed, i, 0))
        np.testing.assert_array_equal(obs["observations"][i], o)
        np.testing.assert_array_equal(obs["action_mask"][i], e.action_masks().astype(np.float32))
    rng = np.random.default_rng(0)
    pending = np.zeros(n, dtype=bool)
    ended = 0
    for _ in range(2000):
        acts = np.array([rng.choice(np.flatnonzero(obs["action_mask"][i])) if not pending[i] else 10**6
                         for i in range(n)], dtype=np.int64)  # an ignored env's action may be anything
        obs, rew, term, trunc, _ = vec.step(acts)
        for i, e in enumerate(singles):
            if pending[i]:
                episode[i] += 1
                o, _ = e.reset(seed=gpuplace.episode_seed(seed, i, episode[i]))
                r, te, tr = 0.0, False, False
            else:
                o, r, te, tr, _ = e.step(int(acts[i]))
            np.testing.assert_array_equal(obs["observations"][i], o)
            np.testing.assert_array_equal(obs["action_mask"][i], e.action_masks().astype(np.float32))
            assert (rew[i], term[i], trunc[i]) == (r, te, tr)
        pending = term | trunc
        ended += int(pending.sum())
        if min(episode) >= 1 and ended >= n + 1:
            break
    assert min(episode) >= 1, "every env should have finished an episode"
    # the same episodes as the C++ VectorEnv (SAME_STEP) plays: its final infos carry the seeds
    assert vec.seed_of(0) == gpuplace.episode_seed(seed, 0, episode[0])


def test_batched_entry_point_checks_every_action_before_any_env_moves():
    vec = RLlibVectorEnv(SMALL, 2)
    obs, _ = vec.reset(seed=3)
    bad = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    good = int(np.flatnonzero(obs["action_mask"][0])[0])
    with pytest.raises(gpuplace.InvalidAction, match=f"env 1: invalid action {bad}"):
        vec.step(np.array([good, bad]))
    with pytest.raises(gpuplace.InvalidAction, match="env 0: invalid action 99"):
        vec.step(np.array([99, good]))
    after, _, _, _, _ = vec.step(np.array([good, int(np.flatnonzero(obs["action_mask"][1])[0])]))
    ref = RLlibEnv(SMALL)
    ref.reset(seed=gpuplace.episode_seed(3, 0, 0))
    o, *_ = ref.step(good)
    np.testing.assert_array_equal(after["observations"][0], o["observations"])  # the failed calls moved nothing
    with pytest.raises(gpuplace.ConfigError, match="unknown key"):
        make_env({"scenario": "default", "senario": "x"})


def test_the_batched_entry_point_steps_in_cpp():
    """One C++ vector env in NEXT_STEP mode steps every env in one call: no Python loop over envs."""
    vec = make_env({"scenario": SMALL, "num_envs": 4})
    assert type(vec.core) is _core.VectorEnv and vec.core.autoreset == "next_step"
    assert vec.core.num_envs == 4 and not hasattr(vec, "envs")
    ring = RLlibVectorEnv(SMALL_RING, 3, num_threads=3)
    assert type(ring.core) is _core.VectorEnv and ring.core.num_threads == 3


def test_env_checkers_pass_for_the_rllib_env():
    from gymnasium.utils.env_checker import check_env

    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    for scenario in (SMALL, SMALL_RING):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(RLlibEnv(scenario), skip_render_check=True)  # it renders nothing
            sb3_checker.check_env(RLlibEnv(scenario), warn=True)


# ---- the RLModule --------------------------------------------------------------------------------


def _batch(scenario, n=24, seed=5):
    vec = RLlibVectorEnv(scenario, n)
    obs, _ = vec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(rng.integers(5, 15)):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, _, term, trunc, _ = vec.step(acts)
        assert not (term | trunc).any()
    return vec, {k: torch.as_tensor(v) for k, v in obs.items()}


@pytest.mark.parametrize("scenario", [SMALL, SMALL_RING], ids=["tree_route", "ring_defer"])
def test_masked_logits_never_win(scenario):
    vec, obs = _batch(scenario)
    module = PerGpuRLModule(observation_space=vec.single_observation_space, action_space=vec.single_action_space,
                            inference_only=False, model_config=module_config(vec.single_observation_space))
    with torch.no_grad():  # make the network prefer the GPUs it is about to be told are invalid
        raw = module.net.logits(obs["observations"])
    top = raw.argmax(-1)
    mask = obs["action_mask"].clone()
    mask[torch.arange(len(top)), top] = 0.0
    mask[mask.sum(-1) == 0, -1] = 1.0  # keep at least one valid action per row
    batch = {Columns.OBS: {"observations": obs["observations"], "action_mask": mask}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    assert torch.isfinite(logits).all()
    dist = TorchCategorical.from_logits(logits)
    samples = torch.stack([dist.sample() for _ in range(400)])  # (400, B)
    assert mask.gather(1, samples.t()).min().item() == 1.0, "a masked action was sampled"
    assert (dist.logp(top) == float("-inf")).all() or (dist.logp(top) < -80).all()
    greedy = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].argmax(-1)
    assert mask.gather(1, greedy[:, None]).min().item() == 1.0
    assert not (greedy == top).any()
    # greedy_actions (the evaluation path) is the same argmax
    np.testing.assert_array_equal(module.greedy_actions(obs["observations"].numpy(), mask.numpy() > 0), greedy.numpy())
    # values: PerGpuNet's value head on the observation, whatever the mask
    v = module.compute_values(batch)
    torch.testing.assert_close(v, module.net.values(obs["observations"]))
    assert v.shape == (len(top),)
    # the last observation of an episode has no valid action: still a finite distribution
    empty = {Columns.OBS: {"observations": obs["observations"][:2], "action_mask": torch.zeros_like(mask[:2])}}
    assert torch.isfinite(TorchCategorical.from_logits(module.forward_exploration(empty)[Columns.ACTION_DIST_INPUTS]).logp(
        torch.zeros(2, dtype=torch.long))).all()


def test_module_config_reads_the_layout_and_refuses_another_cluster():
    env = RLlibEnv(SMALL_RING)
    mc = module_config(env.observation_space, {"hidden": [32], "value_hidden": [16]})
    assert mc["obs_spec"]["num_gpus"] == 16 and mc["network"]["hidden"] == [32]
    other = RLlibEnv({**SMALL_RING, "env": {"allow_defer": True, "queue_window": 2}})
    assert other.observation_space["observations"].shape != env.observation_space["observations"].shape
    with pytest.raises(gpuplace.ConfigError, match="context values"):
        PerGpuRLModule(observation_space=other.observation_space, action_space=other.action_space,
                       inference_only=False, model_config=mc)


# ---- training and sweeps ---------------------------------------------------------------------------


def test_one_training_iteration_through_the_cli(ray_local, tmp_path, capsys):
    """One PPO iteration with num_env_runners=0: the env raises InvalidAction on an invalid action,
    so the iteration finishing means none reached it; then the checkpoints and the harness table."""
    out = tmp_path / "run"
    rc = rllib_main(["train", "--scenario", json.dumps(SMALL), "--iterations", "1", "--num-env-runners", "0",
                     "--out", str(out), "--seeds", "2", "--policies", "random,pack", *TINY])
    text = capsys.readouterr().out
    assert rc == 0, text
    rows = list(csv.DictReader(open(out / "progress.csv")))
    assert len(rows) == 1 and int(rows[0]["env_steps"]) >= 128
    assert os.path.isdir(out / "checkpoint") and os.listdir(out / "checkpoint")
    net, meta = load_checkpoint(out / "ppo.json")  # the trained network as a C++ checkpoint
    assert meta["scenario"]["name"] == "small"
    # the RLlib checkpoint's module and the C++ checkpoint hold the same trained network
    module = RLModule.from_checkpoint(out / "checkpoint" / "learner_group" / "learner" / "rl_module" / "default_policy")
    _, obs = _batch(SMALL, n=4)
    with torch.no_grad():
        torch.testing.assert_close(module.net.logits(obs["observations"]), net.logits(obs["observations"]).float())
        torch.testing.assert_close(module.net.values(obs["observations"]), net.values(obs["observations"]).float())
    for name in ("rllib_ppo", "random", "pack"):
        assert name in text
    assert "held-out seeds" in text


def test_two_trial_tune_sweep_writes_its_table(ray_local, tmp_path, capsys):
    handler = signal.getsignal(signal.SIGINT)
    out = tmp_path / "tune"
    rc = rllib_main(["tune", "--scenario", json.dumps(SMALL), "--grid", "lr=0.0003,0.001", "--seeds", "1",
                     "--iterations", "1", "--validation-seeds", "2", "--out", str(out), *TINY])
    text = capsys.readouterr().out
    assert rc == 0, text
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert sorted(float(r["lr"]) for r in rows) == [0.0003, 0.001]
    jct = [float(r["val_jct_h"]) for r in rows]
    assert all(np.isfinite(jct)) and jct == sorted(jct)
    assert "best trial: " + rows[0]["trial"] in text
    assert signal.getsignal(signal.SIGINT) is handler  # Ctrl-C is the process's again after the sweep


def test_the_scale_out_example_prints_its_table():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, os.path.join(root, "examples", "python", "rllib_scale_out.py"), "--scenario",
                        json.dumps(SMALL), "--runners", "0", "--envs-per-runner", "2", "--batch", "128", "--iterations", "1",
                        "--num-cpus", "1"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    row = [line for line in p.stdout.splitlines() if line.startswith("| 0 | 2 |")]
    assert len(row) == 1 and all(float(x.replace(",", "")) > 0 for x in row[0].strip("| ").split(" | ")[2:])


# ---- the command line without Ray, bad input ----------------------------------------------------------


def test_without_the_extra_the_message_names_the_install_command():
    code = ("import sys; sys.modules['ray'] = None\n"
            "from gpuplace.cli import main\n"
            "sys.exit(main(['rllib', 'train']))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert "pip install" in p.stderr and "[rllib]" in p.stderr


def test_grid_and_hyperparameter_errors(capsys):
    assert parse_grid(["lr=0.0003,0.001", "ent_coef=0,0.01"]) == {"lr": [0.0003, 0.001], "ent_coef": [0.0, 0.01]}
    for bad, msg in ((["learning_rate=1"], 'unknown hyperparameter "learning_rate"'), (["lr"], "expected NAME=V1"),
                     (["lr=0.1,x"], '"x" is not a number'), (["lr=1", "lr=2"], "lr given twice")):
        with pytest.raises(gpuplace.ConfigError, match=msg):
            parse_grid(bad)
    assert rllib_main(["tune", "--grid", "lr=fast", "--out", "unused"]) == 2
    assert '"fast" is not a number' in capsys.readouterr().err
    # python -m gpuplace rllib ...: every argument goes to gpuplace.rllib.main, --help included
    from gpuplace.cli import main as gpuplace_main

    with pytest.raises(SystemExit) as e:
        gpuplace_main(["rllib", "--help"])
    assert e.value.code == 0 and "{train,tune}" in capsys.readouterr().out
    assert gpuplace_main(["rllib", "train", "--set", "lr"]) == 2
    assert "expected NAME=V1" in capsys.readouterr().err
