"""The evaluation harness from Python and the `python -m gpuplace` command line."""

import json
import subprocess
import sys

import numpy as np
import pytest

import gpuplace
from gpuplace.cli import main


def test_harness_table_and_python_agent_rows_match(small):
    seeds = gpuplace.held_out_seeds(4)
    rep = gpuplace.evaluate(small, seeds=seeds)
    assert rep.policies == gpuplace.heuristic_names()
    assert list(rep.seeds) == [1_000_000 + i for i in range(4)]

    def first_fit(obs, masks):  # the lowest valid GPU, in a batch
        return np.argmax(masks[:, :-1], axis=1)

    evaluate_agent_rep = gpuplace.evaluate_agent(first_fit, small, seeds, name="py_first_fit", report=rep)
    assert evaluate_agent_rep is rep
    # a Python policy driving the same seeds reproduces the C++ heuristic exactly
    assert rep.per_seed("py_first_fit") == rep.per_seed("first_fit")
    assert rep.returns("py_first_fit") == rep.returns("first_fit")
    table = rep.table()
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["policy", "avg_jct", "p95_jct"]
    assert any(line.startswith("py_first_fit") for line in lines)
    assert "mean +- standard error over 4 seeds" in table
    j = rep.to_json()
    assert set(j["policies"]) == set(rep.policies)
    with pytest.raises(ValueError, match="already in the report"):
        rep.add("first_fit", rep.per_seed("first_fit"), rep.returns("first_fit"))
    with pytest.raises(ValueError, match="one metrics dict and one return per seed"):
        rep.add("x", rep.per_seed("first_fit")[:2], [0.0, 0.0])


def test_paired_differences_match_the_per_seed_metrics(small):
    rep = gpuplace.evaluate(small, ["first_fit", "pack", "random"], 6)
    paired = rep.paired("pack")
    assert [p["other"] for p in paired] == ["first_fit", "random"]
    mine = [m["avg_jct"] for m in rep.per_seed("pack")]
    for p in paired:
        d = np.array(mine) - np.array([m["avg_jct"] for m in rep.per_seed(p["other"])])
        assert p["mean"] == pytest.approx(d.mean())
        assert p["sem"] == pytest.approx(d.std(ddof=1) / np.sqrt(len(d)))
        assert p["lower"] == int((d < 0).sum()) and p["seeds"] == 6
    assert rep.paired("pack", "avg_comm_cost")[0]["other"] == "first_fit"
    assert "pack lower on" in rep.paired_table("pack")
    with pytest.raises(KeyError, match="no policy"):
        rep.paired("ppo")
    with pytest.raises(gpuplace.Error, match="unknown metric"):
        rep.paired("pack", "speed")


def test_evaluate_is_independent_of_threads(small):
    a = gpuplace.evaluate(small, ["random"], 4, threads=1)
    b = gpuplace.evaluate(small, ["random"], 4, threads=2)
    assert a.per_seed("random") == b.per_seed("random")


def test_cli_evaluate(capsys, tmp_path, small):
    sc = tmp_path / "small.json"
    sc.write_text(json.dumps(small))
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    rc = main(["evaluate", "--scenario", str(sc), "--seeds", "3", "--policies", "random,first_fit",
               "--csv", str(out_csv), "--json", str(out_json), "-q"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "scenario small" in out and "first_fit" in out and "+-" in out
    assert out_csv.read_text().startswith("policy,seed,avg_jct")
    assert set(json.loads(out_json.read_text())["policies"]) == {"random", "first_fit"}


def test_cli_errors_are_reported_not_raised(capsys):
    assert main(["evaluate", "--scenario", "nope", "-q"]) == 2
    assert 'scenario "nope": not JSON text' in capsys.readouterr().err
    assert main(["evaluate", "--policies", "nope", "--seeds", "1", "-q"]) == 2
    assert "unknown policy" in capsys.readouterr().err


def test_cli_info_and_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "gpuplace", "info"], capture_output=True, text=True, check=True)
    assert "heuristics:" in r.stdout and "first_fit" in r.stdout


def test_cli_plots(tmp_path, small):
    pytest.importorskip("matplotlib")
    sc = tmp_path / "small.json"
    sc.write_text(json.dumps(small))
    cdf, tl, lc = tmp_path / "cdf.png", tmp_path / "tl.png", tmp_path / "lc.png"
    assert main(["plot", "jct-cdf", "--scenario", str(sc), "--seeds", "2", "--out", str(cdf)]) == 0
    assert main(["plot", "timeline", "--scenario", str(sc), "--policies", "first_fit", "--out", str(tl)]) == 0
    curve = tmp_path / "run" / "episodes.csv"
    curve.parent.mkdir()
    curve.write_text("timesteps,episode_return,length,avg_jct,avg_comm_cost\n" +
                     "".join(f"{i * 100},{-10 + i * 0.1},50,3600,1.0\n" for i in range(30)))
    assert main(["plot", "learning-curve", str(curve), "--out", str(lc)]) == 0
    for p in (cdf, tl, lc):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
