"""The registry from Python: `python -m gpuplace info --list` prints everything that can be named,
by kind, from the C++ catalogue (gpuplace/registry.hpp) that `gpuplace-eval --list` prints too."""

import subprocess
import sys

from gpuplace import _core


def test_the_registry_lists_every_kind():
    entries = _core.registry()
    kinds = {k for k, _, _ in entries}
    for kind in ("placer", "queue", "planner", "topology", "scenario", "workload", "trace_format", "model_mix", "comm_model",
                 "reward_term", "observation_feature", "job_field"):
        assert kind in kinds, kind
    assert ("placer", "pack_wait") in {(k, n) for k, n, _ in entries}
    assert all(about for _, _, about in entries)


def test_info_list_prints_them_by_kind():
    r = subprocess.run([sys.executable, "-m", "gpuplace", "info", "--list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("topology nvl72: ") for line in lines)
    assert any(line.startswith("placer topology_greedy: ") for line in lines)
    assert any(line.startswith("trace_format csv: ") for line in lines)
