"""The reference policies shipped in the package (data/models/, experiments/train_models.sh): each loads by
name and schedules every job of the scenario it was trained on, under its own queue policy."""

import pytest

from gpuplace import _core
from gpuplace.config import load_scenario

pytestmark = pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")


@pytest.mark.parametrize("name", list(_core.model_names()))
def test_a_reference_policy_loads_by_name_and_finishes_every_job(name):
    from gpuplace.ppo import load_model

    net = load_model(name)
    scenario = load_scenario(net.scenario)
    report = _core.evaluate_network(scenario, net, [1000000], name, 1)
    (m,) = report.per_seed(name)
    assert m["jobs_done"] == m["jobs_total"] > 0


def test_a_per_gpu_reference_policy_acts_on_another_cluster_size():
    from gpuplace.ppo import load_model

    net = load_model("default")  # trained on 64 GPUs
    small = load_scenario("default", {"topology": {"racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 40}})
    report = _core.evaluate_network(small, net, [1000000], "ppo", 1)
    (m,) = report.per_seed("ppo")
    assert m["jobs_done"] == m["jobs_total"] == 40


def test_a_network_that_holds_only_where_a_heuristic_does():
    """hold_with (include/gpuplace/rl/hold_guard.hpp): on 16 GPUs the default network holds jobs where
    pack_wait would place them; guarded, it leaves fewer GPU-hours idle while a job would fit, and its
    DEFER is taken only where pack_wait defers too."""
    from gpuplace.config import make_core_env
    from gpuplace.ppo import load_model

    net = load_model("default")
    small = load_scenario("default", {"topology": {"racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 40}})
    idle = {}
    for hold in ("", "pack_wait"):
        e = make_core_env(small)
        e.reset(1000000)
        wait = _core.Heuristic("pack_wait")
        while not e.done:
            a = int(net.act(e, hold_with=hold) if hold else net.act(e))
            if hold and a == e.defer_action:
                wait.reset(1000000)
                assert int(wait.act(e)) == e.defer_action
            e.step(a)
        idle[hold] = e.idle_while_waiting_gpu_hours()
    assert idle["pack_wait"] < idle[""]
    guarded = _core.evaluate_network(small, net, [1000000], "ppo", 1, hold_with="pack_wait").per_seed("ppo")[0]
    assert guarded["jobs_done"] == 40
    with pytest.raises(_core.ConfigError, match="unknown policy"):
        _core.evaluate_network(small, net, [1000000], "ppo", 1, hold_with="best")


def test_a_network_that_holds_only_on_clusters_large_enough():
    """hold_from (include/gpuplace/rl/hold_guard.hpp): from 64 GPUs, the default network on 16 never holds
    a job while another action is valid, so no GPU is idle while a job would fit; from 16, it is the network."""
    from gpuplace.config import make_core_env
    from gpuplace.ppo import load_model

    net = load_model("default")
    small = load_scenario("default", {"topology": {"racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 40},
                                      "env": {"queue_policy": net.queue}})  # as the harness runs it
    e = make_core_env(small)
    e.reset(1000000)
    overruled = 0
    while not e.done:
        a, n = int(net.act(e, hold_from=64)), int(net.act(e))
        assert int(net.act(e, hold_from=16)) == n
        if a == e.defer_action:
            assert sum(e.action_mask()) == 1
        overruled += a != n
        e.step(a)
    assert overruled > 0
    assert e.idle_while_waiting_gpu_hours() == 0.0
    report = _core.evaluate_network(small, net, [1000000], "ppo", 1, hold_from=64).per_seed("ppo")[0]
    assert report["jobs_done"] == 40
    assert report["avg_jct"] == e.metrics()["avg_jct"]  # the harness acts as the network with the guard does
    with pytest.raises(_core.ConfigError, match="give one hold guard, not both"):
        _core.evaluate_network(small, net, [1000000], "ppo", 1, hold_with="pack_wait", hold_from=64)


def test_the_philly_network_holding_from_24_gpus_never_holds_on_16():
    """philly_distilled@hold_from:24 (docs/ppo.md, "Holding jobs while GPUs are idle"): on 16 GPUs of a held-out
    Philly file it leaves no GPU idle while a job would fit, and its JCT is pack+sjf's; unguarded, it holds."""
    from gpuplace.config import make_core_env, scenario_of
    from gpuplace.ppo import load_model

    net = load_model("philly_distilled")
    d = scenario_of("philly:e13805").to_dict()
    d["topology"] = {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2}
    d["workload"]["episode_jobs"] = 50
    d["env"].update(queue_policy="sjf", backfill=True, allow_defer=True, action_mode="placement")
    held = 0.0
    for seed in (1000003, 1000007, 1000011):
        e, raw, ref = make_core_env(d), make_core_env(d), make_core_env(dict(d, env=dict(d["env"], action_mode="gpu")))
        for x in (e, raw, ref):
            x.reset(seed)
        while not e.done:
            e.step(int(net.act(e, hold_from=24)))
        while not raw.done:
            raw.step(int(net.act(raw)))
        pack = _core.Heuristic("pack")
        pack.reset(seed)
        while not ref.done:
            ref.step(int(pack.act(ref)))
        assert e.idle_while_waiting_gpu_hours() == 0.0
        assert e.metrics()["avg_jct"] == ref.metrics()["avg_jct"]
        held += raw.idle_while_waiting_gpu_hours()
    assert held > 0.0


def test_a_network_that_places_elsewhere_than_pack_only_by_a_margin():
    """place_with / place_margin (include/gpuplace/rl/hold_guard.hpp): with an infinite margin the Philly network
    places every job as pack would and holds as it does; the harness acts as Network.act does; a margin without
    its heuristic, or a negative one, is a ConfigError."""
    from gpuplace.config import make_core_env
    from gpuplace.ppo import load_model

    net = load_model("philly_distilled")
    sc = load_scenario("default", {"topology": {"racks": 2, "nodes_per_rack": 4}, "workload": {"num_jobs": 160},
                                   "env": {"queue_policy": net.queue, "allow_defer": True, "action_mode": "placement"}})
    e = make_core_env(sc)
    e.reset(2000000)
    pack = _core.Heuristic("pack")
    holds = 0
    while not e.done:
        a, n = int(net.act(e, hold_from=24, place_with="pack", place_margin=float("inf"))), int(net.act(e, hold_from=24))
        if n == e.defer_action:
            assert a == n
            holds += 1
        else:
            pack.reset(2000000)
            assert a == int(pack.act(e))
        e.step(a)
    assert holds > 0
    report = _core.evaluate_network(sc, net, [2000000], "ppo", 1, hold_from=24, place_with="pack",
                                    place_margin=float("inf")).per_seed("ppo")[0]
    assert report["avg_jct"] == e.metrics()["avg_jct"]
    with pytest.raises(_core.ConfigError, match="without place_with"):
        _core.evaluate_network(sc, net, [2000000], "ppo", 1, place_margin=1.0)
    with pytest.raises(_core.ConfigError, match="place margin: a number of logits from 0 up, got -1"):
        _core.evaluate_network(sc, net, [2000000], "ppo", 1, place_with="pack", place_margin=-1.0)
