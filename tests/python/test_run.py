"""Training runs from Python (gpuplace.ppo.run, python -m gpuplace train): the same run folder as
gpuplace-train; Ctrl-C saves every state and raises KeyboardInterrupt; resume=True continues to the
same checkpoint, byte for byte."""

import csv
import json
import signal
import time

import pytest

import gpuplace
from gpuplace import _core
from gpuplace.cli import main

pytestmark = pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")


def _config(small):
    return {
        "scenario": dict(small, workload=dict(small["workload"], num_jobs=40)),
        "restarts": 2,
        "validation_seeds": 2,
        "validate_every": 2,
        "checkpoint_every": 2,
        "ppo": {"total_steps": 1024, "num_envs": 4, "num_steps": 32, "teacher": "pack", "imitation_steps": 512,
                "value_warmup": 1, "seed": 7, "network": {"hidden": [16], "value_hidden": [16]}},
    }


def _rows(path, drop=("seconds", "steps_per_sec")):
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    keep = [i for i, n in enumerate(table[0]) if n not in drop]
    return [[r[i] for i in keep] for r in table]


def test_run_interrupted_by_ctrl_c_resumes_to_the_same_checkpoint(tmp_path, small):
    from gpuplace.ppo import run

    cfg = _config(small)
    ref = run(cfg, out=str(tmp_path / "ref"), show_progress=False)
    assert ref["complete"] and ref["kept"] in (7, 8) and len(ref["restarts"]) == 2

    out = tmp_path / "stopped"
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own Ctrl-C, whatever ran before

    def ctrl_c_at_iteration_5(n):
        if n == 5:
            signal.raise_signal(signal.SIGINT)
            time.sleep(0.5)  # the main thread polls for signals every 100 ms; the run must not end first

    with pytest.raises(KeyboardInterrupt, match="resume"):
        _core.train_run(cfg, str(out), False, 1, None, ctrl_c_at_iteration_5)
    assert (out / "seed_7" / "state.bin").exists() and not (out / "ppo.json").exists()
    res = run(None, out=str(out), resume=True, show_progress=False)  # the run's own config
    assert res["complete"]
    assert (tmp_path / "ref" / "ppo.json").read_bytes() == (out / "ppo.json").read_bytes()
    for log in ("learning.csv", "seed_7/learning.csv", "seed_8/learning.csv"):
        assert _rows(tmp_path / "ref" / log) == _rows(out / log)


def test_resume_refuses_another_config_and_an_empty_folder(tmp_path, small):
    from gpuplace.ppo import run

    cfg = _config(small)
    cfg["restarts"] = 1
    run(cfg, out=str(tmp_path / "a"), show_progress=False)
    other = dict(cfg, ppo=dict(cfg["ppo"], total_steps=2048))
    with pytest.raises(gpuplace.CheckpointError, match="/ppo/total_steps"):
        run(other, out=str(tmp_path / "a"), resume=True, show_progress=False)
    with pytest.raises(gpuplace.CheckpointError, match="holds no run to resume"):
        run(None, out=str(tmp_path / "nothing"), resume=True, show_progress=False)


def test_resume_reads_run_json_as_an_input_file(tmp_path):
    """run.json is read like every input file: a FIFO or a folder in its place is refused by name
    (not waited on or read as empty), and a file that is no run file says so."""
    import os

    def run(config, out, resume, show_progress):  # the binding itself, without gpuplace.ppo.run's own checks
        return _core.train_run(config, out, resume, 1)

    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "run.json")
    with pytest.raises(gpuplace.CheckpointError, match=r"run\.json is a named pipe \(FIFO\), not a regular file"):
        run(None, out=str(fifo), resume=True, show_progress=False)
    folder = tmp_path / "folder"
    (folder / "run.json").mkdir(parents=True)
    with pytest.raises(gpuplace.CheckpointError, match=r"run\.json is a directory, not a file"):
        run(None, out=str(folder), resume=True, show_progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text('{"format": "something else"}')
    with pytest.raises(gpuplace.CheckpointError, match=r"run\.json is not a gpuplace run file"):
        run(None, out=str(other), resume=True, show_progress=False)


def test_cli_train_and_resume(tmp_path, capsys, small):
    cfg = _config(small)
    cfg["restarts"] = 1
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    out = tmp_path / "run"
    assert main(["train", "--config", str(tmp_path / "cfg.json"), "--out", str(out), "--seeds", "2",
                 "--policies", "random", "--no-plot", "-q"]) == 0
    text = capsys.readouterr().out
    assert "ppo" in text and "random" in text and (out / "ppo.json").exists()
    # the comparison is kept in the run folder, as gpuplace-train keeps it, and the run plots
    with open(out / "compare.csv", newline="") as f:
        assert {r["policy"] for r in csv.DictReader(f)} == {"random", "ppo"}
    assert set(json.loads((out / "compare.json").read_text())["policies"]) == {"random", "ppo"}
    assert main(["plot", str(out)]) == 0
    assert (out / "learning_curve.png").stat().st_size > 0 and (out / "jct_comparison.png").stat().st_size > 0
    first = (out / "ppo.json").read_bytes()
    # a finished run resumes to the same checkpoint without training again
    assert main(["train", "--out", str(out), "--resume", "--seeds", "0", "-q"]) == 0
    assert (out / "ppo.json").read_bytes() == first
