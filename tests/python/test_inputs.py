"""Every bad input of the Python API and the command line gets a clear gpuplace error naming the
value and where it came from, before any work starts, and leaves state intact; inputs that are
legal but surprising get a warning; what a new user trips on works as documented."""

import copy
import json
import os
import re

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace._files import atomic_open, atomic_target, atomic_write
from gpuplace.cli import main
from conftest import run_cli

# 100,000 GPUs: one episode's observations would take tens of GB
HUGE = {"topology": {"preset": "custom", "racks": 100, "nodes_per_rack": 125, "gpus_per_node": 8},
        "workload": {"kind": "synthetic", "num_jobs": 2000}}


def _cli(capsys, argv):
    """Runs the command line; returns (exit status, stdout, stderr). argparse's usage errors exit 2."""
    return run_cli(capsys, main, argv)


# ---- run_episode: recording is bounded, replays that run out say so ------------------------------


def test_run_episode_refuses_to_record_what_cannot_fit_before_the_first_step():
    with pytest.raises(gpuplace.ConfigError, match=r"run_episode: record=True: the observations and masks of at least "
                                                   r"2001 steps \(one per job of the episode's 2000\) take .* GiB, more "
                                                   r"than record_limit 1\.0 GiB"):
        gpuplace.run_episode(HUGE, "pack", seed=1, record=True)


def test_run_episode_records_only_what_fits_by_default(small):
    full = gpuplace.run_episode(small, "pack", seed=2)
    assert full["recorded"] and full["observations"].shape[0] == full["steps"] + 1
    with pytest.warns(UserWarning, match=r"observations and masks not recorded: .* more than record_limit 1\.0 KiB"):
        part = gpuplace.run_episode(small, "pack", seed=2, record_limit=1024)
    assert not part["recorded"] and "observations" not in part and "masks" not in part
    assert part["metrics"] == full["metrics"]
    np.testing.assert_array_equal(part["actions"], full["actions"])
    off = gpuplace.run_episode(small, "pack", seed=2, record=False)
    assert not off["recorded"] and off["metrics"] == full["metrics"]
    with pytest.raises(gpuplace.ConfigError, match=r"record=True: the observations and masks of \d+ steps \(the steps so far\)"):
        # more than the lower bound: found while the episode runs
        gpuplace.run_episode(small, "pack", seed=2, record=True, record_limit=(full["observations"][0].nbytes + 17) * 30)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"record": "yes"}, TypeError, r"record must be True, False or None .* got str 'yes'"),
    ({"record_limit": -1}, gpuplace.ConfigError, r"record_limit \(bytes\) -1 out of range"),
    ({"record_limit": 1.5}, gpuplace.ConfigError, r"record_limit \(bytes\): expected a whole number .* got float 1\.5"),
])
def test_run_episode_checks_its_recording_arguments(small, kwargs, error, match):
    with pytest.raises(error, match=match):
        gpuplace.run_episode(small, "pack", seed=1, **kwargs)


def test_run_episode_says_when_the_actions_ran_out(small):
    with pytest.warns(UserWarning, match=r"the 1 actions ran out before the episode ended \(0 of 20 jobs finished\)"):
        r = gpuplace.run_episode(small, actions=[0], seed=1)
    assert r["actions_ran_out"] and not r["terminated"] and not r["truncated"] and r["steps"] == 1
    done = gpuplace.run_episode(small, "pack", seed=1)
    assert not done["actions_ran_out"] and done["terminated"]


def test_run_episode_policy_must_be_a_name(small):
    with pytest.raises(TypeError, match=r"policy must be a heuristic name \(.*pack.*\), got int 5"):
        gpuplace.run_episode(small, 5)


# ---- Gymnasium ids, render modes, seeds ----------------------------------------------------------


def test_an_id_with_scenario_none_is_its_preset():
    env = gym.make("gpuplace/ProximityDRL-v0", scenario=None)
    ref = gpuplace.GymnasiumEnv("proximity_drl")
    assert env.unwrapped.scenario == ref.scenario and env.unwrapped.num_gpus == ref.num_gpus
    envs = gym.make_vec("gpuplace/ProximityDRL-v0", num_envs=2, vectorization_mode="vector_entry_point", scenario=None)
    assert envs.scenario == ref.scenario
    assert gym.make("gpuplace/ProximityDRL-v0", scenario="default").unwrapped.num_gpus == 64


@pytest.mark.parametrize("make", [
    lambda m: gym.make("gpuplace/Default-v0", render_mode=m),
    lambda m: gpuplace.GymnasiumEnv("default", render_mode=m),
    lambda m: gpuplace.GymnasiumVectorEnv("default", 2, render_mode=m),
    lambda m: __import__("gpuplace.sb3", fromlist=["x"]).SB3VecEnv("default", 2, render_mode=m),
])
@pytest.mark.parametrize("mode", ["human", "rgb_array_list", "text"])
def test_unsupported_render_modes_are_refused_at_construction(make, mode):
    with pytest.raises(ValueError, match=rf"render_mode '{mode}' is not supported; supported: 'ansi' \(text\), "
                                         r"'rgb_array' \(an image\) or None"):
        make(mode)


def test_reset_takes_numpy_integer_seeds_and_refuses_bad_ones(small):
    env = gpuplace.GymnasiumEnv(small)
    a, _ = env.reset(seed=7)
    for seed in (np.int64(7), np.uint32(7), np.int8(7)):
        b, _ = env.reset(seed=seed)
        np.testing.assert_array_equal(a, b)
    env.step(env.action_space.sample())
    before = env.observation_view.copy()
    for seed, error, match in [(True, TypeError, "seed must be an int or None, got bool True"),
                               (7.0, TypeError, "got float 7.0"), (-1, ValueError, r"seed must be in \[0, 2\*\*64\), got -1"),
                               (2**64, ValueError, r"got 18446744073709551616")]:
        with pytest.raises(error, match=match):
            env.reset(seed=seed)
        np.testing.assert_array_equal(env.observation_view, before)  # the episode goes on untouched


# ---- vector envs: sizes checked before anything is allocated -------------------------------------


@pytest.mark.parametrize("num_envs,num_threads,match", [
    (10**12, 1, r"vector env: num_envs 1000000000000 needs at least .* per env: its observation of 425 floats.*"
                r"more than this machine's .* of memory"),
    (10**30, 1, r"vector env: num_envs 1000000000000000000000000000000 out of range \[1, "),
    (True, 1, r"vector env: num_envs: expected a whole number in \[1, \d+\], got bool True"),
    (2.0, 1, r"vector env: num_envs: expected a whole number .* got float 2\.0"),
    (4, 0, r"vector env: num_threads 0 out of range \[1, 4\]"),
    (4, 5, r"vector env: num_threads 5 out of range \[1, 4\]"),
])
def test_vector_env_sizes_are_checked_first(num_envs, num_threads, match):
    from gpuplace.sb3 import SB3VecEnv

    for make in (gpuplace.make_core_vector_env, gpuplace.GymnasiumVectorEnv, SB3VecEnv):
        with pytest.raises(gpuplace.ConfigError, match=match):
            make("default", num_envs, num_threads)


# ---- scenario and config files -------------------------------------------------------------------


def test_a_binary_scenario_file_names_the_file(tmp_path, capsys):
    f = tmp_path / "model.json"
    f.write_bytes(b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe")
    match = rf"{f}: not a JSON text file: byte 6 is 0x00, which is not UTF-8 text \(a binary file\?\)"
    for make in (gpuplace.load_scenario, gpuplace.GymnasiumEnv, gpuplace.make_core_env):
        with pytest.raises(gpuplace.ConfigError, match=match):
            make(str(f))
    code, out, err = _cli(capsys, ["evaluate", "--scenario", str(f), "--seeds", "1", "-q"])
    assert code == 2 and out == "" and str(f) in err and "not UTF-8 text" in err


@pytest.mark.parametrize("content,match", [
    ("[1, 2]", "a training config must be a JSON object, got a list"),
    ('"ppo"', "a training config must be a JSON object, got a string"),
    ("{", r":1:2: invalid JSON"),
    (b"\x89PNG\r\n", r"not a JSON training config file: byte 0 \(0x89\)"),
])
def test_train_config_must_be_a_json_object(tmp_path, capsys, content, match):
    if not getattr(_core, "has_ppo", False):
        pytest.skip("no C++ PPO in this build")
    f = tmp_path / "config.json"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, out, err = _cli(capsys, ["train", "--config", str(f), "--out", str(tmp_path / "run"), "-q"])
    assert code == 2 and str(f) in err
    assert re.search(match, err), err
    assert not (tmp_path / "run").exists() or not os.listdir(tmp_path / "run")


# ---- command-line values: argparse's usage error naming the option, before any work --------------


@pytest.mark.parametrize("argv,match", [
    (["evaluate", "--seed-list", "1,x"], r"argument --seed-list: '1,x': item 2: 'x' is not a seed"),
    (["evaluate", "--seed-list", ""], r"argument --seed-list: '': no seeds"),
    (["evaluate", "--seed-list", "1,,2"], r"argument --seed-list: '1,,2': item 2 is empty"),
    (["evaluate", "--seed-list", "-3"], r"argument --seed-list: '-3': item 1: -3 out of range"),
    (["evaluate", "--seeds", "0"], r"argument --seeds: 0 out of range: expected a number of held-out seeds in \[1, 10000000\]"),
    (["evaluate", "--threads", "-1"], r"argument --threads: -1 out of range: expected a number of threads \(0: every core\)"),
    (["plot", "jct-cdf", "--seed-list", "a"], r"argument --seed-list: 'a': item 1: 'a' is not a seed"),
    (["train-sb3", "--n-steps", "0"], r"argument --n-steps: 0 out of range: expected a whole number >= 1"),
    (["train-sb3", "--steps", "-5"], r"argument --steps: -5 out of range: expected a whole number >= 1"),
    (["train-sb3", "--gamma", "nan"], r"argument --gamma: nan out of range: expected a discount in \(0, 1\]"),
    (["train-sb3", "--gamma", "1.5"], r"argument --gamma: 1\.5 out of range"),
    (["train-sb3", "--gamma", "0"], r"argument --gamma: 0 out of range"),
    (["train-sb3", "--num-envs", "0"], r"argument --num-envs: 0 out of range"),
    (["train-sb3", "--imitation-steps", "-1"], r"argument --imitation-steps: -1 out of range"),
    (["train-sb3", "--seed", "x"], r"argument --seed: 'x' is not a seed"),
    (["train", "--steps", "0"], r"argument --steps: 0 out of range"),
    (["train", "--restarts", "0"], r"argument --restarts: 0 out of range"),
])
def test_bad_option_values_are_usage_errors(capsys, argv, match):
    code, out, err = _cli(capsys, argv)
    assert code == 2 and out == ""
    assert re.search(match, err), err


@pytest.mark.parametrize("argv,match", [
    (["evaluate", "--policies", "pack,nope", "--seeds", "1"], r'--policies: .*unknown policy "nope"'),
    (["evaluate", "--policies", ",", "--seeds", "1"], r"--policies ',': no heuristic names \(known: .*pack"),
    (["evaluate", "--seeds", "1", "--csv", "{tmp}/no/such/folder/r.csv"], r"--csv .*r\.csv: the folder .*folder does not exist"),
    (["evaluate", "--seeds", "1", "--json", "{tmp}"], r"--json .*: is a folder, not a file name"),
    (["train-sb3", "--out", "{tmp}/file", "--steps", "1"], r"--out .*file: is a file, not a folder"),
    (["train-sb3", "--num-envs", "4", "--threads", "5", "--out", "{tmp}/run"],
     r"--threads 5 out of range \[1, 4\] \(each thread steps at least one of the --num-envs 4 envs\)"),
    (["plot", "jct-cdf", "--seeds", "1", "--out", "{tmp}/no/cdf.png"], r"--out .*cdf\.png: the folder .* does not exist"),
    (["train-sb3", "--teacher", "pack+nope", "--out", "{tmp}/run"], r'unknown queue policy "nope"'),
])
def test_bad_names_and_output_paths_are_refused_before_any_work(tmp_path, capsys, argv, match):
    (tmp_path / "file").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _cli(capsys, argv)
    assert code == 2 and out == "" and re.search(match, err), (out, err)
    assert not (tmp_path / "run").exists()


def test_a_seed_list_is_used_as_given(tmp_path, capsys):
    code, out, err = _cli(capsys, ["evaluate", "--policies", "pack", "--seed-list", "3, 4", "--json",
                                   str(tmp_path / "r.json"), "-q"])
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["seeds"] == [3, 4]


def test_evaluate_threads_are_checked_by_the_api():
    with pytest.raises(gpuplace.ConfigError, match=r"evaluate: threads -1 out of range \[0, 4096\]"):
        gpuplace.evaluate("default", ["pack"], 1, threads=-1)
    with pytest.raises(gpuplace.ConfigError, match=r"evaluate: threads: expected a whole number .* got str '2'"):
        _core.evaluate(gpuplace.load_scenario("default"), ["pack"], [1], "2")


# ---- files: the real path in errors --------------------------------------------------------------


def test_atomic_writes_name_the_real_path(tmp_path):
    target = tmp_path / "no" / "such" / "report.csv"
    for write in (lambda: atomic_write(target, "x"), lambda: atomic_open(target).__enter__(),
                  lambda: atomic_target(target).__enter__()):
        with pytest.raises(FileNotFoundError) as e:
            write()
        assert e.value.filename == str(target) and ".tmp" not in str(e.value)
    # a writer's error about the temporary file names the target too
    with pytest.raises(IsADirectoryError) as e:
        with atomic_target(tmp_path / "plot.png") as tmp:
            raise IsADirectoryError(21, "Is a directory", tmp)
    assert e.value.filename == str(tmp_path / "plot.png")
    assert os.listdir(tmp_path) == []


def test_load_model_lists_the_known_names(tmp_path):
    if not getattr(_core, "has_ppo", False):
        pytest.skip("no C++ PPO in this build")
    from gpuplace.ppo import load_model

    names = ", ".join(_core.model_names())
    with pytest.raises(gpuplace.CheckpointError, match=rf'load_model\("nosuchmodel"\): not a reference model \(known: '
                                                       rf'{names}\) and no such file'):
        load_model("nosuchmodel")
    with pytest.raises(gpuplace.CheckpointError, match="a folder, not a checkpoint file"):
        load_model(str(tmp_path))


# ---- pictures ------------------------------------------------------------------------------------


def test_rgb_array_is_a_labelled_picture(small):
    from gpuplace.render import FREE, PICKED, TEXT, job_colors

    env = gpuplace.GymnasiumEnv(small, render_mode="rgb_array")
    env.reset(seed=1)
    for _ in range(5):
        env.step(env.action_space.sample())
    img = env.render()
    assert img.shape[0] >= 150 and img.shape[1] >= 320 and img.dtype == np.uint8
    colours = {tuple(c) for c in img.reshape(-1, 3)}
    assert tuple(TEXT) in colours and tuple(FREE) in colours  # labels and the key
    holders = env.core.gpu_holders()
    for j in set(holders[holders >= 0].tolist()):
        assert tuple(job_colors(np.array([j]))[0]) in colours
    if len(env.core.picked()):
        assert tuple(PICKED) in colours
    # the title is the first band of text: dark pixels in the top rows
    assert (img[8:24] == TEXT).all(-1).any()
    big = gpuplace.GymnasiumEnv(HUGE | {"workload": {"kind": "synthetic", "num_jobs": 5}}, render_mode="rgb_array")
    big.reset(seed=1)
    assert big.render().shape[1] <= 1700  # racks wrap into rows


def test_learning_curve_legend_groups_heuristics_and_stays_off_the_plot(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from gpuplace import plot

    (tmp_path / "learning.csv").write_text("env_steps,mean_jct,val_jct,phase\n" + "".join(
        f"{k * 1000},{5000 - k * 10},{4800 - k * 10},{'imitation' if k < 3 else 'ppo'}\n" for k in range(20)))
    heur = {f"h{i:02d}": 1.0 + 0.05 * i for i in range(24)}
    figs = []
    monkeypatch.setattr(plot, "_save", lambda fig, out: figs.append(fig) or out)
    plot.learning_curve(str(tmp_path / "learning.csv"), str(tmp_path / "lc.png"), heur)
    ax = figs[0].axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [x for x in labels if x.startswith("h")] == ["h00 1.000 h", "h01 1.050 h", "h02 1.100 h", "h03 1.150 h",
                                                        "h04 1.200 h"]
    assert "19 other heuristics, 1.250 to 2.150 h" in labels
    figs[0].canvas.draw()
    legend_box = ax.get_legend().get_window_extent()
    assert legend_box.x0 >= ax.get_window_extent().x1  # outside the axes, on the right
    assert ax.get_xlabel() == "env steps"


# ---- SB3 models: they act on other cluster sizes and carry what they act under -------------------


def _cluster(nodes, **env):
    return {"name": f"dgx{nodes}", "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": nodes},
            "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.0}, "env": dict({"allow_defer": True}, **env)}


def _per_gpu_model(scenario):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import PerGpuPolicy, per_gpu_ppo_kwargs, wrap_vec_env
    from gpuplace.sb3 import SB3VecEnv

    venv = wrap_vec_env(SB3VecEnv(scenario, num_envs=2))  # the documented snippet
    return MaskablePPO(PerGpuPolicy, venv, **per_gpu_ppo_kwargs(num_envs=2, n_steps=16), seed=1, device="cpu")


@pytest.mark.parametrize("nodes", [2, 8])  # 16 and 64 GPUs
def test_a_per_gpu_model_of_32_gpus_is_evaluated_on_other_sizes(tmp_path, capsys, nodes):
    from gpuplace.evaluation import evaluate_agent, maskable_policy
    from gpuplace.sb3 import save_model

    model = _per_gpu_model(_cluster(4))
    path = save_model(model, tmp_path / "m.zip")
    code, out, err = _cli(capsys, ["evaluate", "--sb3", path, "--scenario", json.dumps(_cluster(nodes)),
                                   "--policies", "pack", "--seeds", "2", "--json", str(tmp_path / "r.json"), "-q"])
    assert code == 0, err
    rows = set(json.loads((tmp_path / "r.json").read_text())["policies"])
    assert rows == {"pack", "maskable_ppo"}
    direct = evaluate_agent(maskable_policy(model), _cluster(nodes), 2, name="m")
    assert [m["jobs_done"] for m in direct.per_seed("m")] == [12, 12]


def test_a_model_that_cannot_fit_is_a_layout_error_before_any_episode(tmp_path, capsys):
    from gpuplace.sb3 import save_model, scenario_for_model
    from gpuplace.torch_net import LayoutError

    model = _per_gpu_model(_cluster(4))
    with pytest.raises(LayoutError, match=r"does not fit scenario dgx4: .* context values vs .* queue_window"):
        scenario_for_model(model, _cluster(4, queue_window=4))
    path = save_model(model, tmp_path / "m.zip")
    code, out, err = _cli(capsys, ["evaluate", "--sb3", path, "--scenario", json.dumps(_cluster(4, queue_window=4)),
                                   "--seeds", "1", "-q"])
    assert code == 2 and out == "" and "queue_window" in err


def test_an_mlp_model_on_another_cluster_is_a_layout_error():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from gpuplace.sb3 import scenario_for_model
    from gpuplace.torch_net import LayoutError
    from gpuplace.sb3 import SB3VecEnv

    model = MaskablePPO("MlpPolicy", SB3VecEnv(_cluster(4), 2), n_steps=16, batch_size=16, device="cpu")
    assert scenario_for_model(model, _cluster(4))[1] == "maskable_ppo"
    with pytest.raises(LayoutError, match=r"\(MaskableActorCriticPolicy\) does not fit scenario dgx2: it acts on observations "
                                          r"of \d+ values and 33 actions, the scenario's have \d+ and 17; a policy over the "
                                          r"whole observation \(such as MlpPolicy\)"):
        scenario_for_model(model, _cluster(2))


def test_the_documented_snippets_model_records_its_queue_policy(tmp_path, capsys):
    from gpuplace.sb3 import load_maskable_ppo, model_layout, model_queue, save_model, teacher_scenario

    model = _per_gpu_model(teacher_scenario(_cluster(2), "pack+sjf"))
    loaded = load_maskable_ppo(save_model(model, tmp_path / "m.zip"))
    assert model_queue(loaded) == "sjf"
    lay = model_layout(loaded)
    assert lay["queue"] == {"queue_policy": "sjf", "backfill": True} and lay["information"] == "oracle"
    code, out, err = _cli(capsys, ["evaluate", "--sb3", str(tmp_path / "m.zip"), "--scenario", json.dumps(_cluster(2)),
                                   "--policies", "pack", "--seeds", "1", "-q"])
    assert code == 0 and "maskable_ppo+sjf" in out, err


@pytest.mark.parametrize("kwargs,match", [
    ({"gamma": float("nan")}, r"train_per_gpu: gamma nan: expected a finite number in \(0, 1\]"),
    ({"n_steps": 0}, r"train_per_gpu: n_steps 0: expected a whole number >= 1"),
    ({"total_timesteps": -5}, r"train_per_gpu: total_timesteps -5: expected a whole number >= 1"),
    ({"learning_rate": float("inf")}, r"train_per_gpu: learning_rate inf: expected a finite number > 0"),
    ({"num_envs": True}, r"train_per_gpu: num_envs True: expected a whole number >= 1"),
])
def test_training_hyperparameters_are_checked_first(kwargs, match):
    pytest.importorskip("sb3_contrib")
    from gpuplace.sb3 import train_maskable_ppo, train_per_gpu

    with pytest.raises(gpuplace.ConfigError, match=match):
        train_per_gpu(_cluster(2), **kwargs)
    if "learning_rate" not in kwargs or True:
        with pytest.raises(gpuplace.ConfigError, match=match.replace("train_per_gpu", "train_maskable_ppo")):
            train_maskable_ppo(_cluster(2), **kwargs)


def test_non_finite_weights_are_never_written(tmp_path):
    torch = pytest.importorskip("torch")
    from gpuplace.sb3 import save_cpp_checkpoint, save_model

    model = _per_gpu_model(_cluster(2))
    with torch.no_grad():
        model.policy.net.value[0].weight[0, 0] = float("nan")
    with pytest.raises(gpuplace.CheckpointError, match=r"checkpoint .*ppo\.json: not written: non-finite weights "
                                                       r"\(NaN or inf\) in /parts/value"):
        save_cpp_checkpoint(model, tmp_path / "ppo.json")
    with pytest.raises(gpuplace.CheckpointError, match=r"model .*m\.zip: not written: non-finite weights .*net\.value"):
        save_model(model, tmp_path / "m.zip")
    assert os.listdir(tmp_path) == []


def test_rllib_values_are_checked_before_ray_starts(capsys):
    pytest.importorskip("ray")
    import ray

    from gpuplace.rllib.cli import main as rllib_main

    for argv, match in [(["train", "--iterations", "0"], "argument --iterations: 0 out of range"),
                        (["train", "--num-envs-per-runner", "0"], "argument --num-envs-per-runner: 0 out of range"),
                        (["tune", "--seeds", "1,x"], "argument --seeds: '1,x': item 2"),
                        (["tune", "--seeds", ""], "argument --seeds: '': no seeds")]:
        with pytest.raises(SystemExit) as e:
            rllib_main(argv)
        assert e.value.code == 2 and match in capsys.readouterr().err
    assert rllib_main(["train", "--policies", "nope", "-q"]) == 2
    assert 'unknown policy "nope"' in capsys.readouterr().err
    assert rllib_main(["train", "--set", "gamma=nan", "-q"]) == 2
    assert '"nan" is not a finite number' in capsys.readouterr().err
    assert not ray.is_initialized()


def test_progress_bar_counts_the_env_steps_of_learn(monkeypatch):
    from gpuplace import progress
    from gpuplace.sb3 import ProgressBar

    bars = []

    def spy(**kw):
        bars.append(progress.tqdm(**kw))
        return bars[-1]

    monkeypatch.setattr("gpuplace.sb3.callbacks.progress_bar", lambda total=None, desc="", disable=False: spy(
        total=total, desc=desc, disable=disable))
    model = _per_gpu_model(_cluster(2))
    model.learn(32, callback=ProgressBar())
    assert bars[0].total == 32 and bars[0].n == 32 and bars[0].desc == "MaskablePPO"


# ---- numbers that are not numbers, files that are not files, budgets that train nothing ----------


@pytest.mark.parametrize("argv,match", [
    (["evaluate", "--round", "nan"], r"argument --round: nan out of range"),
    (["evaluate", "--round", "-1"], r"argument --round: -1 out of range"),
    (["evaluate", "--restart-overhead", "inf"], r"argument --restart-overhead: inf out of range"),
    (["evaluate", "--restart-overhead", "-30"], r"argument --restart-overhead: -30 out of range"),
    (["evaluate", "--time-scale", "0"], r"argument --time-scale: 0 out of range"),
    (["evaluate", "--target-load=-inf"], r"argument --target-load: -inf out of range"),
    (["evaluate", "--threads", "-1"], r"argument --threads: -1 out of range"),
])
def test_nan_infinite_and_negative_numbers_are_refused_by_name(capsys, argv, match):
    code, out, err = _cli(capsys, argv)
    assert code == 2 and out == "" and re.search(match, err), err


@pytest.mark.parametrize("overrides,match", [
    ({"preemption": {"round": float("nan")}}, r"/preemption/round: nan is not a finite number"),
    ({"preemption": {"restart_overhead": float("inf")}}, r"/preemption/restart_overhead: inf is not a finite number"),
    ({"preemption": {"restart_overhead": -5.0}}, r"/preemption/restart_overhead: value -5\.0 out of range"),
])
def test_the_python_api_refuses_them_too(overrides, match):
    with pytest.raises(gpuplace.ConfigError, match=match):
        gpuplace.gymnasium.GymnasiumEnv(overrides=overrides)
    with pytest.raises(gpuplace.ConfigError, match=r"train_per_gpu: gamma nan"):
        from gpuplace.sb3 import train_per_gpu

        train_per_gpu("default", gamma=float("nan"), show_progress=False)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def test_files_that_are_not_regular_files_are_refused_before_reading(capsys, tmp_path, fifo):
    trace = os.path.join(os.path.dirname(__file__), "..", "..", "data", "philly", "0e4a51.trace")
    for argv, match in [
        (["evaluate", "--scenario", fifo], rf'scenario file "{fifo}" is a FIFO, not a regular file \(only regular files '
                                           r"of at most 1 GiB are read\)"),
        (["evaluate", "--scenario", str(tmp_path)], rf'scenario file "{tmp_path}" is a directory, not a file'),
        (["evaluate", "--trace", "/dev/zero", "--format", "csv"], r'--trace "/dev/zero" is a device, not a regular file'),
        (["evaluate", "--trace", fifo, "--format", "philly"], rf'--trace "{fifo}" is a FIFO'),
        (["train", "--config", fifo, "--out", str(tmp_path / "run")], rf'training config file "{fifo}" is a FIFO'),
        (["evaluate", "--sb3", fifo, "--seeds", "1"], rf'model "{fifo}" is a FIFO'),
        (["plot", "learning-curve", fifo, "--out", str(tmp_path / "c.png")], rf'"{fifo}" is a FIFO'),
    ]:
        code, _, err = _cli(capsys, argv)
        assert code == 2 and re.search(match, err), (argv, err)
    assert os.path.exists(trace)
    from gpuplace.bench import main as bench_main

    assert bench_main(["validate", "/dev/zero"]) == 2
    assert 'result file "/dev/zero" is a device' in capsys.readouterr().err


def test_a_file_above_the_cap_is_refused_with_both_sizes(tmp_path):
    from gpuplace._files import check_input_file

    big = tmp_path / "big.json"
    big.write_bytes(b" " * 3000)
    with pytest.raises(gpuplace.ConfigError, match=r'scenario file ".*big\.json" is 2\.9 KiB, larger than the 2 KiB an '
                                                  r"input file may be"):
        check_input_file(big, "scenario file", max_bytes=2048)


def test_train_sb3_refuses_a_budget_below_one_ppo_iteration(capsys, tmp_path):
    code, _, err = _cli(capsys, ["train-sb3", "--steps", "1000", "--out", str(tmp_path / "r"), "-q"])
    assert code == 2 and ("total_timesteps 1000 is less than one PPO iteration after the value warm-up (10 value "
                          "warm-up iterations take 20480 of them): one iteration is n_steps * num_envs = 128 * 16 = "
                          "2048 env steps; give at least 22528") in err
    code, _, err = _cli(capsys, ["train-sb3", "--policy", "mlp", "--steps", "100", "--num-envs", "4", "--n-steps", "64",
                                 "--out", str(tmp_path / "r"), "-q"])
    assert code == 2 and "total_timesteps 100 is less than one PPO iteration: one iteration is n_steps * num_envs = " \
                         "64 * 4 = 256 env steps" in err
    assert not (tmp_path / "r" / "maskable_ppo.zip").exists()


def test_resume_without_saved_state_names_the_missing_file(capsys, tmp_path, small):
    if not getattr(_core, "has_ppo", False):
        pytest.skip("built without the C++ PPO")
    out = tmp_path / "run"
    cfg = {"scenario": dict(small, workload=dict(small["workload"], num_jobs=20)), "restarts": 1, "validation_seeds": 1,
           "checkpoint_every": 1, "ppo": {"total_steps": 256, "num_envs": 2, "num_steps": 32, "imitation_steps": 0,
                                          "value_warmup": 0, "network": {"hidden": [8], "value_hidden": [8]}}}
    gpuplace.ppo.run(cfg, out=str(out), show_progress=False)
    for f in ("state.bin", "state.prev.bin"):
        (out / f).unlink(missing_ok=True)
    code, _, err = _cli(capsys, ["train", "--out", str(out), "--resume", "--seeds", "0", "-q"])
    assert code == 2 and f"resume: the run in {out} has no saved training state: {out}/state.bin does not exist" in err


# ---- a trace that cannot fill the episodes asked: every front door says so with the real count ----


def _short_trace(tmp_path):
    """A CSV trace of 2 jobs and a scenario asking for episodes of 50 of them."""
    trace = tmp_path / "two.csv"
    trace.write_text("submit_time,num_gpus,duration\n0,1,60\n10,1,60\n")
    sc = {"name": "short_trace", "workload": {"kind": "trace", "format": "csv", "path": str(trace), "episode_jobs": 50}}
    why = (f"the trace {trace} has 2 jobs (after the trace options), fewer than the 50 jobs per episode asked "
           "(episode_jobs): each of its episodes replays all 2")
    return trace, sc, why


def test_a_short_trace_is_named_with_its_real_count_by_every_python_front_door(tmp_path, capsys):
    from gpuplace.gymnasium import GymnasiumEnv, GymnasiumVectorEnv

    trace, sc, why = _short_trace(tmp_path)
    assert _core.Env(sc).short_episodes == why and _core.Env("default").short_episodes == ""
    with pytest.warns(UserWarning, match=re.escape(why)):
        env = GymnasiumEnv(sc)
    with pytest.warns(UserWarning, match=re.escape(why)):
        GymnasiumVectorEnv(sc, num_envs=2)
    with pytest.warns(UserWarning, match=re.escape(why)):
        gpuplace.config.make_core_env(sc)
    # the command line: --episode-jobs above the trace's jobs is an error naming both counts, as gpuplace-eval's
    code, _, err = _cli(capsys, ["evaluate", "--trace", str(trace), "--format", "csv", "--episode-jobs", "50",
                                 "--seeds", "1", "--policies", "pack", "-q"])
    assert code == 2 and "--episode-jobs 50: the trace" in err and "has 2 jobs (after the trace options)" in err, err
    # a scenario's own episode_jobs: a warning, and the run goes on
    code, out, err = _cli(capsys, ["evaluate", "--scenario", json.dumps(sc), "--seeds", "1", "--policies", "pack", "-q"])
    assert code == 0 and f"warning: {why}" in err and "pack" in out, err


@pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")
def test_a_short_trace_is_named_by_the_python_training_run(tmp_path):
    _, sc, why = _short_trace(tmp_path)
    cfg = {"scenario": sc, "restarts": 1, "validation_seeds": 1, "validate_every": 1,
           "ppo": {"total_steps": 64, "num_envs": 2, "num_steps": 32, "teacher": "", "imitation_steps": 0,
                   "value_warmup": 0, "network": {"hidden": [8], "value_hidden": [8]}}}
    with pytest.warns(UserWarning, match=re.escape(f"scenario short_trace: {why}")):
        _core.train_run(cfg, str(tmp_path / "run"), False, 1)


# ---- rollout planners on huge clusters: refused by size before any episode --------------------------


def test_a_rollout_planner_on_a_huge_cluster_is_refused_naming_its_size_and_the_limit(capsys):
    sc = gpuplace.config.scenario_of(HUGE, None, "placement")
    with pytest.raises(gpuplace.ConfigError, match=r'policy "rollout4:pack": a rollout planner on 100000 GPUs does not '
                                                   r"finish in reasonable time .* the limit is 4096 GPUs"):
        gpuplace.evaluate(sc, ["pack", "rollout4:pack"], 1)
    code, _, err = _cli(capsys, ["evaluate", "--scenario", json.dumps(HUGE), "--action-mode", "placement",
                                 "--policies", "hindsight:pack", "--seeds", "1", "-q"])
    assert code == 2 and "hindsight:pack" in err and "on 100000 GPUs" in err and "the limit is 4096 GPUs" in err, err
