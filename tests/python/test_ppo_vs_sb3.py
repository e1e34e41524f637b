"""benchmarks/python/ppo_vs_sb3.py, the measurement behind the "20x MaskablePPO" target, runs end
to end on tiny settings: interleaved rounds, and concurrent rounds in which the two trainers swap
cores every round. Its numbers are benchmarks, not checked here; only that it runs and reports."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("sb3_contrib")  # (it imports torch, the pinned CPU build that scripts/setup.sh installs)

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "python" / "ppo_vs_sb3.py"
_TINY = ["--num-envs", "2", "--n-steps", "16", "--batch", "16", "--epochs", "1"]


def _run(*extra):
    r = subprocess.run([sys.executable, str(_SCRIPT), *_TINY, *extra], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _ratio_line(out):
    m = re.search(r"^ratio: ([0-9.]+)x wall, ([0-9.]+)x CPU", out, re.M)
    assert m, out
    assert float(m.group(1)) > 0 and float(m.group(2)) > 0


def test_interleaved_rounds_report_a_ratio():
    out = _run("--iterations", "1", "--rounds", "2")
    assert len(re.findall(r"^round \d+: C\+\+ PPO", out, re.M)) == 2
    _ratio_line(out)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="--concurrent needs 2 cores")
def test_concurrent_rounds_swap_cores_and_report_a_ratio():
    out = _run("--concurrent", "--rounds", "2", "--seconds", "0.3")
    assert "swapping cores every round" in out
    assert len(re.findall(r"^round \d+: C\+\+ PPO", out, re.M)) == 2
    _ratio_line(out)
