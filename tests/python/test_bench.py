"""The benchmark from Python (gpuplace.bench, docs/bench.md): the same result file bit for bit as
gpuplace-bench's, validation, a Python callable policy and the command line."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuplace import _core, bench

REPO = Path(__file__).resolve().parents[2]
TRACK = "proximity_drl"  # the cheapest track: 32 GPUs, 30 jobs per episode


def _bench_program() -> str | None:
    """gpuplace-bench: $GPUPLACE_BENCH, else the one in build/ (scripts/test.sh builds it)."""
    for p in (os.environ.get("GPUPLACE_BENCH"), REPO / "build" / "apps" / "gpuplace-bench"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def _without_timing(text: str) -> str:
    """A result file's text without its "timing" member (wall time: the one part that differs)."""
    out, n = re.subn(r'\n "timing": \{\n(?:  .*\n)*? \},?', "", text)
    assert n == 1, text[:200]
    return out


@pytest.mark.parametrize("track,policy,how", [(TRACK, "first_fit+backfill", "valid: 50 episodes re-run"),
                                              ("steady-1.2", "first_fit+backfill", "valid: 30 episodes re-run"),
                                              ("placement-proximity_drl", "hindsight:pack+sjf", "valid: 50 episodes replayed")])
def test_same_result_file_as_the_cpp_program(tmp_path, track, policy, how):
    program = _bench_program()
    if program is None:
        pytest.skip("no gpuplace-bench program (build it, or set GPUPLACE_BENCH to its path)")
    cpp, py = tmp_path / "cpp.json", tmp_path / "py.json"
    env = dict(os.environ, GPUPLACE_COMMIT="abc123")
    subprocess.run([program, "run", "--track", track, "--policy", policy, "--out", str(cpp), "--quiet",
                    "--threads", "1"], check=True, env=env, capture_output=True)
    r = bench.run(track, policy, threads=2, commit="abc123")
    r.save(py)
    a, b = cpp.read_text(), py.read_text()
    assert _without_timing(a) == _without_timing(b)  # bit for bit: metrics, summary, hashes, actions
    assert json.loads(b)["commit"] == "abc123"
    # each validates the other's
    out = subprocess.run([program, "validate", str(py), "--quiet"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert how in out.stdout
    assert bench.validate(cpp)[0]


def test_validate_accepts_a_fresh_result_and_rejects_edits(tmp_path):
    r = bench.run(TRACK, "pack+fifo")
    ok, how, msg = bench.validate(r.text)
    assert ok and how == "re-run", msg
    data = r.data
    assert data["track"]["name"] == TRACK and data["track"]["version"] == "v1"
    assert data["policy"] == {"name": "pack+fifo", "kind": "heuristic", "queue": "fifo"}
    assert len(data["episodes"]) == 50
    assert set(data["summary"]) >= {"avg_jct", "p50_jct", "p95_jct", "p99_jct", "avg_queueing_delay", "p99_queueing_delay",
                                    "makespan", "utilization", "avg_comm_cost", "avg_fairness"}
    assert data["timing"]["decisions"] == sum(e["steps"] for e in data["episodes"])

    edited = json.loads(r.text)
    edited["episodes"][7]["metrics"]["p99_jct"] += 1.0
    ok, _, msg = bench.validate(json.dumps(edited))
    assert not ok and "/episodes/7/metrics/p99_jct" in msg

    edited = json.loads(r.text)
    acts = edited["episodes"][0]["actions"].split()
    acts[-1], acts[-2] = acts[-2], acts[-1]
    edited["episodes"][0]["actions"] = " ".join(acts)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edited))
    ok, _, msg = bench.validate(path)
    assert not ok and "/episodes/0/actions" in msg


def test_python_callable_policy_is_replayed_and_validates():
    def lowest_valid(obs, mask):
        return int(np.flatnonzero(mask)[0])

    r = bench.run(TRACK, lowest_valid, name="lowest_valid")
    data = r.data
    assert data["policy"]["kind"] == "python" and data["policy"]["name"] == "lowest_valid"
    assert all(e["actions"] for e in data["episodes"])
    ok, how, msg = bench.validate(r.text)
    assert ok and how == "replayed", msg
    # the same actions scored again: the same result, timing aside
    again = bench.run(TRACK, lowest_valid, name="lowest_valid")
    assert _without_timing(again.text) == _without_timing(r.text)
    with pytest.raises(ValueError, match="keeps its actions"):
        bench.run(TRACK, lowest_valid, keep_actions=False)


def test_command_line(tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "gpuplace", "bench", *args], capture_output=True, text=True)

    out = cli("tracks")
    assert out.returncode == 0 and re.search(r"^philly_hidden-0e4a51 +v1", out.stdout, re.M)
    out = cli("run", "--track", "nope", "--policy", "pack+sjf")
    assert out.returncode == 2 and 'unknown benchmark track "nope" (v1 tracks: default, proximity_drl,' in out.stderr
    out = cli("run", "--track", TRACK, "--policy", "random+fifo,pack+fifo", "--out-dir", str(tmp_path), "--quiet",
              "--hash-only")
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"{TRACK}__pack+fifo.json", f"{TRACK}__random+fifo.json"]
    assert "actions" not in json.loads((tmp_path / files[0]).read_text())["episodes"][0]
    out = cli("validate", *(str(tmp_path / f) for f in files))
    assert out.returncode == 0 and out.stdout.count(": valid:") == 2, out.stdout + out.stderr


def test_yardstick_from_python_ranks_as_the_track_records(capsys):
    best = next(t["best_heuristic"] for t in bench.tracks() if t["name"] == TRACK)
    rows = bench.yardstick(TRACK, threads=1)
    assert rows[0][0] == best and [j for _, j in rows] == sorted(j for _, j in rows) and len(rows) >= 24
    assert bench.main(["yardstick", "--track", TRACK, "--check", "--quiet", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert f"best: {best} ({TRACK} v1 records {best})" in out and "<- the track's best heuristic" in out
    assert bench.main(["yardstick", "--track", "nope"]) == 2
    assert 'unknown benchmark track "nope"' in capsys.readouterr().err


def test_submit_from_python_validates_adds_and_regenerates(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / "bench" / "results").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "leaderboard.py").write_text(
        "import pathlib, sys; pathlib.Path(sys.argv[0]).with_name('ran').write_text('yes')\n")
    mine = tmp_path / "mine.json"
    bench.run(TRACK, "pack+sjf", threads=1).save(str(mine))
    assert bench.main(["submit", str(mine), "--repo", str(repo), "--threads", "1"]) == 0
    dest = repo / "bench" / "results" / f"{TRACK}__pack+sjf.json"
    assert dest.read_text() == mine.read_text() and (repo / "scripts" / "ran").read_text() == "yes"
    assert f"submitted as {dest}" in capsys.readouterr().out
    assert bench.main(["submit", str(mine), "--repo", str(repo)]) == 2  # exists: --overwrite replaces it
    assert f"submit: {dest} exists (--overwrite replaces it)" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    edited = json.loads(mine.read_text())
    edited["episodes"][3]["metrics"]["p99_jct"] += 1.0
    bad.write_text(json.dumps(edited))
    assert bench.main(["submit", str(bad), "--repo", str(repo), "--overwrite"]) == 2
    assert f"submit: {bad} is not valid, nothing submitted" in capsys.readouterr().err

    def lowest_valid(obs, mask):
        return int(np.flatnonzero(mask)[0])

    py = tmp_path / "py.json"
    bench.run(TRACK, lowest_valid, name="lowest_valid").save(str(py))
    with pytest.raises(ValueError, match='a python policy\'s result needs the commands that reproduce it'):
        bench.submit(py, repo, regenerate=False)
    bench.submit(py, repo, command="python -m gpuplace bench run --track x --callable m:f", regenerate=False)
    commands = json.loads((repo / "bench" / "commands.json").read_text())
    assert commands == {f"{TRACK}__lowest_valid.json": "python -m gpuplace bench run --track x --callable m:f"}


def test_every_leaderboard_result_validates_and_every_track_is_documented():
    results = sorted((REPO / "bench" / "results").glob("*.json"))
    assert results, "bench/results/ holds no result (docs/bench.md)"
    for path in results:
        ok, how, msg = bench.validate(path)
        assert ok, f"{path.name}: {msg}"
        if json.loads(path.read_text())["policy"]["kind"] == "heuristic":
            assert how == "re-run", msg  # a shipped model may replay: its network rounds differently per CPU variant
    doc = (REPO / "docs" / "bench.md").read_text()
    for t in bench.tracks():
        stem = t["name"].rsplit("-", 1)[0] if t["name"].startswith(("philly", "load", "steady", "placement-philly")) else t["name"]
        assert f"`{stem}" in doc, f"docs/bench.md does not list track {t['name']}"
    board = (REPO / "docs" / "leaderboard.md").read_text()
    assert "Generated by scripts/leaderboard.py" in board
    assert len(results) == board.count("](../bench/results/"), "docs/leaderboard.md is out of date: run scripts/leaderboard.py"


def test_the_leaderboard_gives_every_row_its_command_and_labels_what_is_not_causal():
    board = (REPO / "docs" / "leaderboard.md").read_text()
    rows = [line for line in board.splitlines() if "](../bench/results/" in line]
    for section in board.split("\n## ")[1:]:  # as many numbered commands as rows in each track's table
        n_rows = section.count("](../bench/results/")
        assert len(re.findall(r"^\d+\. `", section, re.M)) == n_rows, section[:200]
    kinds = {json.loads(p.read_text())["policy"]["kind"] for p in (REPO / "bench" / "results").glob("*.json")}
    assert {"heuristic", "model", "planner", "python"} <= kinds  # heuristics, the shipped PPO, planners, SB3
    hindsight = [line for line in rows if "`hindsight:" in line]
    assert hindsight and all("**NOT causal**" in line for line in hindsight)
    assert not any("**NOT causal**" in line for line in rows if "`hindsight:" not in line)
    commands = json.loads((REPO / "bench" / "commands.json").read_text())
    for name, command in commands.items():
        assert (REPO / "bench" / "results" / name).is_file(), f"bench/commands.json names {name}, which is not a result"
        assert "python -m gpuplace bench run" in command


def test_bench_commands_use_the_current_spellings(capsys):
    """bench/commands.json (and so the leaderboard's numbered commands) parse without a deprecation
    note: no renamed option (--timesteps, --eval-seeds, ...) in them."""
    import shlex

    from gpuplace.cli import build_parser

    commands = json.loads((REPO / "bench" / "commands.json").read_text())
    for name, command in commands.items():
        for part in command.split(" && "):
            words = shlex.split(part)
            assert words[:3] == ["python", "-m", "gpuplace"], part
            build_parser().parse_args(words[3:])
            err = capsys.readouterr().err
            assert "deprecated" not in err, f"bench/commands.json {name}: {part}: {err}"
    board = (REPO / "docs" / "leaderboard.md").read_text()
    assert "--timesteps" not in board and "--eval-seeds" not in board


def test_planners_by_name_from_python():
    r = bench.run("placement-proximity_drl", "hindsight:pack+sjf")
    data = r.data
    assert data["policy"] == {"name": "hindsight:pack+sjf", "kind": "planner", "queue": "sjf", "causal": False}
    assert "(NOT causal)" in r.row
    ok, how, msg = bench.validate(r.text)
    assert ok and how == "replayed" and "--rerun-planners" in msg, msg
    ok, how, msg = bench.validate(r.text, rerun_planners=True)
    assert ok and how == "re-run", msg
    with pytest.raises(_core.ConfigError, match="placement or job action mode"):
        bench.run(TRACK, "rollout:pack+sjf")  # the GPU mode offers no candidates to plan over


def test_steady_state_tracks_score_their_window():
    t = {t["name"]: t for t in bench.tracks()}
    assert t["steady-1.5"]["window"] == (160, 320) and t["default"]["window"] is None
    data = bench.run("steady-0.5", "pack+sjf", keep_actions=False).data
    assert data["track"]["window"] == {"first_job": 160, "end_job": 320}
    assert all(e["metrics"]["jobs_total"] == 160 and e["metrics"]["jobs_done"] == 160 for e in data["episodes"])


def test_rllib_checkpoint_scored_by_path(tmp_path):
    """A tiny RLlib PPO (2 iterations) saved, then scored by its checkpoint's path and validated."""
    pytest.importorskip("ray.rllib")
    import ray

    from gpuplace.rllib import train

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        run_ = train(TRACK, iterations=2, out=str(tmp_path / "rl"), num_env_runners=0, num_envs_per_env_runner=2, seed=1,
                     hyperparameters={"train_batch_size": 128, "minibatch_size": 64, "n_epochs": 1})
        run_["algo"].stop()
    finally:
        ray.shutdown()
    ckpt = run_["checkpoint"]
    out = tmp_path / "r.json"
    assert bench.main(["run", "--track", TRACK, "--rllib", ckpt, "--out", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    assert data["policy"] == {"name": "rllib:checkpoint", "kind": "python", "queue": "backfill"}  # its scenario's
    assert len(data["episodes"]) == 50 and all(e["actions"] for e in data["episodes"])
    ok, how, msg = bench.validate(out)
    assert ok and how == "replayed", msg
    # the module's own folder scores the same actions; a track whose observations it cannot read is refused
    act, queue = bench.rllib_policy(os.path.join(ckpt, "learner_group", "learner", "rl_module", "default_policy"))
    assert queue is None
    again = bench.run(TRACK, act, name="rllib:checkpoint", queue="backfill")
    assert _without_timing(again.text) == _without_timing(out.read_text())
    with pytest.raises(_core.ConfigError):
        bench.run("cluster-16", act, name="tiny")
    with pytest.raises(FileNotFoundError, match="not an RLlib checkpoint"):
        bench.rllib_policy(tmp_path)


def test_sb3_model_scored_from_its_zip(tmp_path):
    pytest.importorskip("sb3_contrib")
    import gpuplace
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", gpuplace.GymnasiumEnv(TRACK), n_steps=64, batch_size=64, seed=0, device="cpu")
    path = tmp_path / "tiny.zip"
    model.save(path)
    out = subprocess.run([sys.executable, "-m", "gpuplace", "bench", "run", "--track", TRACK, "--sb3", str(path),
                          "--out", str(tmp_path / "r.json"), "--quiet"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["policy"]["name"] == "maskable_ppo:tiny.zip" and data["policy"]["kind"] == "python"
    ok, how, msg = bench.validate(tmp_path / "r.json")
    assert ok and how == "replayed", msg
    # a model built for another cluster is refused before any episode
    act, _ = bench.sb3_policy(path)
    with pytest.raises(ValueError):
        bench.run("cluster-16", act, name="tiny")


def test_a_track_of_ones_own_from_python(tmp_path, capsys):
    out = tmp_path / "own.json"
    assert bench.main(["run", "--scenario", "proximity_drl", "--policy", "pack+sjf", "--episodes", "2", "--out", str(out),
                       "--threads", "1"]) == 0
    data = json.loads(out.read_text())
    assert data["track"]["version"] == "scenario" and len(data["episodes"]) == 2
    ok, how, msg = bench.validate(out)
    assert ok and how == "re-run", msg
    # a trace that cannot fill the episodes asked: said with its real count, as gpuplace-bench says it
    trace = tmp_path / "two.csv"
    trace.write_text("submit_time,num_gpus,duration\n0,1,60\n10,1,60\n")
    sc = {"name": "short_trace", "workload": {"kind": "trace", "format": "csv", "path": str(trace), "episode_jobs": 50}}
    with pytest.warns(UserWarning, match=r"has 2 jobs \(after the trace options\), fewer than the 50 jobs per episode"):
        bench.run_scenario(sc, "pack", episodes=1, threads=1)
    assert bench.main(["run", "--scenario", "proximity_drl", "--sb3", "m.zip"]) == 2
    assert "policies by name (--policy) on the scenario only" in capsys.readouterr().err
