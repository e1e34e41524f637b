"""The C++ PPO from Python (when the extension was built with include/gpuplace/rl/)."""

import json

import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace.cli import main

pytestmark = pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")

TINY = {"total_steps": 1024, "num_envs": 4, "num_steps": 64, "seed": 3}


def test_train_save_load_evaluate(tmp_path, small):
    from gpuplace.ppo import train

    ckpt, log = tmp_path / "ppo.json", tmp_path / "it.csv"
    trainer, stats = train(small, TINY, checkpoint=str(ckpt), log_csv=str(log), show_progress=False)
    assert trainer.done and trainer.env_steps >= 1024 and len(stats) == trainer.total_iterations
    assert {"mean_return", "policy_loss", "entropy", "approx_kl"} <= set(stats[-1])
    assert log.read_text().startswith("timesteps,episode_return")
    net = _core.load_checkpoint(str(ckpt))
    assert net.scenario["name"] == "small" and net.ppo_config["num_envs"] == 4
    e = gpuplace.make_core_env(small)
    e.reset(1)
    assert e.action_mask[net.act(e)] == 1
    logits = net.logits(e)  # the greedy action is their argmax; masked actions are -inf
    assert logits.shape == (e.num_actions,) and logits.dtype == np.float32
    assert int(np.argmax(logits)) == net.act(e)
    assert np.isneginf(logits[e.action_mask == 0]).all() and np.isfinite(logits[e.action_mask == 1]).all()
    rep = _core.evaluate_network(small, net, 2, "ppo")
    assert rep.policies == ["ppo"] and rep.per_seed("ppo")[0]["jobs_done"] == 20


def test_expert_iteration_reports_its_demonstrations(small):
    # each expert iteration adds one rollout's states; with a weight on moved labels, those are counted
    sc = dict(small, env={"action_mode": "placement", "allow_defer": True, "queue_window": 4})
    cfg = dict(TINY, total_steps=0, dagger_teacher="hindsight:pack_wait", dagger_iterations=2, dagger_moved_weight=4)
    p = _core.PPO(sc, cfg)
    stats = [p.iterate() for _ in range(p.total_iterations)]
    assert [s["dagger"] for s in stats] == [True, True]
    assert [s["demonstrations"] for s in stats] == [256, 512]
    assert 0 < stats[0]["moved_demonstrations"] <= stats[1]["moved_demonstrations"] < 512
    with pytest.raises(gpuplace.ConfigError, match="dagger_moved_weight: 4.0 weighs the labels a rollout planner"):
        _core.PPO(sc, dict(cfg, dagger_teacher="pack_wait"))
    # several draws of futures a state: still one demonstration a state, some states split between draws
    drawn = _core.PPO(sc, dict(TINY, total_steps=0, dagger_teacher="rollout2m0:pack_wait", dagger_iterations=1, dagger_draws=3))
    s = drawn.iterate()
    assert s["demonstrations"] == 256 and 0 < s["split_demonstrations"] < 256 and s["moved_demonstrations"] == 0
    with pytest.raises(gpuplace.ConfigError, match="/ppo/dagger_draws: 3 draws of futures need a rollout planner"):
        _core.PPO(sc, dict(cfg, dagger_moved_weight=1, dagger_draws=3, dagger_teacher="pack_wait"))


def test_training_is_deterministic(small):
    from gpuplace.ppo import train

    _, a = train(small, TINY, show_progress=False)
    _, b = train(small, dict(TINY, threads=2), show_progress=False)
    keys = ("mean_return", "policy_loss", "value_loss", "entropy")
    assert [tuple(s[k] for k in keys) for s in a] == [tuple(s[k] for k in keys) for s in b]


def test_bad_config_and_checkpoint(tmp_path, small):
    with pytest.raises(gpuplace.ConfigError, match="/ppo/bogus"):
        _core.PPO(small, {"bogus": 1})
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gpuplace-ppo"')
    with pytest.raises(gpuplace.CheckpointError, match="bad.json"):
        _core.load_checkpoint(str(bad))
    with pytest.raises(gpuplace.CheckpointError, match="cannot open"):
        _core.load_checkpoint(str(tmp_path / "missing.json"))


def test_cli_train(tmp_path, capsys, small):
    sc = tmp_path / "small.json"
    sc.write_text(json.dumps(small))
    rc = main(["train", "--scenario", str(sc), "--steps", "512", "--num-envs", "4", "--out", str(tmp_path / "run"),
               "--seeds", "2", "--policies", "random", "-q"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "ppo" in out and "random" in out and (tmp_path / "run" / "ppo.json").exists()


def test_keep_freed_memory():
    # glibc (this project's Linux builds): the settings are taken; allocation still works after
    import platform

    kept = _core.keep_freed_memory()
    assert isinstance(kept, bool)
    if platform.libc_ver()[0] == "glibc":
        assert kept
    assert _core.keep_freed_memory(64 << 20) == kept
    with pytest.raises(TypeError):
        _core.keep_freed_memory("a lot")


def test_pin_cache_sizes(small):
    # process-wide and idempotent: trainers made before and after pinning again train alike
    assert _core.pin_cache_sizes() is None
    a = _core.PPO(small, TINY)
    _core.pin_cache_sizes()
    b = _core.PPO(small, TINY)
    keys = ("mean_return", "policy_loss", "value_loss", "entropy")
    for _ in range(2):
        sa, sb = a.iterate(), b.iterate()
        assert tuple(sa[k] for k in keys) == tuple(sb[k] for k in keys)
