"""gpuplace.Scenario: a scenario read and validated once by the C++ core, by the one rule for a
string (JSON text, then a preset name, then a file: include/gpuplace/scenario_source.hpp), and
handed to every env, vector env and the harness without being read again."""

import json
import os
import pickle
import re

import numpy as np
import pytest

import gpuplace
from gpuplace import _core, config


def test_every_source_gives_the_same_scenario(tmp_path, small):
    f = tmp_path / "small.json"
    f.write_text(json.dumps(small))
    ref = gpuplace.Scenario(small)
    for source in (json.dumps(small), "  \n" + json.dumps(small), str(f), f, ref, ref.to_dict()):
        sc = gpuplace.Scenario(source)
        assert sc == ref and sc.to_dict() == ref.to_dict() and sc.name == "small" and sc.comm_model == "tree_route"
    assert gpuplace.Scenario().to_dict() == gpuplace.load_scenario("default")
    assert gpuplace.Scenario("default") != gpuplace.Scenario("proximity_drl")
    assert pickle.loads(pickle.dumps(ref)) == ref
    assert repr(ref) == "<gpuplace.Scenario small>"


def test_one_rule_for_preset_file_and_json_text(tmp_path, monkeypatch, small):
    assert _core.scenario_source('{"name": "x"}') == "json_text"
    assert _core.scenario_source(" default ") == "preset"
    assert _core.scenario_source("philly:0e4a51") == "preset"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "default").write_text(json.dumps(small))  # a file named like a preset
    assert _core.scenario_source("default") == "preset"  # presets win ...
    assert _core.scenario_source("./default") == "file"  # ... a path names the file
    assert gpuplace.Scenario("./default").name == "small"
    assert gpuplace.Scenario("default").name == "default"
    assert gpuplace.Scenario(tmp_path / "default").name == "small"  # a path object is always a file
    missing = os.path.join(str(tmp_path), "nope.json")
    msg = ('scenario "nope.json": not JSON text (it does not start with \'{\'), not a preset (default, proximity_drl, '
           f'colocation, philly, heterogeneous, philly_hidden, nvl72, heterogeneous_gavel, elastic, failures, tenants, philly_tenants, spot, deadlines, philly:<file>, philly_hidden:<file>) and not a file (no file "{missing}")')
    for make in (gpuplace.Scenario, gpuplace.load_scenario, gpuplace.GymnasiumEnv, gpuplace.make_core_env,
                 _core.Env, _core.scenario_source):
        with pytest.raises(gpuplace.ConfigError, match=re.escape(msg)):
            make("nope.json")
    with pytest.raises(gpuplace.ConfigError, match=r'scenario "": empty \(expected a preset name, a scenario file or JSON text\)'):
        gpuplace.Scenario("")
    with pytest.raises(TypeError, match="scenario must be a preset name, a file path, JSON text, a dict or a gpuplace.Scenario, got int"):
        gpuplace.Scenario(42)


def test_overrides_and_action_mode(small):
    sc = gpuplace.Scenario(small, overrides={"env": {"max_steps": 5, "allow_defer": True}}, action_mode="placement")
    env = sc.to_dict()["env"]
    assert (env["max_steps"], env["allow_defer"], env["action_mode"]) == (5, True, "placement")
    assert gpuplace.load_scenario(small, {"env": {"max_steps": 5}})["env"]["max_steps"] == 5
    assert gpuplace.Scenario(sc) is not sc and gpuplace.Scenario(sc) == sc
    assert config.scenario_of(sc) is sc  # nothing to change: the same object
    with pytest.raises(gpuplace.ConfigError, match=r'scenario overrides: config /env/bogus: unknown key "bogus" \(allowed: '):
        gpuplace.Scenario(small, overrides={"env": {"bogus": 1}})
    with pytest.raises(gpuplace.ConfigError, match=r"scenario overrides: expected a dict of options, got list \[1\]"):
        gpuplace.load_scenario(small, [1])
    with pytest.raises(gpuplace.ConfigError, match=r'unknown action mode "pick"'):
        gpuplace.Scenario(small, action_mode="pick")


def test_a_file_is_read_once_and_never_again(tmp_path, monkeypatch, small):
    """Every facade reads its scenario once (one Scenario made), and the C++ envs take it as it is:
    they work after the file is gone."""
    pytest.importorskip("stable_baselines3")
    from gpuplace.gymnasium import GymnasiumEnv, GymnasiumVectorEnv
    from gpuplace.sb3 import SB3VecEnv

    made = []

    class Counting(config.Scenario):
        def __init__(self, *args):
            made.append(args[0])
            super().__init__(*args)

    monkeypatch.setattr(config, "Scenario", Counting)
    f = tmp_path / "s.json"
    for make in (lambda s: GymnasiumEnv(s), lambda s: GymnasiumVectorEnv(s, 2), lambda s: SB3VecEnv(s, 2),
                 lambda s: gpuplace.make_core_vector_env(s, 2), lambda s: gpuplace.evaluate(s, ["pack"], [1]),
                 lambda s: gpuplace.evaluate_agent(lambda o, m: m.argmax(1), s, [1, 2])):
        f.write_text(json.dumps(small))
        made.clear()
        make(str(f))
        assert made == [str(f)]
    sc = gpuplace.Scenario(str(f))
    f.unlink()
    env = GymnasiumEnv(sc)
    obs, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, GymnasiumEnv(small).reset(seed=3)[0])
    assert env.scenario == sc.to_dict()
    v = gpuplace.make_core_vector_env(sc, 2)
    assert v.scenario() == sc.to_dict()
    assert gpuplace.run_episode(sc, "pack", seed=3, record=False)["metrics"] == \
        gpuplace.run_episode(small, "pack", seed=3, record=False)["metrics"]


def test_relative_paths_in_a_file_are_under_its_folder(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "jobs.csv").write_text("submit_time,num_gpus,duration\n0,1,60\n10,2,120\n")
    f = tmp_path / "sub" / "trace.json"
    f.write_text(json.dumps({"workload": {"kind": "trace", "format": "csv", "path": "jobs.csv"}}))
    monkeypatch.chdir(tmp_path)
    sc = gpuplace.Scenario("sub/trace.json")
    assert sc.to_dict()["workload"]["path"] == str(tmp_path / "sub" / "jobs.csv")
    assert gpuplace.run_episode(sc, "pack", seed=0, record=False)["metrics"]["jobs_done"] == 2
