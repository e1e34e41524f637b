"""`python -m gpuplace plot RUN_FOLDER|CSV`: a training run's plots from the installed package
(learning.csv, compare.csv and validation_heuristics.csv as gpuplace-train and
`python -m gpuplace train` write them), and a clear error naming the plot extra without matplotlib."""

import os
import subprocess
import sys


import gpuplace
from gpuplace.cli import main

LEARNING_HEADER = ("iteration,env_steps,seconds,steps_per_sec,episodes,mean_return,mean_jct,mean_comm_cost,val_jct,"
                   "val_comm_cost,policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,learning_rate,"
                   "phase,teacher_agreement,defer_share\n")


def _run_folder(path, small):
    """A run folder with the files gpuplace-train writes (learning.csv, validation_heuristics.csv,
    compare.csv): the learning log by hand, the comparison from the real harness."""
    path.mkdir()
    rows = []
    for it in range(1, 7):
        phase = "imitation" if it <= 2 else "ppo"
        val = "nan" if it % 2 else f"{3000 - 20 * it}"
        rows.append(f"{it},{256 * it},0.01,20000,{4 * it},-11.5,{3100 - 30 * it},0.02,{val},nan,0.9,0.1,0.9,0,0,0,0.001,"
                    f"{phase},0.9,0\n")
    (path / "learning.csv").write_text(LEARNING_HEADER + "".join(rows))
    (path / "validation_heuristics.csv").write_text("policy,avg_jct\npack,2950\nrandom,3400\n")
    (path / "compare.csv").write_text(gpuplace.evaluate(small, ["pack", "random", "first_fit"], 3).csv())
    return path


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_a_run_folder(tmp_path, capsys, small):
    run = _run_folder(tmp_path / "run", small)
    assert main(["plot", str(run)]) == 0
    out = capsys.readouterr().out
    for name in ("learning_curve.png", "jct_comparison.png"):
        assert f"wrote {run / name}" in out and _is_png(run / name)
    # no temporary file is left beside them
    assert sorted(os.listdir(run)) == ["compare.csv", "jct_comparison.png", "learning.csv", "learning_curve.png",
                                       "validation_heuristics.csv"]


def test_plot_one_csv_into_another_folder(tmp_path, small):
    run = _run_folder(tmp_path / "run", small)
    assert main(["plot", str(run / "compare.csv"), "--out", str(tmp_path / "figs")]) == 0
    assert os.listdir(tmp_path / "figs") == ["jct_comparison.png"]
    assert main(["plot", str(run / "learning.csv"), "--out", str(tmp_path / "figs2")]) == 0
    assert os.listdir(tmp_path / "figs2") == ["learning_curve.png"]


def test_plot_errors_name_the_file(tmp_path, capsys):
    assert main(["plot", str(tmp_path / "nowhere")]) == 2
    assert f"{tmp_path / 'nowhere'}: no such run folder or CSV file" in capsys.readouterr().err
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    assert main(["plot", str(tmp_path / "other.csv")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'other.csv'}: not a learning.csv" in err and "its columns are a, b" in err
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "nothing to plot: no learning.csv, episodes.csv or compare.csv" in capsys.readouterr().err


def test_an_empty_or_missing_csv_is_an_error_not_a_blank_png(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("timesteps,episode_return,length,avg_jct,avg_comm_cost\n")
    png = tmp_path / "c.png"
    for csv, match in [("empty.csv", "an empty CSV file (no header, no rows): nothing to plot"),
                       ("header.csv", "no rows under its header (timesteps, episode_return"),
                       ("missing.csv", "cannot open it: No such file or directory")]:
        assert main(["plot", "learning-curve", str(tmp_path / csv), "--out", str(png)]) == 2
        err = capsys.readouterr().err
        assert csv in err and match in err, err
        assert main(["plot", str(tmp_path / csv)]) == 2
        assert csv in capsys.readouterr().err
    assert not png.exists()


def test_plot_a_train_sb3_run_folder(tmp_path, capsys, small):
    run = tmp_path / "sb3"
    run.mkdir()
    (run / "episodes.csv").write_text("timesteps,episode_return,length,avg_jct,avg_comm_cost\n" +
                                      "".join(f"{64 * i},-1.5,40,{3000 - 10 * i},0.1\n" for i in range(1, 9)))
    (run / "validation.csv").write_text("timesteps,val_jct\n256,2990\n512,2950\n")
    (run / "compare.csv").write_text(gpuplace.evaluate(small, ["pack", "random"], 2).csv())
    assert main(["plot", str(run)]) == 0
    out = capsys.readouterr().out
    for name in ("learning_curve.png", "jct_comparison.png"):
        assert f"wrote {run / name}" in out and _is_png(run / name)
    assert main(["plot", str(run / "episodes.csv"), "--out", str(tmp_path / "figs")]) == 0
    assert os.listdir(tmp_path / "figs") == ["learning_curve.png"]


def test_the_timeline_axes_say_their_units(tmp_path, monkeypatch):
    from gpuplace import plot

    seen = {}

    def keep(fig, out):
        ax = fig.axes[0]
        seen.update(x=ax.get_xlabel(), y=ax.get_ylabel())
        return out

    monkeypatch.setattr(plot, "_save", keep)
    jobs = gpuplace.run_episode("default", "pack", 1, record=False)["jobs"]
    plot.occupancy_timeline(jobs, 64, str(tmp_path / "t.png"), gpus_per_node=8)
    assert seen == {"x": "simulated time (hours since the episode began)",
                    "y": "GPU index (lines between nodes of 8 GPUs)"}


def test_python_m_gpuplace_plot(tmp_path, small):
    run = _run_folder(tmp_path / "run", small)
    r = subprocess.run([sys.executable, "-m", "gpuplace", "plot", str(run)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert _is_png(run / "learning_curve.png") and _is_png(run / "jct_comparison.png")


def test_without_matplotlib_the_error_names_the_plot_extra(tmp_path, small):
    run = _run_folder(tmp_path / "run", small)
    code = ("import sys; sys.modules['matplotlib'] = None\n"  # as if it were not installed
            "from gpuplace.cli import main\n"
            f"sys.exit(main(['plot', {str(run)!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "matplotlib" in r.stderr and "'plot' extra" in r.stderr and "pip install 'gpuplace[plot]'" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (run / "learning_curve.png").exists()
    # the other plots say the same before any episode runs
    r = subprocess.run([sys.executable, "-c", code.replace(f"['plot', {str(run)!r}]", "['plot', 'jct-cdf']")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "'plot' extra" in r.stderr


def test_plot_training_script_is_the_module(tmp_path, small):
    run = _run_folder(tmp_path / "run", small)
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "plot_training.py")
    r = subprocess.run([sys.executable, script, "--dir", str(run)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert _is_png(run / "learning_curve.png")


def test_the_timeline_numbers_and_colours_jobs_as_the_render_does_and_names_a_python_policy(tmp_path, monkeypatch):
    import numpy as np

    from gpuplace import plot
    from gpuplace.render import job_colors

    # the job ids the render shows (gpu_holders, "job N" in its key) are the ids the timeline numbers
    env = gpuplace.config.make_core_env("default")
    env.reset(3)
    seen = []
    for step in range(400):
        if env.done:
            break
        if step % 50 == 49:
            seen.append((env.info()["time"], env.gpu_holders().copy()))
        env.step(int(np.flatnonzero(env.action_mask)[0]))
    while not env.done:
        env.step(int(np.flatnonzero(env.action_mask)[0]))
    jobs = env.finished_jobs()
    for t, holders in seen:
        for g in np.flatnonzero(holders >= 0):
            j = int(np.flatnonzero(jobs["id"] == holders[g])[0])
            assert jobs["start"][j] <= t <= jobs["end"][j]
            assert g in jobs["gpus"][jobs["gpu_offset"][j]:jobs["gpu_offset"][j] + jobs["num_gpus"][j]]

    drawn = {}

    def keep(fig, out):
        ax = fig.axes[0]
        drawn["title"] = ax.get_title()
        drawn["numbers"] = [t.get_text().strip() for t in ax.texts]
        drawn["colours"] = {tuple(np.round(c.get_facecolor()[0][:3], 6)) for c in ax.collections}
        return out

    monkeypatch.setattr(plot, "_save", keep)
    (tmp_path / "my_policies.py").write_text(
        "import numpy as np\n\ndef lowest_gpu(obs, mask):\n    return int(np.flatnonzero(mask)[0])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["plot", "timeline", "--callable", "my_policies:lowest_gpu", "--seed-list", "3",
                 "--out", str(tmp_path / "t.png")]) == 0
    assert drawn["title"] == "default: lowest_gpu, seed 3"  # the Python policy by its name
    assert drawn["numbers"] and set(drawn["numbers"]) <= {str(i) for i in jobs["id"]}
    assert drawn["colours"] <= {tuple(np.round(c / 255.0, 6)) for c in job_colors(jobs["id"])}
