"""Rollout planners by name from Python (docs/planning.md): the harness, run_episode and Heuristic
take "rollout<F>:<heuristic>" and "hindsight:<heuristic>" (not causal), as gpuplace-eval does."""

import numpy as np
import pytest

import gpuplace
from gpuplace import _core

SMALL = {"workload": {"num_jobs": 10}}


def test_planners_run_in_the_harness_and_in_run_episode():
    sc = gpuplace.Scenario("default", SMALL, "placement")
    rep = gpuplace.evaluate(sc, ["pack_wait+sjf", "rollout2:pack_wait+sjf", "hindsight:pack_wait+sjf"], seeds=2)
    assert rep.policies == ["pack_wait+sjf", "rollout2:pack_wait+sjf", "hindsight:pack_wait+sjf"]
    assert all(m["jobs_done"] == 10 for p in rep.policies for m in rep.per_seed(p))
    a = _core.run_episode(sc, "rollout2:pack_wait", 1_000_000, record=False)
    b = _core.run_episode(sc, "rollout2:pack_wait", 1_000_000, record=False)
    assert np.array_equal(a["actions"], b["actions"]) and a["metrics"] == b["metrics"]  # deterministic by seed


def test_a_planner_acts_on_a_python_env_and_refuses_the_gpu_mode():
    env = _core.Env(gpuplace.Scenario("default", SMALL, "placement"))
    env.reset(3)
    h = _core.Heuristic("hindsight:pack")
    assert env.action_mask[h.act(env)]
    gpu = _core.Env(gpuplace.Scenario("default", SMALL))
    gpu.reset(3)
    with pytest.raises(_core.ConfigError, match="placement or job action mode"):
        _core.Heuristic("rollout:pack").act(gpu)
    with pytest.raises(_core.ConfigError, match=r"rollout<F>h<H> takes a number of futures F"):
        _core.Heuristic("rollout0:pack")


def test_a_planner_over_several_bases_runs_by_name_and_refuses_a_malformed_list():
    sc = gpuplace.Scenario("default", SMALL, "placement")
    rep = gpuplace.evaluate(sc, ["rollout2:pack_wait/topology_greedy+sjf"], seeds=2)
    assert all(m["jobs_done"] == 10 for m in rep.per_seed("rollout2:pack_wait/topology_greedy+sjf"))
    a = _core.run_episode(sc, "rollout2:pack/first_fit", 1_000_000, record=False)
    b = _core.run_episode(sc, "rollout2:pack/first_fit", 1_000_000, record=False)
    assert np.array_equal(a["actions"], b["actions"])  # deterministic by seed
    with pytest.raises(_core.ConfigError, match=r'the base pack is named twice'):
        _core.Heuristic("rollout2:pack/pack")
    with pytest.raises(_core.ConfigError, match=r'base 2 of "pack/" is empty'):
        _core.Heuristic("rollout2:pack/")


def test_fork_keeps_the_present_and_copy_the_future():
    import copy

    env = _core.Env(gpuplace.Scenario("default", {"workload": {"num_jobs": 30}}))
    env.reset(5)
    for _ in range(8):
        env.step(int(np.flatnonzero(env.action_mask)[0]))
    same, other = env.fork(1), env.fork(2)
    for e in (same, other, env.copy(), copy.deepcopy(env)):
        assert np.array_equal(e.observation, env.observation) and np.array_equal(e.action_mask, env.action_mask)

    def finish(e):
        while True:
            _, term, trunc = e.step(int(np.flatnonzero(e.action_mask)[0]))
            if term or trunc:
                return e.metrics()

    truth = finish(env.copy())
    assert finish(env.copy()) == truth  # a copy plays the true future again
    assert finish(env.fork(1)) == finish(same)  # a fork is its seed's future
    assert finish(other) != truth  # another draw of the arrivals to come
    with pytest.raises(_core.StateError, match="before reset"):
        _core.Env(gpuplace.Scenario("default", SMALL)).fork(1)
