"""The command line's files: `evaluate --model` names a missing or unreadable model before any
heuristic runs, and every report and model it writes is written atomically (a temporary file in
the same folder renamed over the target: the old file or the new one, never a part)."""

import json
import os

import pytest

import gpuplace
from gpuplace import _core
from gpuplace._files import atomic_open, atomic_target, atomic_write
from gpuplace.cli import main
from gpuplace.sb3 import load_maskable_ppo


@pytest.fixture
def no_heuristics(monkeypatch):
    """Makes any heuristic run fail the test: the model errors must come first."""

    def fail(*args, **kwargs):
        raise AssertionError("a heuristic ran before the model was checked")

    monkeypatch.setattr(_core, "evaluate", fail)


def _maskable_model(tmp_path, small):
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import SB3VecEnv

    model = MaskablePPO("MlpPolicy", SB3VecEnv(small, num_envs=2), n_steps=16, batch_size=16, device="cpu")
    path = tmp_path / "model.zip"
    model.save(path)
    return path


def test_a_missing_model_is_named_before_any_heuristic_runs(tmp_path, capsys, no_heuristics):
    missing = tmp_path / "nope.zip"
    assert main(["evaluate", "--sb3", str(missing), "--seeds", "2", "-q"]) == 2
    err = capsys.readouterr().err
    assert f"model {missing} does not exist" in err
    assert "nope.zip.zip" not in err
    assert main(["evaluate", "--sb3", str(tmp_path), "--seeds", "2", "-q"]) == 2
    assert f"model {tmp_path} is a folder, not a model file" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["truncated", "not_a_zip", "empty"])
def test_a_damaged_model_is_a_clear_error_naming_the_file(tmp_path, capsys, small, damage, monkeypatch):
    path = _maskable_model(tmp_path, small)
    data = path.read_bytes()
    bad = tmp_path / f"{damage}.zip"
    bad.write_bytes({"truncated": data[: len(data) // 2], "not_a_zip": b"hello, world" * 10, "empty": b""}[damage])
    with pytest.raises(gpuplace.CheckpointError, match=f"model {bad}: cannot be loaded as a MaskablePPO model"):
        load_maskable_ppo(bad)
    calls = []
    monkeypatch.setattr(_core, "evaluate", lambda *a, **k: calls.append(a))
    assert main(["evaluate", "--sb3", str(bad), "--seeds", "2", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: model {bad}: cannot be loaded") and "Traceback" not in err
    assert calls == []


def test_a_model_path_without_zip_is_found_as_sb3_names_it(tmp_path, small):
    from gpuplace.sb3 import load_maskable_ppo, model_file

    path = _maskable_model(tmp_path, small)
    stem = str(path)[: -len(".zip")]
    assert model_file(stem) == str(path)
    assert load_maskable_ppo(stem).observation_space.shape[0] > 0


def test_evaluate_writes_its_reports_atomically(tmp_path, small, capsys):
    sc = tmp_path / "small.json"
    sc.write_text(json.dumps(small))
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    out_csv.write_text("old\n")
    out_json.write_text("old\n")
    before = out_csv.stat().st_ino, out_json.stat().st_ino
    assert main(["evaluate", "--scenario", str(sc), "--seeds", "2", "--policies", "pack", "--csv", str(out_csv),
                 "--json", str(out_json), "-q"]) == 0
    # replaced by a rename (a new file), not rewritten in place
    assert (out_csv.stat().st_ino, out_json.stat().st_ino) != before
    assert out_csv.read_text().startswith("policy,seed,avg_jct")
    assert json.loads(out_json.read_text())["policies"]
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r.json", "small.json"]


def test_atomic_writes_keep_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "report.csv"
    atomic_write(target, "old\n")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_open(target, "w") as f:
            f.write("half of the new")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    with pytest.raises(RuntimeError):
        with atomic_target(target) as tmp:
            with open(tmp, "w") as f:
                f.write("x")
            raise RuntimeError("savefig failed")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["report.csv"]  # no temporary left behind
    atomic_write(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
