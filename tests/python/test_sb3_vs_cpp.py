"""benchmarks/python/sb3_vs_cpp.py (the measurement behind docs/python.md's "Stable-Baselines3 with
the per-GPU policy") and examples/python/train_per_gpu.py run end to end on tiny budgets. Their
numbers are measurements, not checked here; only that they run and report."""

import pathlib
import subprocess
import sys

import pytest

import gpuplace
from gpuplace import _core

pytest.importorskip("sb3_contrib")

_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_sb3_vs_cpp_runs_and_writes_its_tables(tmp_path):
    # a C++ reference run directory as gpuplace-train writes it (here from the bindings, tiny)
    cpp = tmp_path / "cpp"
    cpp.mkdir()
    trainer = _core.PPO("default", {"total_steps": 2048, "num_envs": 8, "teacher": "pack", "imitation_steps": 1024,
                                    "network": {"node_features": True}})
    while not trainer.done:
        trainer.iterate()
    trainer.save(str(cpp / "ppo.json"))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(_ROOT / "benchmarks" / "python" / "sb3_vs_cpp.py"), "--quick",
                        "--cpp-dir", str(cpp), "--out", str(out), "--parallel", "2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    table = (out / "table.md").read_text()
    for row in ("| sb3_ppo |", "| cpp_ppo |", "| pack+sjf |", "| topology_greedy+fewest_gpus |", "MaskablePPO + PerGpuPolicy"):
        assert row in table, row
    assert (out / "sb3" / "seed_1" / "ppo.json").exists() and (out / "results.json").exists()
    assert gpuplace._core.load_checkpoint(str(out / "sb3" / "seed_2" / "ppo.json")) is not None


def test_the_per_gpu_example_runs(tmp_path):
    r = subprocess.run([sys.executable, str(_ROOT / "examples" / "python" / "train_per_gpu.py"), "--quick",
                        "--teacher", "pack+sjf", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "per_gpu_ppo" in r.stdout and "pack+sjf" in r.stdout and (tmp_path / "ppo.json").exists()
