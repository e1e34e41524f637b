"""python -m gpuplace evaluate and train take every option gpuplace-eval and gpuplace-train have,
spelled the same (read from the programs' sources), with the same meanings: the trace options
(--window, --max-gpus, --drop-oversized, --unmeasured, --skip-bad-rows), --topology and
--summary-csv, --calibration and --model (a trace's zoo model; the MaskablePPO .zip is --sb3) of
evaluate; --load, --compare-on, --no-plot and --overwrite of train."""

import csv
import io
import os
import re
import subprocess

from gpuplace import _core
from gpuplace.cli import build_parser, main
from conftest import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(REPO, "data", "philly", "0e4a51.trace")

# gpuplace-eval options python -m gpuplace evaluate leaves to another command: --list is
# `python -m gpuplace info --list`
EVAL_ELSEWHERE = {"--list"}
# gpuplace-train's --compare: the Python train compares unless --seeds 0
TRAIN_ELSEWHERE = {"--compare"}


def _options(source: str) -> set[str]:
    text = open(os.path.join(REPO, source)).read()
    return set(re.findall(r'add_(?:option|flag)\("(--[a-z0-9-]+)"', text))


def _python_options(command: str) -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(getattr(a, "choices", None), dict))
    return {o for a in sub.choices[command]._actions for o in a.option_strings}


def test_every_cpp_option_is_spelled_the_same_in_python():
    for source, command, elsewhere in (("apps/gpuplace_eval.cpp", "evaluate", EVAL_ELSEWHERE),
                                       ("apps/lib/train_program.cpp", "train", TRAIN_ELSEWHERE)):
        cpp = _options(source)
        assert len(cpp) > 10, source
        missing = cpp - _python_options(command) - elsewhere
        assert not missing, f"{command} lacks {sorted(missing)} of {source}"


def _eval(capsys, *extra):
    return run_cli(capsys, main, ["evaluate", "--policies", "pack", "--seeds", "1", "-q", "--trace", TRACE,
                                  "--format", "philly", *extra])


def test_trace_options_reach_the_scenario(capsys, tmp_path):
    code, out, _ = _eval(capsys, "--json", str(tmp_path / "all.json"))
    assert code == 0
    # the window keeps fewer jobs; --max-gpus 1 with --drop-oversized keeps only 1-GPU jobs
    args = build_parser().parse_args(["evaluate", "--trace", TRACE, "--format", "philly", "--window", "0,100000",
                                      "--max-gpus", "1", "--drop-oversized", "--skip-bad-rows", "--unmeasured", "drop"])
    from gpuplace.cli import _scenario_arg

    _scenario_arg(args)
    w = args.scenario.to_dict()["workload"]
    assert w["window"] == [0.0, 100000.0] and w["max_gpus"] == 1 and w["drop_oversized"] is True
    assert w["skip_bad_rows"] is True and w["unmeasured"] == "drop"
    code, out, _ = _eval(capsys, "--window", "0,100000", "--max-gpus", "1", "--drop-oversized", "--skip-bad-rows",
                         "--unmeasured", "drop")
    assert code == 0 and "pack" in out


def test_bad_trace_option_values_name_the_option(capsys):
    for extra, words in ((["--window", "5,1"], ["--window", "START must be below END"]),
                         (["--window", "1"], ["--window", "START,END"]),
                         (["--window", "a,2"], ["--window", "'a'"]),
                         (["--max-gpus", "-1"], ["--max-gpus", "-1"]),
                         (["--unmeasured", "guess"], ["--unmeasured", "guess"])):
        code, _, err = _eval(capsys, *extra)
        assert code == 2, extra
        for w in words:
            assert w in err, (extra, err)
    for option in (["--window", "0,10"], ["--max-gpus", "2"], ["--drop-oversized"], ["--skip-bad-rows"],
                   ["--unmeasured", "drop"]):
        code, _, err = run_cli(capsys, main, ["evaluate", "--seeds", "1", *option])
        assert code == 2 and f"{option[0]} needs --trace" in err


def test_topology_replaces_the_cluster(capsys):
    from gpuplace.cli import _scenario_arg

    args = build_parser().parse_args(["evaluate", "--topology", "dgx1"])
    _scenario_arg(args)
    assert args.scenario.to_dict()["topology"]["preset"] == "dgx1"
    code, _, err = run_cli(capsys, main, ["evaluate", "--policies", "pack", "--seeds", "1", "--topology", "nosuch"])
    assert code == 2 and "--topology nosuch" in err and "dgx1" in err
    code, _, err = run_cli(capsys, main, ["evaluate", "--policies", "pack", "--seeds", "1", "--topology", "{nope"])
    assert code == 2 and "--topology" in err


def test_summary_csv_has_mean_and_sem_per_metric(capsys, tmp_path):
    path = tmp_path / "summary.csv"
    code, _, _ = run_cli(capsys, main, ["evaluate", "--policies", "pack,first_fit", "--seeds", "3", "-q",
                                        "--summary-csv", str(path), "--csv", str(tmp_path / "per_seed.csv")])
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [r["policy"] for r in rows] == ["pack", "first_fit"] and all(r["seeds"] == "3" for r in rows)
    per_seed = list(csv.DictReader(open(tmp_path / "per_seed.csv")))
    jct = [float(r["avg_jct"]) for r in per_seed if r["policy"] == "pack"]
    assert abs(float(rows[0]["avg_jct_mean"]) - sum(jct) / 3) < 1e-6 * max(jct)
    for n in _core.eval_metric_names():
        assert f"{n}_mean" in rows[0] and f"{n}_sem" in rows[0]
    code, _, err = run_cli(capsys, main, ["evaluate", "--seeds", "1", "--summary-csv", str(tmp_path / "no" / "s.csv")])
    assert code == 2 and "--summary-csv" in err


def test_train_load_evaluates_a_shipped_model(capsys, tmp_path):
    code, out, _ = run_cli(capsys, main, ["train", "--load", "default", "--seeds", "1", "--policies", "pack",
                                          "--out", str(tmp_path), "--no-plot", "-q"])
    assert code == 0 and "loaded default (scenario default)" in out and "ppo" in out
    assert (tmp_path / "compare.csv").exists() and "python -m gpuplace plot" not in out
    assert not (tmp_path / "jct_comparison.png").exists()
    # without --no-plot the run's plots are written, as gpuplace-train writes them
    code, out, _ = run_cli(capsys, main, ["train", "--load", "default", "--seeds", "1", "--policies", "pack",
                                          "--out", str(tmp_path), "-q"])
    assert code == 0 and (tmp_path / "jct_comparison.png").stat().st_size > 0 and "jct_comparison.png" in out
    code, _, err = run_cli(capsys, main, ["train", "--load", "nosuch", "--out", str(tmp_path)])
    assert code == 2 and "--load nosuch" in err and "default" in err


def test_train_compare_on_several_scenarios(capsys, tmp_path):
    code, out, _ = run_cli(capsys, main, ["train", "--load", "default", "--compare-on", "default,proximity_drl", "--seeds", "1",
                                          "--policies", "pack", "--out", str(tmp_path), "-q"])
    assert code == 0 and (tmp_path / "compare_0.csv").exists() and (tmp_path / "compare_1.csv").exists()
    code, _, err = run_cli(capsys, main, ["train", "--compare-on", "default,,small", "--print-config"])
    assert code == 2 and "item 2 is empty" in err
    code, out, _ = run_cli(capsys, main, ["train", "--compare-on", "default,proximity_drl", "--print-config"])
    assert code == 0 and '"compare_on"' in out


def test_train_refuses_a_run_folder_without_resume_or_overwrite(capsys, tmp_path):
    (tmp_path / "run.json").write_text("{}")
    code, _, err = run_cli(capsys, main, ["train", "--out", str(tmp_path), "--steps", "1"])
    assert code == 2 and "already holds a run" in err and "--overwrite" in err
    code, _, err = run_cli(capsys, main, ["train", "--out", str(tmp_path), "--resume", "--overwrite"])
    assert code == 2 and "--overwrite excludes --resume" in err


def test_evaluate_calibration_prints_gpuplace_evals_table(capsys):
    code, out, err = run_cli(capsys, main, ["evaluate", "--calibration"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["model", "gpus", "meas_cons", "model_cons", "meas_spread", "model_spread", "max_err%"]
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == len(_core.calibration("default")) > 10
    # the measured points are reproduced on the measurement cluster: errors well under one percent
    assert max(float(r[-1]) for r in rows) < 1.0
    eval_program = os.path.join(REPO, "build", "apps", "gpuplace-eval")
    if os.access(eval_program, os.X_OK):  # the same text as the C++ program's
        cxx = subprocess.run([eval_program, "--calibration"], capture_output=True, text=True, timeout=120)
        assert cxx.stdout == out


def test_evaluate_model_names_a_traces_zoo_model_and_sb3_takes_the_zip(capsys, tmp_path):
    code, out, err = run_cli(capsys, main, ["evaluate", "--trace", TRACE, "--format", "philly", "--max-jobs", "20",
                                            "--model", "ResNet-50 (batch size 64)", "--policies", "pack", "--seeds", "1", "-q"])
    assert code == 0, err
    code, out, err = run_cli(capsys, main, ["evaluate", "--model", "ResNet-50 (batch size 64)", "--seeds", "1", "-q"])
    assert code == 2 and "--model needs --trace FILE" in err
    code, out, err = run_cli(capsys, main, ["evaluate", "--trace", TRACE, "--format", "philly", "--model", "nosuch",
                                            "--seeds", "1", "-q"])
    assert code == 2 and "nosuch" in err
    missing = str(tmp_path / "m.zip")
    code, out, err = run_cli(capsys, main, ["evaluate", "--model", missing, "--seeds", "1", "-q"])
    assert code == 2 and "deprecated: use --sb3" in err and "m.zip" in err
    code, out, err = run_cli(capsys, main, ["evaluate", "--sb3", missing, "--seeds", "1", "-q"])
    assert code == 2 and "m.zip" in err and "deprecated" not in err
