"""gpuplace._core: zero-copy views, state queries, comm cost, exceptions."""

import gc
import json
import threading

import numpy as np
import pytest

import gpuplace
from gpuplace import _core


def test_exception_hierarchy():
    assert issubclass(gpuplace.InvalidAction, ValueError)
    assert issubclass(gpuplace.InvalidAction, gpuplace.Error)
    assert issubclass(gpuplace.ConfigError, ValueError)
    assert issubclass(gpuplace.Error, RuntimeError)
    assert issubclass(gpuplace.StateError, RuntimeError)


def test_one_env_class_serves_every_comm_model(small, small_ring):
    tree, ring = gpuplace.make_core_env(small), gpuplace.make_core_env(small_ring)
    assert type(tree) is _core.Env and type(ring) is _core.Env
    assert tree.comm_model == "tree_route" and ring.comm_model == "ring_allreduce"
    assert _core.Env(json.dumps(small)).comm_model == "tree_route"
    assert gpuplace.make_core_vector_env(small, 2).comm_model == "tree_route"
    with pytest.raises(gpuplace.ConfigError, match="/comm/model"):
        gpuplace.make_core_env({"comm": {"model": "nope"}})
    # the old names: the same classes, with a warning naming the new ones
    with pytest.warns(DeprecationWarning, match="gpuplace.Env"):
        assert gpuplace.TreeRouteEnv is _core.Env
    with pytest.warns(DeprecationWarning, match="gpuplace.VectorEnv"):
        assert gpuplace.TreeRouteVectorEnv is _core.VectorEnv


def test_views_are_zero_copy_read_only_and_keep_the_env_alive(small):
    e = gpuplace.make_core_env(small)
    e.reset(3)
    obs, mask = e.observation, e.action_mask
    assert obs.dtype == np.float32 and mask.dtype == np.uint8
    assert obs.shape == (e.observation_size,) and mask.shape == (e.num_actions,)
    assert not obs.flags.writeable and not obs.flags.owndata
    assert obs.base is e and mask.base is e
    # the same memory every time, updated in place by step()
    assert np.shares_memory(obs, e.observation)
    before = obs.copy()
    e.step(int(np.flatnonzero(mask)[0]))
    assert not np.array_equal(before, obs)
    with pytest.raises(ValueError):
        obs[0] = 1.0
    # the view keeps the env alive
    snapshot = obs.copy()
    del e
    gc.collect()
    np.testing.assert_array_equal(obs, snapshot)


def test_observation_layout_covers_the_vector(small):
    e = gpuplace.make_core_env(small)
    lay = e.observation_layout
    names = [s["name"] for s in lay]
    assert names[:6] == ["gpu_busy", "gpu_picked", "gpu_remaining", "gpu_proximity", "gpu_node_free", "gpu_rack_free"]
    off = 0
    for s in lay:
        assert s["offset"] == off
        off += s["size"]
    assert off == e.observation_size
    job = next(s for s in lay if s["name"] == "job")
    assert "request" in job["fields"]


def test_state_queries_follow_the_episode(small):
    e = gpuplace.make_core_env(small)
    e.reset(7)
    job = e.current_job()
    assert job["num_gpus"] in (2, 4) and job["model_name"] in e.models()
    st = e.cluster_state()
    assert st["free_gpus"] == 16 and (st["holders"] == -1).all()
    first = int(np.flatnonzero(e.action_mask)[0])
    e.step(first)
    assert e.picked() == [first]
    assert e.observation[16 + first] == 1.0  # gpu_picked segment
    while e.picked():
        e.step(int(np.flatnonzero(e.action_mask)[0]))
    holders = e.gpu_holders()
    assert (holders == job["id"]).sum() == job["num_gpus"]
    assert np.isfinite(e.gpu_end_times()[holders >= 0]).all()
    assert np.isnan(e.gpu_end_times()[holders < 0]).all()
    assert list(e.node_of()[:5]) == [0, 0, 0, 0, 1] and list(e.rack_of()[[0, 8]]) == [0, 1]
    topo = e.topology()
    assert (topo["racks"], topo["nodes_per_rack"], topo["gpus_per_node"], topo["num_gpus"]) == (2, 2, 4, 16)


@pytest.mark.parametrize(
    "gpus,cost",
    [
        ([0], 0.775),
        ([0, 1], 0.825),
        ([0, 1, 2, 3], 1.0),
        ([0, 4], 1.05),
        ([0, 16], 1.55),
        ([0, 1, 2, 3, 4, 5, 6, 7], 1.5),
        (list(range(0, 32, 4)), 3.2),
    ],
)
def test_comm_cost_reference_values(gpus, cost):
    # Proximity-DRL's reference values on its 2 x 4 x 4 cluster
    assert gpuplace.comm_cost(gpus, topology="proximity_drl", comm="tree_route")["cost"] == pytest.approx(cost)


def test_comm_cost_errors_and_env_method(small):
    with pytest.raises(ValueError, match="GPU 40 out of range"):
        gpuplace.comm_cost([0, 40])
    with pytest.raises(ValueError, match="appears twice"):
        gpuplace.comm_cost([1, 1])
    with pytest.raises(gpuplace.ConfigError, match="unknown model"):
        gpuplace.comm_cost([0, 1], comm="nope")
    ring = gpuplace.comm_cost([0, 1], topology="dgx_a100", comm="ring_allreduce", model="ResNet-50 (batch size 32)")
    spread = gpuplace.comm_cost([0, 8], topology="dgx_a100", comm="ring_allreduce", model="ResNet-50 (batch size 32)")
    assert spread["slowdown"] >= ring["slowdown"] >= 1.0
    e = gpuplace.make_core_env(small)
    e.reset(0)
    assert e.comm_cost([0, 1])["cost"] < e.comm_cost([0, 8])["cost"]


def test_invalid_action_names_it_and_leaves_state_intact(small):
    e = gpuplace.make_core_env(small)
    e.reset(1)
    obs, mask = e.observation.copy(), e.action_mask.copy()
    for bad, pattern in [(999, "invalid action 999"), (-1, "invalid action -1"), (16, "DEFER")]:
        with pytest.raises(gpuplace.InvalidAction, match=pattern):
            e.step(bad)
    with pytest.raises(ValueError, match=r"invalid action 2\*\*70|out of range"):
        e.step(2**70)
    with pytest.raises(TypeError, match="integer"):
        e.step(1.5)
    with pytest.raises(TypeError, match="integer"):
        e.step("3")
    # nothing moved
    np.testing.assert_array_equal(e.observation, obs)
    np.testing.assert_array_equal(e.action_mask, mask)
    assert e.steps == 0
    g = int(np.flatnonzero(mask)[0])
    e.step(g)
    with pytest.raises(gpuplace.InvalidAction, match=f"invalid action {g}: GPU {g} is already picked"):
        e.step(g)
    # the env goes on exactly as one that never saw the invalid actions
    e2 = gpuplace.make_core_env(small)
    e2.reset(1)
    e2.step(g)
    np.testing.assert_array_equal(e.observation, e2.observation)
    assert e.steps == 1


def test_queries_before_reset_do_not_crash(small):
    e = gpuplace.make_core_env(small)
    assert e.current_job() is None and e.picked() == [] and e.queue() == []
    assert e.metrics()["jobs_done"] == 0 and "rack 0" in e.render_ansi()
    assert e.why_invalid(0) == "reset() has not been called"
    with pytest.raises(gpuplace.StateError, match="model="):
        e.comm_cost([0, 1])
    assert e.comm_cost([0, 1], model=0)["cost"] > 0
    assert len(e.finished_jobs()["id"]) == 0


def test_scenarios_by_name_and_file_in_the_core(tmp_path, small):
    import json as _json

    assert _core.Env("default").num_gpus == 64
    p = tmp_path / "s.json"
    p.write_text(_json.dumps(small))
    assert _core.Env(str(p)).num_gpus == 16
    with pytest.raises(gpuplace.ConfigError, match=r'scenario "nope": not JSON text .* not a preset \(default, '):
        _core.Env("nope")


def test_state_errors_and_seeds(small):
    e = gpuplace.make_core_env(small)
    with pytest.raises(gpuplace.StateError, match="reset"):
        e.step(0)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        e.reset(-1)
    with pytest.raises(TypeError, match="seed must be an int"):
        e.reset(1.5)
    e.reset(2**64 - 1)
    assert e.seed == 2**64 - 1
    e.reset(np.uint64(5))
    assert e.seed == 5


def test_numpy_integer_actions(small):
    e = gpuplace.make_core_env(small)
    e.reset(0)
    g = np.flatnonzero(e.action_mask)[0]
    e.step(np.int64(g))
    e.step(np.array(np.flatnonzero(e.action_mask)[0], dtype=np.int32))


def test_heuristics_by_name_run_through_the_env(small):
    names = gpuplace.heuristic_names()
    assert {"random", "first_fit"} <= set(names)
    for n in names:
        e = gpuplace.make_core_env(small)
        h = gpuplace.Heuristic(n)
        h.reset(5)
        e.reset(5)
        while not e.done:
            e.step(h.act(e))
        assert e.terminated and e.metrics()["jobs_done"] == 20
    with pytest.raises(gpuplace.ConfigError, match="unknown policy"):
        gpuplace.Heuristic("nope")
    # acting before reset() or after the end is an error, never a crash
    for n in names:
        with pytest.raises(gpuplace.StateError, match="reset"):
            gpuplace.Heuristic(n).act(gpuplace.make_core_env(small))
    with pytest.raises(gpuplace.StateError, match="over"):
        gpuplace.Heuristic("first_fit").act(e)


def test_step_releases_the_gil_and_threads_do_not_interfere(small):
    # Two threads each run their own env; results equal the sequential ones.
    def run(seed, out):
        e = gpuplace.make_core_env(small)
        h = gpuplace.Heuristic("first_fit")
        e.reset(seed)
        while not e.done:
            e.step(h.act(e))
        out[seed] = e.episode_return

    seq, par = {}, {}
    for s in (1, 2):
        run(s, seq)
    ts = [threading.Thread(target=run, args=(s, par)) for s in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seq == par


def test_render_ansi_and_finished_jobs(small):
    r = gpuplace.run_episode(small, "first_fit", seed=4)
    jobs = r["jobs"]
    assert len(jobs["id"]) == 20
    assert (jobs["end"] >= jobs["start"]).all() and (jobs["start"] >= jobs["submit"]).all()
    assert jobs["gpus"].size == jobs["num_gpus"].sum()
    e = gpuplace.make_core_env(small)
    e.reset(4)
    text = e.render_ansi()
    assert "rack 0" in text and "placing job" in text
