"""Bad input is a gpuplace error naming the value, never a crash or a raw TypeError; data paths."""

import json
import os

import pytest

import gpuplace
from gpuplace import _core
from gpuplace.cli import main


def test_overrides_and_seeds_are_checked():
    with pytest.raises(gpuplace.ConfigError, match="scenario overrides: expected a dict of options, got int 5"):
        gpuplace.load_scenario("default", overrides=5)
    for bad in (-1, 0, True, "3"):
        with pytest.raises(gpuplace.ConfigError, match="seeds"):
            gpuplace.evaluate("default", ["pack"], seeds=bad)
    with pytest.raises(gpuplace.ConfigError, match="seeds: -2 is not a number of held-out seeds"):
        _core.held_out_seeds(-2)


def test_non_finite_numbers_name_their_path():
    with pytest.raises(gpuplace.ConfigError, match=r"config /workload/load: inf is not a finite number"):
        gpuplace.load_scenario({"workload": {"load": float("inf")}})
    with pytest.raises(gpuplace.ConfigError, match=r"config /reward/jct: nan is not a finite number"):
        gpuplace.load_scenario({"reward": {"jct": float("nan")}})
    with pytest.raises(gpuplace.ConfigError, match="JSON has no Infinity or NaN"):
        gpuplace.load_scenario('{"workload": {"load": Infinity}}')


def test_vector_env_threads_are_checked():
    for bad in (0, 1000):
        with pytest.raises(gpuplace.ConfigError, match=rf"num_threads {bad} out of range \[1, 4\]"):
            gpuplace.make_core_vector_env("default", 4, bad)


@pytest.mark.parametrize("text,fmt,opts,why", [
    ("submit_time,num_gpus,duration\n", "csv", {}, "0 data rows"),
    ("", "philly", {}, "0 data rows"),
    ("submit_time,num_gpus,duration\n0,1,60\n", "csv", {"window": [100, None]}, "1 data row, of which 1 outside the time window"),
    ("submit_time,num_gpus,duration\nx,1,60\n", "csv", {"skip_bad_rows": True}, r"1 data row, of which 1 bad \(skip_bad_rows\)"),
    ("submit_time,num_gpus,duration\n0,99,60\n", "csv", {"drop_oversized": True}, "1 data row, of which 1 larger than the GPU cap"),
])
def test_a_workload_without_jobs_is_an_error_everywhere(tmp_path, text, fmt, opts, why):
    f = tmp_path / "t"
    f.write_text(text)
    sc = {"workload": dict({"kind": "trace", "format": fmt, "path": str(f)}, **opts)}
    with pytest.raises(gpuplace.TraceError, match="no jobs to replay: " + why):
        gpuplace.make_core_env(sc)
    with pytest.raises(gpuplace.TraceError, match="no jobs to replay"):
        gpuplace.make_core_vector_env(sc, 2)
    with pytest.raises(gpuplace.TraceError, match="no jobs to replay"):
        gpuplace.evaluate(sc, ["pack"], 2)
    with pytest.raises(gpuplace.TraceError, match="no jobs to replay"):
        gpuplace.GymnasiumEnv(sc)
    (tmp_path / "s.json").write_text(json.dumps(sc))
    assert main(["evaluate", "--scenario", str(tmp_path / "s.json"), "--seeds", "2", "-q"]) == 2


def test_relative_trace_paths_are_relative_to_the_scenario_file(tmp_path, monkeypatch):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.csv").write_text("submit_time,num_gpus,duration\n0,1,60\n5,2,120\n")
    (tmp_path / "s.json").write_text(json.dumps({"workload": {"kind": "trace", "format": "csv", "path": "traces/t.csv"}}))
    monkeypatch.chdir("/")
    sc = gpuplace.load_scenario(str(tmp_path / "s.json"))
    assert os.path.samefile(sc["workload"]["path"], tmp_path / "traces" / "t.csv")
    e = gpuplace.make_core_env(sc)
    e.reset(1)
    assert e.info()["jobs_total"] == 2
    with pytest.raises(gpuplace.TraceError, match=str(tmp_path / "nope.csv")):
        (tmp_path / "bad.json").write_text(json.dumps({"workload": {"kind": "trace", "format": "csv", "path": "nope.csv"}}))
        gpuplace.make_core_env(str(tmp_path / "bad.json"))


def test_the_package_ships_the_data_gpuplace_data_paths_name():
    assert os.path.exists(_core.resolve_data_path("$GPUPLACE_DATA/philly/0e4a51.trace"))
    sc = {"workload": {"kind": "trace", "format": "philly", "path": "$GPUPLACE_DATA/philly/0e4a51.trace", "max_jobs": 20}}
    rep = gpuplace.evaluate(sc, ["pack"], 1)
    assert rep.per_seed("pack")[0]["jobs_done"] == 20
