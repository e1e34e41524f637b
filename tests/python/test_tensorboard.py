"""``python -m gpuplace tensorboard``: a training log (the C++ PPO's learning.csv, train-sb3's
episodes.csv) as TensorBoard event files, every numeric column a scalar at its env step."""

import pytest

from gpuplace.cli import main

EventAccumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator").EventAccumulator


def _scalars(folder):
    ea = EventAccumulator(str(folder))
    ea.Reload()
    return {tag: [(e.step, e.value) for e in ea.Scalars(tag)] for tag in ea.Tags()["scalars"]}


def test_a_learning_csv_becomes_scalars_at_their_env_steps(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "seed_2").mkdir(parents=True)
    (run / "learning.csv").write_text("iteration,env_steps,mean_jct,val_jct,phase\n1,128,3000,nan,imitation\n"
                                      "2,256,2900.5,2800,ppo\n")
    (run / "seed_2" / "learning.csv").write_text("iteration,env_steps,mean_jct\n1,128,3100\n")
    assert main(["tensorboard", str(run), "--out", str(tmp_path / "tb")]) == 0
    assert f"view: tensorboard --logdir {tmp_path / 'tb'}" in capsys.readouterr().out
    s = _scalars(tmp_path / "tb")
    assert s["mean_jct"] == [(128, 3000.0), (256, 2900.5)]
    assert s["val_jct"] == [(256, 2800.0)]  # nan and text cells are left out
    assert "phase" not in s and "env_steps" not in s
    assert _scalars(tmp_path / "tb" / "seed_2")["mean_jct"] == [(128, 3100.0)]


def test_an_empty_or_unknown_log_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    for name, match in [("empty.csv", "an empty CSV file"), ("other.csv", "not a learning.csv")]:
        assert main(["tensorboard", str(tmp_path / name), "--out", str(tmp_path / "tb")]) == 2
        err = capsys.readouterr().err
        assert name in err and match in err, err
