"""Topologies as data from Python: a scenario's topology as levels (or a preset written as levels)
through Scenario, GymnasiumEnv and gym ids, the bindings' levels (hierarchy, domains, free GPUs per
domain), the renderer on a hierarchy of uneven domains, and errors naming the JSON path."""

import pathlib

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace.gymnasium import GymnasiumEnv
from gpuplace.render import occupancy_image

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNEVEN = {"name": "mine", "levels": [
    {"name": "switch", "fanout": 4, "bandwidth": 24, "latency": 1.5e-6},
    {"name": "server", "fanout": [1, 2, 2], "bandwidth": 16, "latency": 3e-6},
    {"name": "net", "fanout": 3, "bandwidth": 12.5, "latency": 1e-5}]}


def test_levels_reach_the_env_and_the_bindings_speak_levels():
    env = GymnasiumEnv("default", overrides={"topology": UNEVEN, "workload": {"num_jobs": 20}})
    core = env.core
    topo = core.topology()
    assert topo["name"] == "mine" and topo["num_gpus"] == 20 and topo["num_nodes"] == 5
    assert [(lv["name"], lv["num_domains"], lv["sizes"]) for lv in topo["hierarchy"]] == [
        ("switch", 5, [4, 4, 4, 4, 4]), ("server", 3, [4, 8, 8]), ("net", 1, [20])]
    assert topo["hierarchy"][1]["bandwidth"] == 16
    dom = core.domains()
    assert dom.shape == (20, 2)
    assert np.array_equal(dom[:, 0], np.repeat(np.arange(5), 4))
    assert np.array_equal(core.domain_of("server"), np.repeat([0, 1, 2], [4, 8, 8]))
    assert np.array_equal(core.domain_of(1), core.node_of())
    assert np.array_equal(core.domain_of(2), core.rack_of())
    with pytest.raises(gpuplace.ConfigError, match='level "rack": not a domain level of the topology \\(levels: switch, server\\)'):
        core.domain_of("rack")
    env.reset(seed=3)
    state = core.cluster_state()
    assert set(state["domain_free"]) == {"switch", "server"}
    assert state["domain_free"]["server"].sum() == state["free_gpus"]
    names = [s["name"] for s in env.observation_layout]
    assert "gpu_switch_free" in names and "gpu_server_free" in names


def test_a_preset_written_as_levels_by_name_through_gym_ids_and_the_scenario_file():
    assert _core.topology_preset_names() == ["dgx_a100", "dgx1", "proximity_drl", "nvl72", "fat_tree", "heterogeneous"]
    nvl = _core.topology_preset("nvl72")
    assert [lv["name"] for lv in nvl["levels"]] == ["nvl", "spine"]
    env = gym.make("gpuplace/Default-v0", overrides={"topology": {"preset": "nvl72", "racks": 2}})
    assert env.unwrapped.num_gpus == 144
    sc = gpuplace.Scenario(str(ROOT / "examples/scenarios/four_levels.json"))
    assert sc.to_dict()["topology"]["levels"][1]["fanout"] == [4, 4, 2, 2]
    assert GymnasiumEnv(sc).num_gpus == 96
    # a tree preset over a topology of levels replaces it (no mix of the two forms)
    back = gpuplace.Scenario(sc, {"topology": {"preset": "dgx_a100"}})
    assert back.to_dict()["topology"] == {"preset": "dgx_a100"}


def test_the_renderer_draws_uneven_domains_by_level():
    env = GymnasiumEnv("default", overrides={"topology": UNEVEN, "workload": {"num_jobs": 20}}, render_mode="rgb_array")
    env.reset(seed=1)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3
    # a tree draws the same from its levels as from its racks, nodes and GPUs
    tree = GymnasiumEnv("default")
    tree.reset(seed=1)
    topo, holders = tree.core.topology(), tree.core.gpu_holders()
    keys = {k: topo[k] for k in ("racks", "nodes_per_rack", "gpus_per_node")}
    assert np.array_equal(occupancy_image(topo, holders), occupancy_image(keys, holders))


def test_errors_in_levels_name_the_json_path_and_the_value():
    bad = {"name": "x", "levels": [{"name": "a", "fanout": [4, 4], "bandwidth": 1}, {"name": "b", "fanout": 3, "bandwidth": 1}]}
    with pytest.raises(gpuplace.ConfigError, match=r"config /topology/levels/0/fanout: 2 fan-outs for the 3 domains of level \"a\""):
        gpuplace.Scenario({"topology": bad})
    with pytest.raises(gpuplace.ConfigError, match=r"config /topology/levels/0/bandwidth: expected a bandwidth > 0 \(GB/s per GPU\), got 0"):
        gpuplace.Scenario({"topology": {"levels": [{"name": "a", "fanout": 2, "bandwidth": 0}, {"name": "b", "fanout": 2, "bandwidth": 1}]}})
