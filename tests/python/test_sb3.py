"""sb3-contrib MaskablePPO on the batched VecEnv and on a plain env (short runs)."""

import copy

import numpy as np
import pytest

import gpuplace
from conftest import SMALL

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402

from gpuplace.evaluation import evaluate_agent, maskable_policy  # noqa: E402
from gpuplace.sb3 import quiet_logger, train_maskable_ppo  # noqa: E402
from gpuplace.sb3 import SB3VecEnv  # noqa: E402

# SMALL plus Proximity-DRL's per-placement reward: a dense signal for compact placements, so a
# 4k-step run reliably learns to place far better than random (measured: avg JCT 1.3-1.4 h vs
# 1.9 h for random over 10 held-out seeds, for every training seed tried).
LEARN = copy.deepcopy(SMALL)
LEARN["name"] = "small_placement"
LEARN["reward"] = {"jct": 1.0, "placement": 1.0}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_maskable_ppo_on_vecenv_beats_random(tmp_path):
    log = tmp_path / "episodes.csv"
    # gamma 0.99 (the default is 1, for DEFER): LEARN has no DEFER, and its dense per-placement
    # reward is learnt faster with discounting
    model, cb = train_maskable_ppo(
        LEARN, total_timesteps=4096, num_envs=8, n_steps=64, batch_size=128, learning_rate=1e-3, seed=0, gamma=0.99,
        log_csv=str(log), show_progress=False,
    )
    assert model.num_timesteps >= 4096
    assert len(cb.rows) > 10 and log.read_text().startswith("timesteps,episode_return")
    seeds = gpuplace.held_out_seeds(10)
    rep = gpuplace.evaluate(LEARN, ["random", "first_fit"], seeds)
    evaluate_agent(maskable_policy(model), LEARN, seeds, name="maskable_ppo", report=rep)
    ppo, _ = rep.summary("maskable_ppo", "avg_jct")
    rnd, rnd_sem = rep.summary("random", "avg_jct")
    assert ppo < rnd - 2 * rnd_sem, rep.table()
    assert "maskable_ppo" in rep.table()
    # save / load keeps the spaces (plain Gymnasium spaces in the archive)
    path = tmp_path / "m.zip"
    model.save(path)
    venv = SB3VecEnv(LEARN, num_envs=2)
    loaded = MaskablePPO.load(path, env=venv, device="cpu")
    obs = venv.reset()
    a, _ = loaded.predict(obs, action_masks=venv.action_masks(), deterministic=True)
    assert venv.action_masks()[np.arange(2), a].all()


def test_maskable_ppo_on_plain_env_and_evaluate_policy():
    env = Monitor(gpuplace.GymnasiumEnv(SMALL))
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=1, device="cpu")
    model.set_logger(quiet_logger())
    model.learn(1024)
    assert model.num_timesteps >= 1024
    mean, std = evaluate_policy(model, Monitor(gpuplace.GymnasiumEnv(SMALL)), n_eval_episodes=2, warn=False)
    assert np.isfinite(mean) and mean < 0


def test_maskable_evaluate_policy_on_the_vecenv():
    venv = SB3VecEnv(SMALL, num_envs=4)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=2, device="cpu")
    model.set_logger(quiet_logger())
    model.learn(256)
    rewards, lengths = evaluate_policy(model, venv, n_eval_episodes=4, return_episode_rewards=True, warn=False)
    assert len(rewards) == 4 and all(r < 0 for r in rewards) and all(n > 0 for n in lengths)


def test_training_leaves_no_temporary_directories(tmp_path, monkeypatch, capsys):
    # SB3's default logger makes an empty SB3-<date> directory in the temporary directory on every
    # learn() call; train_maskable_ppo() and quiet_logger() log to the standard output or nowhere
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    model, _ = train_maskable_ppo(SMALL, total_timesteps=128, num_envs=2, n_steps=64, batch_size=64, show_progress=False,
                                  verbose=1)
    assert list(tmp.iterdir()) == []
    assert "total_timesteps" in capsys.readouterr().out  # verbose still prints SB3's table
    model.learn(128, reset_num_timesteps=False)
    assert list(tmp.iterdir()) == []
    # SB3's default, for contrast: the directory this guards against
    plain = MaskablePPO("MlpPolicy", SB3VecEnv(SMALL, num_envs=2), n_steps=64, batch_size=64, device="cpu")
    plain.learn(128)
    assert [p.name[:4] for p in tmp.iterdir()] == ["SB3-"]


def test_cli_train_sb3(tmp_path, capsys):
    import json

    from gpuplace.cli import main

    sc = tmp_path / "small.json"
    sc.write_text(json.dumps(SMALL))
    out = tmp_path / "run"
    rc = main(["train-sb3", "--policy", "mlp", "--scenario", str(sc), "--steps", "512", "--num-envs", "4",
               "--n-steps", "64", "--out", str(out), "--seeds", "2", "--policies", "random", "-q"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "maskable_ppo" in text and "random" in text
    assert (out / "maskable_ppo.zip").exists() and (out / "episodes.csv").exists()
    rc = main(["evaluate", "--scenario", str(sc), "--seeds", "2", "--policies", "first_fit",
               "--sb3", str(out / "maskable_ppo.zip"), "-q"])
    assert rc == 0 and "maskable_ppo" in capsys.readouterr().out


def test_cli_train_sb3_per_gpu_with_a_queue_teacher(tmp_path, capsys):
    import json

    from gpuplace.cli import main

    out = tmp_path / "run"
    rc = main(["train-sb3", "--scenario", json.dumps(SMALL), "--teacher", "pack+sjf", "--imitation-steps", "512",
               "--value-warmup", "1", "--steps", "512", "--num-envs", "4", "--n-steps", "64", "--validation-seeds", "2",
               "--out", str(out), "--seeds", "2", "--policies", "pack,pack+sjf", "-q"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "acts under queue policy sjf" in text and "maskable_ppo+sjf" in text and "pack+sjf" in text
    # the final table: the heuristics under the agent's queue policy too, not the scenario's own
    assert "every row acts under queue policy sjf (the agent's)" in text
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("policy "))
    rows = [line.split()[0] for line in lines[head + 1:] if line and not line.startswith(("(", "wrote", "plots"))]
    assert rows == ["pack+sjf", "maskable_ppo+sjf"], rows
    for f in ("maskable_ppo.zip", "ppo.json", "episodes.csv", "validation.csv", "imitation.csv"):
        assert (out / f).exists(), f
    assert gpuplace._core.load_checkpoint(str(out / "ppo.json")).scenario["env"]["queue_policy"] == "sjf"
    # evaluate --model runs the model under the queue policy it was trained for
    rc = main(["evaluate", "--scenario", json.dumps(SMALL), "--seeds", "2", "--policies", "pack",
               "--sb3", str(out / "maskable_ppo.zip"), "-q"])
    assert rc == 0 and "maskable_ppo+sjf" in capsys.readouterr().out
    # ... and with --queue under each queue policy given, as every heuristic (gpuplace-eval --queue),
    # saying where that is not the one it was trained under
    model = str(out / "maskable_ppo.zip")
    rc = main(["evaluate", "--scenario", json.dumps(SMALL), "--seeds", "2", "--policies", "pack",
               "--queue", "fifo,sjf", "--sb3", model])
    cap = capsys.readouterr()
    rows = [line.split()[0] for line in cap.out.splitlines() if line.startswith(("pack", "maskable"))]
    assert rc == 0 and rows == ["pack+fifo", "pack+sjf", "maskable_ppo+fifo", "maskable_ppo+sjf"], cap.out
    assert (f"note: model {model} was trained under queue policy sjf; its row maskable_ppo+fifo runs it under fifo"
            in cap.err) and "maskable_ppo+sjf runs" not in cap.err
    # a queue the model cannot act under (a round policy decides who runs) is refused by name, before any episode
    rc = main(["evaluate", "--scenario", json.dumps(SMALL), "--seeds", "2", "--policies", "pack",
               "--queue", "fifo_perf", "--sb3", model, "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and f"--sb3 {model} under --queue fifo_perf" in err, err


def test_cli_train_sb3_without_validation_says_the_last_weights_are_kept(tmp_path, capsys):
    import json

    from gpuplace.cli import main

    out = tmp_path / "run"
    rc = main(["train-sb3", "--scenario", json.dumps(SMALL), "--imitation-steps", "0", "--value-warmup", "0",
               "--steps", "256", "--num-envs", "4", "--n-steps", "64", "--validation-seeds", "0",
               "--out", str(out), "--seeds", "0", "-q", "--tensorboard", str(tmp_path / "tb")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "no validation (--validation-seeds 0): the last weights are kept" in text and "nan" not in text
    # --tensorboard: SB3's own logger wrote its scalars as event files
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert "time/fps" in events.Tags()["scalars"]
