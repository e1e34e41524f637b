"""Rounds (docs/rounds.md) from Python: the core has the LP solver wherever COIN-OR CLP is installed
(scripts/setup.sh installs it), Gavel's round policies in gpuplace.evaluate(), the command line's
evaluation (--queue, --round, --restore) and the benchmark."""

import os
import subprocess
import sys

import pytest

import gpuplace
from gpuplace import _core, bench

ROUND = ["max_min_fairness_perf", "fifo_perf", "max_min_fairness"]


def test_the_core_has_the_lp_solver_where_clp_is_installed():
    assert "max_min_fairness_perf" in _core.round_policy_names()
    clp = any(os.path.exists(os.path.join(d, "ClpSimplex.hpp")) for d in ("/usr/include/coin", "/usr/include/coin-or"))
    assert _core.have_lp_solver() == clp  # no silent build without it where it could have been built in
    assert _core.have_lp_solver(), "COIN-OR CLP (coinor-libclp-dev) is missing: scripts/setup.sh installs it"


def test_round_policies_evaluate_and_the_aware_ones_are_faster():
    seeds = gpuplace.held_out_seeds(3)
    rep = gpuplace.evaluate("heterogeneous", [f"pack+{q}" for q in ROUND] + ["pack+fifo"], seeds=seeds)
    jct = {p: [m["avg_jct"] for m in rep.per_seed(p)] for p in rep.policies}
    for s in range(3):
        assert jct["pack+max_min_fairness_perf"][s] < jct["pack+max_min_fairness"][s]
        assert jct["pack+fifo_perf"][s] < jct["pack+fifo"][s]
    m = rep.per_seed("pack+max_min_fairness_perf")[0]
    assert m["jobs_done"] == m["jobs_total"] and m["avg_moves"] > 0
    # deterministic by seed
    again = gpuplace.evaluate("heterogeneous", ["pack+max_min_fairness_perf"], seeds=seeds)
    assert again.per_seed("pack+max_min_fairness_perf") == rep.per_seed("pack+max_min_fairness_perf")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "gpuplace", *args], capture_output=True, text=True)


def test_command_line_eval_with_queue_round_and_restore(tmp_path):
    out = tmp_path / "r.json"
    r = _cli("eval", "--scenario", "heterogeneous", "--policies", "pack", "--queue", "max_min_fairness_perf,fifo",
             "--round", "360", "--seeds", "2", "--json", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "pack+max_min_fairness_perf" in r.stdout and "pack+fifo" in r.stdout and "avg_moves" in r.stdout
    # the same numbers as the harness
    rep = gpuplace.evaluate("heterogeneous", ["pack+max_min_fairness_perf"], seeds=gpuplace.held_out_seeds(2))
    import json

    j = json.loads(out.read_text())
    assert [s["avg_jct"] for s in j["policies"]["pack+max_min_fairness_perf"]["per_seed"]] == \
        [m["avg_jct"] for m in rep.per_seed("pack+max_min_fairness_perf")]
    # a longer restore costs more lost GPU time
    cheap = _cli("eval", "--scenario", "heterogeneous", "--policies", "pack", "--queue", "max_min_fairness_perf",
                 "--restore", "0", "--seeds", "1", "--json", str(tmp_path / "a.json"), "-q")
    dear = _cli("eval", "--scenario", "heterogeneous", "--policies", "pack", "--queue", "max_min_fairness_perf",
                "--restore", "300", "--seeds", "1", "--json", str(tmp_path / "b.json"), "-q")
    assert cheap.returncode == 0 and dear.returncode == 0, cheap.stderr + dear.stderr
    lost = [json.loads((tmp_path / f).read_text())["policies"]["pack+max_min_fairness_perf"]["per_seed"][0]["lost_gpu_hours"]
            for f in ("a.json", "b.json")]
    assert lost[0] == 0 and lost[1] > 0
    bad = _cli("eval", "--policies", "pack", "--queue", "max_min_fairness_perfect", "--seeds", "1")
    assert bad.returncode != 0 and "max_min_fairness_perf" in bad.stderr


def test_benchmark_scores_and_validates_a_round_policy():
    r = bench.run("heterogeneous", "pack+fifo_perf")
    assert r.data["policy"]["name"] == "pack+fifo_perf"
    ok, how, msg = bench.validate(r.text)
    assert ok and how == "re-run", msg
    with pytest.raises(gpuplace.ConfigError, match="scores a window of its jobs"):
        bench.run("steady-1.0", "pack+fifo_perf")


def test_elastic_baselines_from_python_the_command_line_and_the_benchmark(tmp_path):
    # the elastic preset (docs/rounds.md, "Elastic jobs"): afs_l and greedy_gain resize jobs, and say so
    assert {"afs_l", "greedy_gain"} <= set(_core.round_policy_names())
    rep = gpuplace.evaluate("elastic", ["pack+afs_l", "pack+greedy_gain"], seeds=gpuplace.held_out_seeds(2))
    for p in rep.policies:
        m = rep.per_seed(p)[0]
        assert m["jobs_done"] == m["jobs_total"] and m["avg_resizes"] > 0 and 0 < m["gpu_time_efficiency"] < 1
    run = gpuplace.run_rounds("elastic", "afs_l", 3)
    assert any(r["resizes"] > 0 for r in run)
    r = _cli("eval", "--scenario", "elastic", "--policies", "pack", "--queue", "afs_l,greedy_gain", "--round", "360",
             "--seeds", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert "pack+afs_l" in r.stdout and "pack+greedy_gain" in r.stdout and "gpu_time_efficiency" in r.stdout
    b = bench.run("heterogeneous", "pack+afs_l")
    assert b.data["policy"]["name"] == "pack+afs_l"
    # greedy_gain needs durations: refused under hidden ones, naming the alternative
    bad = _cli("eval", "--scenario", "elastic", "--policies", "pack", "--queue", "greedy_gain", "--durations", "hidden",
               "--seeds", "1")
    assert bad.returncode != 0 and "greedy_gain needs the jobs' remaining work" in bad.stderr


def test_class_gittins_runs_on_hidden_durations_by_name_and_from_the_command_line():
    # docs/rounds.md, "The Gittins index of a job's class": a round policy that reads no duration
    assert "class_gittins" in _core.round_policy_names()
    rep = gpuplace.evaluate("philly_hidden:e13805", ["pack+class_gittins"], seeds=gpuplace.held_out_seeds(2))
    m = rep.per_seed("pack+class_gittins")[0]
    assert m["jobs_done"] == m["jobs_total"] and m["avg_jct"] > 0
    from gpuplace.config import load_scenario

    shown = load_scenario("philly_hidden:e13805", {"durations": {"mode": "oracle"}})
    oracle = gpuplace.evaluate(shown, ["pack+class_gittins"], seeds=gpuplace.held_out_seeds(2))
    assert oracle.per_seed("pack+class_gittins") == rep.per_seed("pack+class_gittins")  # shown durations change nothing
    r = _cli("eval", "--scenario", "philly_hidden:e13805", "--policies", "pack", "--queue", "class_gittins", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    assert "pack+class_gittins" in r.stdout
