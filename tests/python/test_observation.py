"""The observation a scenario chooses (key "observation": "features" or "exclude") from Python, and
the observation layout a model records: a model refuses an env whose inputs differ, naming them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace.config import load_scenario
from gpuplace.torch_net import LayoutError, ObsSpec, check_compatible, NetConfig

SMALL = {"topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 16}}


def _with(obs: dict) -> dict:
    return dict(SMALL, observation=obs)


def test_the_chosen_segments_equal_the_whole_observations_under_random_play():
    whole = gpuplace.GymnasiumEnv("default", overrides=SMALL)
    chosen = gpuplace.GymnasiumEnv("default", overrides=_with({"exclude": ["gpu_remaining", "global"]}))
    lay = chosen.unwrapped.observation_layout
    names = [s["name"] for s in lay]
    assert "gpu_remaining" not in names and "global" not in names and names[0] == "gpu_busy"
    assert chosen.observation_space.shape[0] == whole.observation_space.shape[0] - 16 - 4
    full = {s["name"]: s for s in whole.unwrapped.observation_layout}
    rng = np.random.default_rng(0)
    ow, _ = whole.reset(seed=3)
    oc, _ = chosen.reset(seed=3)
    for _ in range(200):
        for s in lay:
            f = full[s["name"]]
            assert np.array_equal(ow[f["offset"]:f["offset"] + f["size"]], oc[s["offset"]:s["offset"] + s["size"]])
        assert np.array_equal(whole.action_masks(), chosen.action_masks())
        a = int(rng.choice(np.flatnonzero(whole.action_masks())))
        ow, rw, tw, _, _ = whole.step(a)
        oc, rc, tc, _, _ = chosen.step(a)
        assert rw == rc and tw == tc
        if tw:
            ow, _ = whole.reset(seed=4)
            oc, _ = chosen.reset(seed=4)


def test_a_vector_env_shows_the_chosen_observation():
    v = gpuplace.GymnasiumVectorEnv("default", 2, overrides=_with({"features": ["gpu_busy", "job"]}))
    obs, _ = v.reset(seed=1)
    assert obs.shape == (2, 16 + 5)
    assert [s["name"] for s in v.single_observation_space.gpuplace_layout["segments"]] == ["gpu_busy", "job"]


def test_an_unknown_segment_is_refused_with_its_path_and_the_known_ones():
    with pytest.raises(gpuplace.ConfigError, match=r'config /observation/exclude/0: unknown observation segment "gpu_rest" '
                                                   r"\(this env's: gpu_busy, gpu_picked"):
        gpuplace.GymnasiumEnv("default", overrides=_with({"exclude": ["gpu_rest"]}))


def test_the_layout_records_each_segments_item_and_fields():
    env = gpuplace.GymnasiumEnv("default", overrides=SMALL)
    segs = env.observation_space.gpuplace_layout["segments"]
    assert segs[0]["item"] == "gpu" and segs[-1]["item"] == ""
    spec = ObsSpec.from_space(env.observation_space)
    assert len(spec.names) == spec.gpu_features + spec.context
    assert spec.names[0] == "gpu_busy" and "queue.0.present" in spec.names and "global.load" in spec.names
    # a layout recorded before "item" (a model saved then) is read by the segments' names, without names
    legacy = [{k: v for k, v in s.items() if k not in ("item", "fields")} for s in segs]
    old = ObsSpec.from_layout(legacy, env.observation_space.shape[0], 16, 8)
    assert old.same_shape(spec) and old.names == ()


def test_a_per_gpu_network_refuses_other_inputs_of_the_same_size_naming_them():
    a = gpuplace.GymnasiumEnv("default", overrides=_with({"exclude": ["gpu_busy"]}))
    b = gpuplace.GymnasiumEnv("default", overrides=_with({"exclude": ["gpu_picked"]}))
    sa, sb = ObsSpec.from_space(a.observation_space), ObsSpec.from_space(b.observation_space)
    assert sa.same_shape(sb) and sa != sb
    with pytest.raises(LayoutError, match="the network reads gpu_picked, which scenario b does not observe; scenario b "
                                          "observes gpu_busy, which the network was not trained on"):
        check_compatible(sa, sb, NetConfig(), what="scenario b")
    check_compatible(sa, sa, NetConfig())
    # the names survive a checkpoint's JSON, and the C++ reads them
    assert ObsSpec(**json.loads(json.dumps(sa.to_json()))) == sa


def test_an_mlp_model_refuses_a_scenario_whose_inputs_differ_at_the_same_size():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import SB3VecEnv, scenario_for_model

    sc_a = load_scenario("default", dict(SMALL, name="a", observation={"exclude": ["gpu_busy"]}))
    sc_b = load_scenario("default", dict(SMALL, name="b", observation={"exclude": ["gpu_picked"]}))
    model = MaskablePPO("MlpPolicy", SB3VecEnv(sc_a, 2), n_steps=16, batch_size=16, device="cpu")
    assert scenario_for_model(model, sc_a)[1] == "maskable_ppo"
    with pytest.raises(LayoutError, match=r"does not fit scenario b: its observation differs: the model reads gpu_picked, "
                                          r"which scenario b does not observe; scenario b observes gpu_busy"):
        scenario_for_model(model, sc_b)


def test_a_cpp_checkpoint_records_the_names_and_torch_reads_them(tmp_path):
    from gpuplace.torch_net import load_checkpoint

    sc = load_scenario("default", dict(SMALL, name="small", observation={"exclude": ["global"]}))
    ppo = _core.PPO(sc, {"num_envs": 2, "num_steps": 8, "total_steps": 16, "network": {"architecture": "per_gpu"}})
    path = tmp_path / "m.json"
    ppo.save(str(path))
    doc = json.loads(path.read_text())
    names = doc["obs_spec"]["names"]
    assert "global.load" not in names and "job.request" in names
    net, _ = load_checkpoint(path)
    assert list(net.spec.names) == names
