"""One spelling per flag across the C++ programs and ``python -m gpuplace`` (the C++ one: --steps,
--seeds, comma-separated lists); the old Python spellings still parse, with a note naming the new
one. Every subcommand's --help shows an example; evaluate reaches what gpuplace-eval does (--queue,
--trace, --action-mode, --durations, --round); train prints its config; bench ranks results."""

import json
import os

import pytest

from gpuplace import _core
from gpuplace.bench import main as bench_main
from gpuplace.cli import build_parser, main
from conftest import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_run = run_cli


def _subcommands(parser):
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            yield from action.choices.items()


def test_every_subcommand_help_has_an_example(capsys):
    from gpuplace.bench import parser as bench_parser

    def check(top):
        for name, p in _subcommands(top):
            if name not in ("bench", "rllib"):  # their own parsers, checked here too
                assert p.epilog and p.epilog.startswith("example: python -m gpuplace"), name

    check(build_parser())
    check(bench_parser())
    code, out, _ = _run(capsys, main, ["evaluate", "--help"])
    assert code == 0 and "example: python -m gpuplace evaluate" in out
    check(pytest.importorskip("gpuplace.rllib.cli", exc_type=ImportError).build_parser())  # the rllib extra (in CI)


def test_the_old_spellings_parse_with_a_note(capsys):
    p = build_parser()
    new = p.parse_args(["train-sb3", "--steps", "300", "--seeds", "3"])
    old = p.parse_args(["train-sb3", "--timesteps", "300", "--eval-seeds", "3"])
    assert (new.steps, new.seeds) == (old.steps, old.seeds) == (300, 3)
    err = capsys.readouterr().err
    assert "--timesteps is deprecated" in err and "use --steps" in err and "use --seeds" in err
    # the old spelling is checked like the new one: the value is named
    code, _, err = _run(capsys, main, ["train", "--timesteps", "-5"])
    assert code == 2 and "-5" in err
    code, out, err = _run(capsys, main, ["train", "--print-config", "--timesteps", "7000", "--scenario", "philly"])
    assert code == 0 and "use --steps" in err
    cfg = json.loads(out)
    assert cfg["ppo"]["total_steps"] == 7000 and cfg["scenario"] == "philly"


def test_lists_take_commas_and_spaces(capsys):
    p = build_parser()
    assert p.parse_args(["evaluate", "--policies", "pack,first_fit"]).policies == "pack,first_fit"
    assert p.parse_args(["evaluate", "--policies", "pack", "first_fit"]).policies == "pack,first_fit"


def test_an_unknown_scenario_lists_the_presets(capsys):
    code, _, err = _run(capsys, main, ["evaluate", "--scenario", "nosuch", "--seeds", "1"])
    assert code == 2 and '"nosuch"' in err
    for preset in _core.preset_names():
        assert preset in err


def test_evaluate_reaches_gpuplace_evals_options(capsys, tmp_path):
    code, out, _ = _run(capsys, main, ["evaluate", "--policies", "pack", "--queue", "fifo,las", "--round", "600",
                                       "--restart-overhead", "30", "--action-mode", "placement", "--durations", "hidden",
                                       "--seeds", "1", "-q"])
    assert code == 0 and "pack+fifo" in out and "pack+las" in out and "avg_preemptions" in out
    trace = os.path.join(REPO, "data", "philly", "0e4a51.trace")
    code, out, _ = _run(capsys, main, ["evaluate", "--policies", "pack", "--trace", trace, "--format", "philly",
                                       "--episode-jobs", "5", "--seeds", "1", "-q"])
    assert code == 0 and "trace" in out and "pack" in out
    code, _, err = _run(capsys, main, ["evaluate", "--queue", "", "--seeds", "1"])
    assert code == 2 and "--queue ''" in err and "fifo" in err
    code, _, err = _run(capsys, main, ["evaluate", "--queue", "nosuch", "--policies", "pack", "--seeds", "1"])
    assert code == 2 and "nosuch" in err
    code, _, err = _run(capsys, main, ["evaluate", "--trace", trace, "--seeds", "1"])
    assert code == 2 and "--format" in err
    code, _, err = _run(capsys, main, ["evaluate", "--episode-jobs", "3"])
    assert code == 2 and "--episode-jobs needs --trace" in err


def test_bench_leaderboard_validates_and_ranks(capsys, tmp_path):
    for policy in ("pack+sjf", "random+fifo"):
        assert bench_main(["run", "--track", "cluster-16", "--policy", policy, "--out-dir", str(tmp_path), "--quiet",
                           "--threads", "1"]) == 0
    capsys.readouterr()
    code, out, _ = _run(capsys, bench_main, ["leaderboard", str(tmp_path), "--threads", "1"])
    assert code == 0 and "## cluster-16 (v1)" in out
    rows = [line for line in out.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert "`pack+sjf`" in rows[0] and "`random+fifo`" in rows[1]
    bad = tmp_path / "bad.json"
    d = json.loads((tmp_path / os.listdir(tmp_path)[0]).read_text())
    d["summary"]["avg_jct"]["mean"] *= 0.5
    bad.write_text(json.dumps(d))
    code, _, err = _run(capsys, bench_main, ["leaderboard", str(bad), "--threads", "1"])
    assert code == 2 and "bad.json" in err and "not a valid result" in err
    code, _, err = _run(capsys, bench_main, ["run", "--track", "cluster-16", "--policy", "pack", "--threads", "nan"])
    assert code == 2 and "'nan'" in err
