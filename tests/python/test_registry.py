"""The registry from Python: `python -m gpuplace info --list` prints everything that can be named,
by kind, from the C++ catalogue (gpuplace/registry.hpp) that `gpuplace-eval --list` prints too."""

import math
import subprocess
import sys

from gpuplace import _core


def test_the_registry_lists_every_kind():
    entries = _core.registry()
    kinds = {k for k, _, _ in entries}
    for kind in ("placer", "queue", "planner", "topology", "scenario", "workload", "trace_format", "model_mix", "comm_model",
                 "reward_term", "observation_feature", "job_field"):
        assert kind in kinds, kind
    assert ("placer", "pack_wait") in {(k, n) for k, n, _ in entries}
    assert all(about for _, _, about in entries)


def test_info_list_prints_them_by_kind():
    r = subprocess.run([sys.executable, "-m", "gpuplace", "info", "--list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("topology nvl72: ") for line in lines)
    assert any(line.startswith("placer topology_greedy: ") for line in lines)
    assert any(line.startswith("trace_format csv: ") for line in lines)


# ---- policies registered from Python (gpuplace.register_policy) ---------------------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gpuplace  # noqa: E402
from conftest import SMALL, run_cli  # noqa: E402
from gpuplace.cli import main as cli_main  # noqa: E402


def last_fit(env):
    """The highest-numbered GPU with room (DEFER when none)"""
    gpus = np.flatnonzero(env.action_mask[:-1])
    return int(gpus[-1]) if gpus.size else len(env.action_mask) - 1


gpuplace.register_policy("py_last_fit")(last_fit)


def by_hand(scenario, seeds):
    """Mean JCT of last_fit stepped from Python, seed by seed."""
    jcts = []
    for s in seeds:
        e = gpuplace.Env(scenario)
        e.reset(s)
        done = False
        while not done:
            _, term, trunc = e.step(last_fit(e))
            done = term or trunc
        jcts.append(e.metrics()["avg_jct"])
    return jcts


def test_a_python_policy_runs_in_the_harness_as_it_runs_by_hand():
    seeds = [1000000, 1000001, 1000002]
    rep = gpuplace.evaluate(SMALL, ["py_last_fit", "pack"], seeds)
    harness = [m["avg_jct"] for m in rep.per_seed("py_last_fit")]
    assert harness == by_hand(SMALL, seeds)  # bit for bit: the same policy, the same seeds
    assert harness != [m["avg_jct"] for m in rep.per_seed("pack")]
    # under a queue policy, and on threads
    rep = gpuplace.evaluate(SMALL, ["py_last_fit+sjf"], seeds, threads=2)
    assert len(rep.per_seed("py_last_fit+sjf")) == 3


def test_a_class_gets_one_instance_per_episode_and_its_seed():
    seen = []

    @gpuplace.register_policy("py_counting", about="first valid action, counting episodes")
    class Counting:
        def reset(self, seed):
            seen.append(seed)

        def act(self, env):
            return int(np.flatnonzero(env.action_mask)[0])

    assert gpuplace.registered_policies()["py_counting"] is Counting
    gpuplace.evaluate(SMALL, ["py_counting"], [1000000, 1000001])
    assert sorted(seen) == [1000000, 1000001]
    assert ("placer", "py_counting", "first valid action, counting episodes") in set(_core.registry())
    assert ("placer", "py_last_fit") in {(k, n) for k, n, _ in _core.registry()}


def test_a_rollout_planner_plays_a_python_policy():
    sc = dict(SMALL, env={"action_mode": "placement"})

    @gpuplace.register_policy("py_first_candidate")
    def first_candidate(env):
        return int(np.flatnonzero(env.action_mask)[0])

    rep = gpuplace.evaluate(sc, ["py_first_candidate", "rollout2:py_first_candidate"], [1000000])
    assert rep.per_seed("rollout2:py_first_candidate")[0]["jobs_done"] == 20


def test_registering_again_replaces_and_bad_registrations_say_why():
    gpuplace.register_policy("py_again")(lambda env: len(env.action_mask) - 1)  # DEFER only: never used below
    gpuplace.register_policy("py_again")(last_fit)  # a module imported again
    rep = gpuplace.evaluate(SMALL, ["py_again"], [1000000])
    assert rep.per_seed("py_again")[0]["avg_jct"] == by_hand(SMALL, [1000000])[0]
    with pytest.raises(gpuplace.ConfigError, match='"pack" is a built-in heuristic'):
        gpuplace.register_policy("pack")(last_fit)
    with pytest.raises(gpuplace.ConfigError, match=r"with '\+', ':' or ','"):
        gpuplace.register_policy("a+b")(last_fit)
    with pytest.raises(gpuplace.ConfigError, match="expected a class with act"):
        gpuplace.register_policy("py_nothing")(3)
    with pytest.raises(gpuplace.ConfigError, match="GPU-type rule fastest_type wraps a placer"):
        gpuplace.evaluate(SMALL, ["fastest_type:py_last_fit"], [1000000])


def test_a_python_policy_that_raises_or_acts_badly_is_named():
    @gpuplace.register_policy("py_raises")
    def raises(env):
        raise KeyError("no such thing")

    with pytest.raises(gpuplace.Error, match=r'policy "py_raises" \(registered from Python\): act\(env\) raised KeyError'):
        gpuplace.evaluate(SMALL, ["py_raises"], [1000000])

    @gpuplace.register_policy("py_not_an_action")
    def not_an_action(env):
        return "left"

    with pytest.raises(gpuplace.Error, match=r"py_not_an_action.*returned 'left', not an action"):
        gpuplace.evaluate(SMALL, ["py_not_an_action"], [1000000])


PLUGIN = '''
import numpy as np
import gpuplace

@gpuplace.register_policy("plugin_last_fit", about="the highest-numbered GPU with room (a plugin)")
def last_fit(env):
    gpus = np.flatnonzero(env.action_mask[:-1])
    return int(gpus[-1]) if gpus.size else len(env.action_mask) - 1
'''


def test_the_cli_takes_a_plugin_in_info_list_and_evaluate(tmp_path, capsys):
    plugin = tmp_path / "my_policies.py"
    plugin.write_text(PLUGIN)
    code, out, err = run_cli(capsys, cli_main, ["info", "--list", "--plugin", str(plugin)])
    assert code == 0, err
    assert "placer plugin_last_fit: the highest-numbered GPU with room (a plugin)" in out.splitlines()
    code, out, err = run_cli(capsys, cli_main, ["evaluate", "--scenario", "default", "--plugin", str(plugin), "--policies",
                                                "plugin_last_fit,pack", "--queue", "sjf", "--seeds", "2", "-q"])
    assert code == 0, err
    assert "plugin_last_fit+sjf" in out and "pack+sjf" in out
    code, out, err = run_cli(capsys, cli_main, ["evaluate", "--plugin", str(tmp_path / "nope.py"), "--seeds", "1"])
    assert code == 2 and "--plugin" in err and "nope.py" in err
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('broken plugin')\n")
    code, out, err = run_cli(capsys, cli_main, ["info", "--plugin", str(bad)])
    assert code == 2 and "bad.py" in err and "RuntimeError: broken plugin" in err


def test_the_benchmark_runs_and_validates_a_plugin_policy_by_name(tmp_path):
    plugin = tmp_path / "my_policies.py"
    plugin.write_text(PLUGIN)

    def bench_cli(*args):
        return subprocess.run([sys.executable, "-m", "gpuplace", "bench", *args], capture_output=True, text=True,
                              timeout=600)

    out = bench_cli("run", "--plugin", str(plugin), "--track", "proximity_drl", "--policy", "plugin_last_fit+fifo",
                    "--out-dir", str(tmp_path), "--quiet", "--hash-only")
    assert out.returncode == 0, out.stderr
    result = tmp_path / "proximity_drl__plugin_last_fit+fifo.json"
    assert result.is_file()
    out = bench_cli("validate", "--plugin", str(plugin), str(result))
    assert out.returncode == 0 and ": valid:" in out.stdout, out.stdout + out.stderr
    out = bench_cli("validate", str(result))  # without the plugin the name is unknown, and said so
    assert out.returncode != 0 and "plugin_last_fit" in out.stdout + out.stderr


# ---- disciplines registered from Python (gpuplace.register_discipline) ---------------------------

BUSY = {**SMALL, "workload": {**SMALL["workload"], "load": 1.5}}


def test_a_python_discipline_restating_las_plays_as_las_and_reads_its_view():
    seen = {"active": 0, "fields": None}

    @gpuplace.register_discipline("py_las", about="least attained service, in Python")
    def py_las(view, job):
        seen["active"] = max(seen["active"], view.active)
        seen["fields"] = job.fields
        assert view.num_gpus == 16 and job.gpus in (2, 4) and job.shown_duration > 0
        return job.attained

    try:
        assert ("queue", "py_las", "least attained service, in Python") in _core.registry()
        seeds = [1000000, 1000001]
        rep = gpuplace.evaluate(BUSY, ["pack+py_las", "pack+las"], seeds, threads=2)
        mine, las = rep.per_seed("pack+py_las"), rep.per_seed("pack+las")
        assert [m["avg_jct"] for m in mine] == [m["avg_jct"] for m in las]  # bit for bit
        assert sum(m["avg_preemptions"] for m in las) > 0
        assert seen["active"] > 1 and seen["fields"] == ()
        # by name in a scenario, with preemption on; a tuple priority
        gpuplace.register_discipline("py_las", about="again")(lambda view, job: (0, job.attained))  # replaced
        e = gpuplace.Env({**BUSY, "env": {"queue_policy": "py_las"}, "preemption": {"enabled": True}})
        e.reset(1000000)
        assert e.scenario()["env"]["queue_policy"] == "py_las"
    finally:
        gpuplace.unregister_discipline("py_las")
    assert not any(n == "py_las" for _, n, _ in _core.registry())


def test_a_python_discipline_that_raises_or_returns_badly_is_named():
    @gpuplace.register_discipline("py_bad_key")
    def bad(view, job):
        return "soon"

    try:
        with pytest.raises(gpuplace.Error, match=r"discipline \"py_bad_key\" \(registered from Python\): key\(view, job\) returned 'soon'"):
            gpuplace.evaluate(BUSY, ["pack+py_bad_key"], [1000000])
        with pytest.raises(gpuplace.ConfigError, match='"las" is a built-in queue policy'):
            gpuplace.register_discipline("las")(lambda view, job: 0)
    finally:
        gpuplace.unregister_discipline("py_bad_key")
    with pytest.raises(gpuplace.ConfigError, match=r'unknown queue policy "py_bad_key"'):
        gpuplace.evaluate(BUSY, ["pack+py_bad_key"], [1000000])


DISCIPLINE_PLUGIN = '''
import gpuplace

@gpuplace.register_discipline("plugin_oldest", about="the earliest submitted first (a plugin)")
def oldest(view, job):
    return job.submit_time
'''


def test_the_cli_takes_a_plugin_discipline_in_info_list_and_evaluate(tmp_path, capsys):
    plugin = tmp_path / "my_disciplines.py"
    plugin.write_text(DISCIPLINE_PLUGIN)
    try:
        code, out, err = run_cli(capsys, cli_main, ["info", "--list", "--plugin", str(plugin)])
        assert code == 0, err
        assert "queue plugin_oldest: the earliest submitted first (a plugin)" in out.splitlines()
        code, out, err = run_cli(capsys, cli_main, ["evaluate", "--scenario", "default", "--plugin", str(plugin), "--policies",
                                                    "pack", "--queue", "plugin_oldest,las", "--seeds", "2", "-q"])
        assert code == 0, err
        assert "pack+plugin_oldest" in out and "pack+las" in out
    finally:
        gpuplace.unregister_discipline("plugin_oldest")


# ---- workload kinds registered from Python (gpuplace.register_workload_kind) ----------------------


def test_a_python_workload_kind_makes_each_episodes_jobs_from_its_seed():
    import random

    calls = []

    @gpuplace.register_workload_kind("py_bursts", about="bursts of same-sized jobs, in Python")
    def bursts(options, num_gpus, seed):
        calls.append((options["kind"], num_gpus))
        rng = random.Random(seed)
        return [{"submit_time": 1200.0 * b, "num_gpus": options.get("gpus", 2), "model": rng.choice(["ResNet-50 (batch size 64)", 3]),
                 "duration": rng.uniform(600, 3600)} for b in range(options.get("bursts", 3)) for _ in range(4)]

    try:
        assert ("workload", "py_bursts", "bursts of same-sized jobs, in Python") in _core.registry()
        sc = {**SMALL, "workload": {"kind": "py_bursts", "bursts": 5, "gpus": 4}}
        rep = gpuplace.evaluate(sc, ["pack", "pack+sjf"], [1000000, 1000001])
        assert [m["jobs_total"] for m in rep.per_seed("pack")] == [20, 20]
        assert calls[0] == ("py_bursts", 16)
        again = gpuplace.evaluate(sc, ["pack", "pack+sjf"], [1000000, 1000001])
        assert [m["avg_jct"] for m in again.per_seed("pack")] == [m["avg_jct"] for m in rep.per_seed("pack")]  # by seed
        e = gpuplace.Env(sc)
        e.reset(7)
        assert e.scenario()["workload"]["kind"] == "py_bursts" and e.scenario()["workload"]["bursts"] == 5
    finally:
        gpuplace.unregister_workload_kind("py_bursts")
    assert not any(n == "py_bursts" for _, n, _ in _core.registry())
    with pytest.raises(gpuplace.ConfigError, match='unknown workload kind "py_bursts"'):
        gpuplace.Env({**SMALL, "workload": {"kind": "py_bursts"}})


def test_a_python_workload_kinds_bad_jobs_are_named():
    @gpuplace.register_workload_kind("py_bad_jobs")
    def bad(options, num_gpus, seed):
        """jobs with a mistake chosen by the options"""
        job = {"submit_time": 0.0, "num_gpus": 2, "model": "ResNet-50 (batch size 64)", "work": 100.0}
        if options["mistake"] == "raise":
            raise ValueError("no jobs today")
        if options["mistake"] == "key":
            return [job, {**job, "gpus": 2}]
        if options["mistake"] == "model":
            return [{**job, "model": "GPT-9"}]
        if options["mistake"] == "both":
            return [{**job, "duration": 60.0}]
        return "jobs"

    try:
        assert ("workload", "py_bad_jobs", "jobs with a mistake chosen by the options (Python)") in _core.registry()
        cases = {"key": r'job 1: unknown key "gpus" \(allowed: submit_time, num_gpus, model, work or duration, gpu_fraction\)',
                 "model": r'job 0: model zoo: unknown model "GPT-9"',
                 "both": r'job 0: give "work" \(training steps\) or "duration" \(seconds\), exactly one',
                 "text": r"generate\(\) returned 'jobs', not a list of jobs"}
        for mistake, msg in cases.items():
            e = gpuplace.Env({**SMALL, "workload": {"kind": "py_bad_jobs", "mistake": mistake}})
            with pytest.raises(gpuplace.ConfigError, match=r'workload kind "py_bad_jobs" \(registered from Python\): ' + msg):
                e.reset(1)
        e = gpuplace.Env({**SMALL, "workload": {"kind": "py_bad_jobs", "mistake": "raise"}})
        with pytest.raises(gpuplace.Error, match=r"generate\(options, num_gpus, seed\) raised ValueError: no jobs today"):
            e.reset(1)
        with pytest.raises(gpuplace.ConfigError, match='"synthetic" is a built-in kind'):
            gpuplace.register_workload_kind("synthetic")(bad)
    finally:
        gpuplace.unregister_workload_kind("py_bad_jobs")


# ---- reward terms registered from Python (gpuplace.register_reward_term) --------------------------


def test_a_python_reward_term_adds_its_weighted_value_for_each_finished_job():
    @gpuplace.register_reward_term("py_late_hours", about="-hours past twice the ideal duration, in Python")
    def late_hours(job, view):
        assert view["num_gpus"] == 16 and view["now"] == job["end"]
        return -max(0.0, job["end"] - job["submit"] - 2 * job["ideal_duration"]) / view["time_scale"]

    try:
        assert ("reward_term", "py_late_hours", "-hours past twice the ideal duration, in Python") in _core.registry()
        sc = {**BUSY, "reward": {"jct": 0, "py_late_hours": 0.5}}
        env = gpuplace.GymnasiumEnv(sc)
        env.reset(seed=3)
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            _, r, term, trunc, _ = env.step(int(np.flatnonzero(mask)[0]))
            total += r
            done = term or trunc
        jobs = env.unwrapped.core.finished_jobs()
        want = sum(-0.5 * max(0.0, e - s - 2 * i) / 3600 for e, s, i in zip(jobs["end"], jobs["submit"], jobs["ideal_duration"]))
        assert want < 0 and total == pytest.approx(want, rel=1e-9)
    finally:
        gpuplace.unregister_reward_term("py_late_hours")
    with pytest.raises(gpuplace.ConfigError, match=r'config /reward/py_late_hours: unknown key "py_late_hours"'):
        gpuplace.GymnasiumEnv({**BUSY, "reward": {"py_late_hours": 1}})


def test_a_python_reward_term_that_returns_badly_is_named():
    @gpuplace.register_reward_term("py_bad_term")
    def bad(job, view):
        """a term that returns text"""
        return "late"

    try:
        env = gpuplace.Env({**BUSY, "reward": {"py_bad_term": 1}})
        env.reset(1)
        with pytest.raises(gpuplace.Error, match=r'reward term "py_bad_term" \(registered from Python\): term\(job, view\) returned '
                                                 r"'late', not a number"):
            while True:
                env.step(int(np.flatnonzero(env.action_mask)[0]))
        with pytest.raises(gpuplace.ConfigError, match='"wasted" is a built-in reward key'):
            gpuplace.register_reward_term("wasted")(bad)
    finally:
        gpuplace.unregister_reward_term("py_bad_term")


# ---- scenarios registered by name (gpuplace.register_scenario) ------------------------------------


def test_a_registered_scenario_is_named_wherever_a_presets_is():
    gpuplace.register_scenario("py_small", {**SMALL, "workload": {**SMALL["workload"], "num_jobs": 9}}, about="a small cluster")
    try:
        assert ("scenario", "py_small", "a small cluster") in _core.registry()
        env = gpuplace.GymnasiumEnv("py_small")
        assert env.unwrapped.scenario["name"] == "py_small"
        rep = gpuplace.evaluate("py_small", ["pack"], [1000000])
        assert rep.per_seed("pack")[0]["jobs_total"] == 9
        with pytest.raises(gpuplace.ConfigError, match='scenario "default" is a preset'):
            gpuplace.register_scenario("default", SMALL)
        gpuplace.register_scenario("py_small", SMALL)  # replaced from Python
        assert gpuplace.evaluate("py_small", ["pack"], [1000000]).per_seed("pack")[0]["jobs_total"] == 20
    finally:
        gpuplace.unregister_scenario("py_small")
    assert not any(n == "py_small" for _, n, _ in _core.registry())


LANGUAGE_PLUGIN = '''
import gpuplace

@gpuplace.register_workload_kind("plugin_waves", about="waves of 1-GPU jobs (a plugin)")
def waves(options, num_gpus, seed):
    return [{"submit_time": 600.0 * w, "num_gpus": 1, "model": 0, "duration": 1800.0}
            for w in range(options.get("waves", 3)) for _ in range(num_gpus)]

@gpuplace.register_reward_term("plugin_slow", about="-slowdown above 1 (a plugin)")
def slow(job, view):
    return 1.0 - job["slowdown"]

gpuplace.register_scenario("plugin_small", {"topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 1},
                                            "workload": {"kind": "plugin_waves", "waves": 2},
                                            "reward": {"plugin_slow": 0.1}}, about="two waves on 8 GPUs (a plugin)")
'''


def test_the_cli_takes_a_plugins_workload_kind_reward_term_and_scenario(tmp_path, capsys):
    plugin = tmp_path / "my_language.py"
    plugin.write_text(LANGUAGE_PLUGIN)
    try:
        code, out, err = run_cli(capsys, cli_main, ["info", "--list", "--plugin", str(plugin)])
        assert code == 0, err
        lines = out.splitlines()
        for line in ("workload plugin_waves: waves of 1-GPU jobs (a plugin)", "reward_term plugin_slow: -slowdown above 1 (a plugin)",
                     "scenario plugin_small: two waves on 8 GPUs (a plugin)"):
            assert line in lines
        code, out, err = run_cli(capsys, cli_main, ["evaluate", "--plugin", str(plugin), "--scenario", "plugin_small",
                                                    "--policies", "pack", "--seeds", "1", "--json", str(tmp_path / "r.json"), "-q"])
        assert code == 0, err
        import json as _json
        assert _json.loads((tmp_path / "r.json").read_text())["policies"]["pack"]["per_seed"][0]["jobs_total"] == 16
    finally:
        gpuplace.unregister_scenario("plugin_small")
        gpuplace.unregister_reward_term("plugin_slow")
        gpuplace.unregister_workload_kind("plugin_waves")


# ---- trace formats registered from Python (gpuplace.register_trace_format) ------------------------


def test_a_python_trace_format_reads_a_file_with_its_declared_fields(tmp_path):
    @gpuplace.register_trace_format("py_ssv", about="submit gpus seconds team, space-separated (Python)")
    def read_ssv(text, source, fields):
        assert fields == ["team", "priority"]
        jobs = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            submit, gpus, seconds, team = line.split()
            jobs.append({"submit_time": float(submit), "num_gpus": int(gpus), "model": 0, "duration": float(seconds),
                         "team": team, **({"priority": 2.0} if team == "b" else {})})
        return jobs

    path = tmp_path / "jobs.ssv"
    path.write_text("# submit gpus seconds team\n100 2 600 a\n40 1 7200 b\n250 4 1800 a\n")
    sc = {"topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
          "job_fields": [{"name": "team", "type": "category"}, {"name": "priority", "default": 1}],
          "workload": {"kind": "trace", "format": "py_ssv", "path": str(path)}}
    try:
        assert ("trace_format", "py_ssv", "submit gpus seconds team, space-separated (Python)") in _core.registry()
        env = gpuplace.Env(sc)
        env.reset(1)
        assert env.scenario()["workload"]["format"] == "py_ssv"
        rep = gpuplace.evaluate(sc, ["pack"], [1000000])
        assert rep.per_seed("pack")[0]["jobs_total"] == 3
        while not env.done:
            env.step(int(np.flatnonzero(env.action_mask)[0]))
        f = env.finished_jobs()["fields"]
        by_submit = sorted(zip(env.finished_jobs()["submit"], f["team"], f["priority"]))
        assert [(t, p) for _, t, p in by_submit] == [("b", 2.0), ("a", 1.0), ("a", 1.0)]  # sorted by submit, the default applied
        path.write_text("100 2 600 a\n40 one 7200 b\n")
        with pytest.raises(gpuplace.Error, match=r'trace format "py_ssv" \(registered from Python\), .*jobs.ssv: read\(text, source, '
                                                 r"fields\) raised ValueError"):
            gpuplace.Env(sc)
    finally:
        gpuplace.unregister_trace_format("py_ssv")


def test_a_python_trace_formats_bad_job_is_a_trace_error_naming_it(tmp_path):
    @gpuplace.register_trace_format("py_bad_rows")
    def bad(text, source, fields):
        """a reader that gives a job without GPUs"""
        return [{"submit_time": 0.0, "model": 0, "work": 10.0}]

    path = tmp_path / "any.txt"
    path.write_text("x\n")
    try:
        with pytest.raises(gpuplace.TraceError, match=r'trace format "py_bad_rows" \(registered from Python\), .*any.txt: job 0: '
                                                      r'missing "num_gpus"'):
            gpuplace.Env({"workload": {"kind": "trace", "format": "py_bad_rows", "path": str(path)}})
        with pytest.raises(gpuplace.ConfigError, match='"csv" is a built-in format'):
            gpuplace.register_trace_format("csv")(bad)
    finally:
        gpuplace.unregister_trace_format("py_bad_rows")


# ---- topologies, comm models and observation features of one's own ----------------------------


PODS = [{"name": "board", "fanout": 4, "bandwidth": 200, "latency": 1e-6},
        {"name": "shelf", "fanout": 2, "bandwidth": 50, "latency": 3e-6},
        {"name": "pod", "fanout": 2, "bandwidth": 25, "latency": 5e-6},
        {"name": "spine", "fanout": 2, "bandwidth": 10, "latency": 1e-5}]


def test_a_python_topology_is_a_preset_with_its_parameters():
    gpuplace.register_topology("py_pods", PODS, about="boards in shelves in pods", parameters={"pods": "spine"})
    try:
        assert ("topology", "py_pods", "boards in shelves in pods; parameters: pods (spine fan-out)") in _core.registry()
        env = gpuplace.Env({**SMALL, "comm": {"model": "ring_allreduce"}, "topology": {"preset": "py_pods", "pods": 3}})
        assert env.num_gpus == 4 * 2 * 2 * 3
        with pytest.raises(gpuplace.ConfigError, match=r'config /topology/racks: unknown key "racks" for preset "py_pods" '
                                                       r'\(allowed: preset, pods, board_bandwidth'):
            gpuplace.Env({**SMALL, "topology": {"preset": "py_pods", "racks": 3}})
        with pytest.raises(gpuplace.ConfigError, match='topology "nvl72" is a built-in preset'):
            gpuplace.register_topology("nvl72", PODS)
        with pytest.raises(gpuplace.ConfigError, match=r'topology "py_bad" config /parameters/n: expected the name of the level'):
            gpuplace.register_topology("py_bad", PODS, parameters={"n": "rack"})
        gpuplace.register_topology("py_pods", PODS[:2])  # replaced from Python
        assert gpuplace.Env({**SMALL, "comm": {"model": "ring_allreduce"}, "topology": {"preset": "py_pods"}}).num_gpus == 8
    finally:
        gpuplace.unregister_topology("py_pods")
    assert not any(n == "py_pods" for _, n, _ in _core.registry())


def test_a_python_comm_model_prices_every_job_start():
    seen = []

    @gpuplace.register_comm_model("py_hops", about="5% slower per level crossed above the node, in Python")
    def hops(model, gpus, view):
        assert list(gpus) == sorted(gpus) and view["levels"] == ["node", "rack", "spine"]
        assert view["domains"][-1] == 1 and view["domains"][0] >= 1
        seen.append(len(gpus))
        return 1.0 + 0.05 * max(0, view["link"] - 1)

    try:
        assert ("comm_model", "py_hops", "5% slower per level crossed above the node, in Python") in _core.registry()
        sc = {**BUSY, "comm": {"model": "py_hops"}}
        rep = gpuplace.evaluate(sc, ["random"], [3])
        assert seen and rep.per_seed("random")[0]["jobs_total"] == 20
        env = gpuplace.Env(sc)
        env.reset(3)
        while not env.done:
            env.step(int(np.flatnonzero(env.action_mask)[-1]))
        jobs = env.finished_jobs()
        assert set(np.round(jobs["slowdown"], 9)) <= {1.0, 1.05, 1.1}
        assert np.allclose(jobs["comm_cost"], jobs["slowdown"] - 1)
    finally:
        gpuplace.unregister_comm_model("py_hops")
    with pytest.raises(gpuplace.ConfigError, match=r'config /comm/model: unknown model "py_hops" \(allowed: ring_allreduce, tree_route\)'):
        gpuplace.Env({**BUSY, "comm": {"model": "py_hops"}})

    @gpuplace.register_comm_model("py_bad_comm")
    def bad(model, gpus, view):
        if len(gpus) > 1:
            raise ValueError("too many GPUs")
        return 1.0

    try:
        env = gpuplace.Env({**BUSY, "comm": {"model": "py_bad_comm"}})
        env.reset(1)
        with pytest.raises(gpuplace.Error, match=r'comm model "py_bad_comm" \(registered from Python\): slowdown\(model, gpus, view\) '
                                                 r'raised ValueError: too many GPUs'):
            while not env.done:
                env.step(int(np.flatnonzero(env.action_mask)[0]))
        with pytest.raises(gpuplace.ConfigError, match='comm model "tree_route" is a built-in model'):
            gpuplace.register_comm_model("tree_route")(bad)
    finally:
        gpuplace.unregister_comm_model("py_bad_comm")


def test_a_python_observation_feature_is_a_computed_observed_job_field():
    @gpuplace.register_observation_feature("py_log_work", about="log10 of 1 + steps", range=(0, 8))
    def log_work(job):
        assert set(job) == {"submit_time", "num_gpus", "model", "work", "gpu_fraction", "fields"}
        return math.log10(1 + job["work"])

    try:
        assert ("observation_feature", "py_log_work", "log10 of 1 + steps") in _core.registry()
        env = gpuplace.Env({**BUSY, "job_fields": ["py_log_work"]})
        seg = next(s for s in env.observation_layout if s["name"] == "job_fields")
        assert seg["fields"][0] == "py_log_work"
        env.reset(2)
        checked = 0
        while not env.done:
            cur = env.current_job()
            want = math.log10(1 + cur["work"])
            assert cur["fields"]["py_log_work"] == pytest.approx(want, rel=1e-12)
            assert env.observation[seg["offset"]] == pytest.approx(min(1.0, want / 8), rel=1e-6)
            checked += 1
            env.step(int(np.flatnonzero(env.action_mask)[0]))
        assert checked > 0
        with pytest.raises(gpuplace.ConfigError, match="is a job key or a known job field"):
            gpuplace.register_observation_feature("priority")(log_work)
    finally:
        gpuplace.unregister_observation_feature("py_log_work")

    @gpuplace.register_observation_feature("py_bad_feature")
    def bad(job):
        return "big"

    try:
        env = gpuplace.Env({**BUSY, "job_fields": ["py_bad_feature"]})
        with pytest.raises(gpuplace.Error, match=r"observation feature \"py_bad_feature\" \(registered from Python\): feature\(job\) "
                                                 r"returned 'big', not a number"):
            env.reset(1)
    finally:
        gpuplace.unregister_observation_feature("py_bad_feature")


EXTENSIONS_PLUGIN = '''
import math
import gpuplace

gpuplace.register_topology("plugin_pods", [
    {"name": "board", "fanout": 4, "bandwidth": 200}, {"name": "shelf", "fanout": 2, "bandwidth": 50},
    {"name": "pod", "fanout": 2, "bandwidth": 25}, {"name": "spine", "fanout": 2, "bandwidth": 10}],
    about="boards, shelves and pods (a plugin)")

@gpuplace.register_comm_model("plugin_hops", about="5% per level crossed (a plugin)")
def hops(model, gpus, view):
    return 1.0 + 0.05 * max(0, view["link"] - 1)

@gpuplace.register_observation_feature("plugin_log_work", about="log10 of 1 + steps (a plugin)", range=(0, 8))
def log_work(job):
    return math.log10(1 + job["work"])

gpuplace.register_scenario("plugin_pods_small", {"topology": {"preset": "plugin_pods"}, "comm": {"model": "plugin_hops"},
                                                 "job_fields": ["plugin_log_work"],
                                                 "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.2,
                                                              "gpu_counts": {"1": 0.5, "4": 0.5}}},
                           about="a plugin's topology, comm model and feature")
'''


def test_the_cli_takes_a_plugins_topology_comm_model_and_feature(tmp_path, capsys):
    plugin = tmp_path / "my_extensions.py"
    plugin.write_text(EXTENSIONS_PLUGIN)
    try:
        code, out, err = run_cli(capsys, cli_main, ["info", "--list", "--plugin", str(plugin)])
        assert code == 0, err
        lines = out.splitlines()
        for line in ("topology plugin_pods: boards, shelves and pods (a plugin)", "comm_model plugin_hops: 5% per level crossed (a plugin)",
                     "observation_feature plugin_log_work: log10 of 1 + steps (a plugin)"):
            assert line in lines
        code, out, err = run_cli(capsys, cli_main, ["evaluate", "--plugin", str(plugin), "--scenario", "plugin_pods_small",
                                                    "--policies", "pack", "--seeds", "1", "--json", str(tmp_path / "r.json"), "-q"])
        assert code == 0, err
        import json as _json
        assert _json.loads((tmp_path / "r.json").read_text())["policies"]["pack"]["per_seed"][0]["jobs_total"] == 12
    finally:
        gpuplace.unregister_scenario("plugin_pods_small")
        gpuplace.unregister_observation_feature("plugin_log_work")
        gpuplace.unregister_comm_model("plugin_hops")
        gpuplace.unregister_topology("plugin_pods")
