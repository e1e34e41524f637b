"""``python -m gpuplace``: evaluate, train-sb3, train (C++ PPO, when built), rllib (Ray), plot, tensorboard,
bench, info."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import numpy as np

from . import _core
from ._args import check_output_file, check_output_folder, comma_list, count, number, seed_list, window
from ._args import policy_names as _policies
from ._deprecated import add_renamed_option
from ._files import atomic_write
from .command import run as run_command
from .config import DURATIONS, PRESETS, QUEUES, core_classes, load_scenario, read_json_object, scenario_of
from .progress import progress_bar


def _add_scenario(p: argparse.ArgumentParser, run_options: bool = False) -> None:
    p.add_argument("--scenario", default="default", help=f"preset ({', '.join(PRESETS)}), JSON file or JSON text")
    p.add_argument("--durations", choices=DURATIONS,
                   help="what the scheduler knows of job durations (default: the scenario's; docs/information.md)")
    if run_options:  # gpuplace-eval's scenario options
        p.add_argument("--action-mode", choices=("gpu", "placement", "job", "round"),
                       help="what an action chooses (default: the scenario's; docs/mdp.md)")
        p.add_argument("--restart-overhead", type=number(0.0, 1e7, "a number of seconds"),
                       help="preemption: seconds a resumed job loses (default: the scenario's)")
        p.add_argument("--round", type=number(0.0, 1e9, "a number of seconds"),
                       help="the round length of the round policies (default: the scenario's, 360 s), and for "
                            "preemption a decision point every this many seconds too (0 = events only)")
        p.add_argument("--restore", type=number(0.0, 1e7, "a number of seconds"),
                       help="round policies: seconds a move or resume of a job costs (its checkpoint-restore; default: "
                            "the scenario's, 30 s)")
        p.add_argument("--trace", help="replay a trace file on the scenario's cluster (with --format)")
        p.add_argument("--format", choices=("philly", "openb", "csv"), help="the trace's format")
        p.add_argument("--max-jobs", type=count(0), help="trace: at most this many jobs (0 = all)")
        p.add_argument("--episode-jobs", type=count(0),
                       help="trace: each episode replays a seed-chosen run of this many jobs (0 = all)")
        p.add_argument("--time-scale", type=number(1e-9, 1e9, "a positive factor", lo_open=True),
                       help="trace: multiply submit times and durations")
        p.add_argument("--target-load", type=number(0.0, 1e6, "an offered load"),
                       help="trace: compress arrivals to this offered load (0 = as recorded)")
        p.add_argument("--window", type=window, metavar="START,END",
                       help="trace: only jobs submitted in [START, END) seconds")
        p.add_argument("--max-gpus", type=count(0, 1 << 24), help="trace: cap each job's GPUs (0 = the cluster size)")
        p.add_argument("--drop-oversized", action="store_const", const=True,
                       help="trace: drop jobs larger than the cluster")
        p.add_argument("--unmeasured", choices=("extrapolate", "drop", "refuse"),
                       help="trace: a job whose model has no measured throughput at its GPU count: extrapolate "
                            "(default: per-GPU throughput interpolated between measured counts, linear past the "
                            "largest), drop, or refuse (an error naming the row)")
        p.add_argument("--skip-bad-rows", action="store_const", const=True,
                       help="trace: skip malformed rows instead of failing")
        p.add_argument("--topology", help="the cluster instead of the scenario's: a topology preset (info --list), a "
                                          "JSON file or JSON text of a topology (e.g. {\"levels\": [...]})")


_TRACE_OPTIONS = ("max_jobs", "episode_jobs", "time_scale", "target_load", "window", "max_gpus", "drop_oversized",
                  "unmeasured", "skip_bad_rows")


def _topology_of(text: str) -> dict:
    """--topology: JSON text of a topology, a JSON file, or a topology preset's name (as gpuplace-eval)."""
    if text.lstrip().startswith("{"):
        try:
            t = json.loads(text)
        except json.JSONDecodeError as e:
            raise _core.ConfigError(f"--topology {text!r}: not valid JSON: {e}") from None
        return t
    if os.path.exists(text):
        return read_json_object(text, "--topology")
    return {"preset": text}


def _scenario_arg(args) -> None:
    """Folds --durations (and evaluate's --action-mode, --restart-overhead, --round, --trace and its
    options) into args.scenario (a gpuplace.Scenario then), read once."""
    over: dict[str, Any] = {}
    pre = {k: getattr(args, k) for k in ("restart_overhead", "round") if getattr(args, k, None) is not None}
    if pre:
        over["preemption"] = pre
    trace = getattr(args, "trace", None)
    given = [k for k in _TRACE_OPTIONS + ("format", "trace_model") if getattr(args, k, None) is not None]
    if trace is None and given:
        raise _core.ConfigError(f"--{given[0].replace('trace_', '').replace('_', '-')} needs --trace FILE")
    if trace is not None:
        if getattr(args, "format", None) is None:
            raise _core.ConfigError(f"--trace {trace} needs --format philly|openb|csv")
        from ._files import check_input_file

        check_input_file(trace, "--trace")
    topology = getattr(args, "topology", None)
    if topology is not None:
        over["topology"] = _topology_of(topology)
        try:  # its checks now, the error naming the option
            scenario_of(args.scenario, {"topology": over["topology"]})
        except _core.ConfigError as e:
            if "/topology" not in str(e):
                raise
            raise _core.ConfigError(f"--topology {topology}: {e}") from None
    mode = getattr(args, "action_mode", None)
    if over or mode or trace is not None or getattr(args, "durations", None):
        sc = scenario_of(args.scenario, over or None, mode, getattr(args, "durations", None))
        if trace is not None:  # the trace replaces the scenario's workload, on its cluster (as gpuplace-eval --trace)
            d = sc.to_dict()
            d["workload"] = {"kind": "trace", "format": args.format, "path": os.path.abspath(trace),
                             **{k: getattr(args, k) for k in _TRACE_OPTIONS if getattr(args, k) is not None}}
            if getattr(args, "trace_model", None) is not None:
                d["workload"]["model"] = args.trace_model
            d["name"] = f"{d['name']} + trace {trace}"
            sc = scenario_of(d)
        args.scenario = sc


def _seed_list(args) -> list[int]:
    if args.seed_list is not None:  # parsed and checked by argparse (gpuplace._args.seed_list)
        return list(args.seed_list)
    return list(_core.held_out_seeds(args.seeds))


def _check_outputs(args) -> None:
    """--csv, --summary-csv and --json: writable files in existing folders, checked before any work."""
    for option in ("csv", "summary_csv", "json"):
        check_output_file(getattr(args, option, None), f"--{option.replace('_', '-')}")


def summary_csv(rep) -> str:
    """An EvalReport's summary CSV, as gpuplace-eval --summary-csv writes it (EvalReport::summary_csv):
    per policy the number of seeds, then mean and standard error of each metric."""
    names = list(_core.eval_metric_names())
    out = "policy,seeds" + "".join(f",{n}_mean,{n}_sem" for n in names) + "\n"
    for p in rep.policies:
        out += f"{p},{len(rep.per_seed(p))}"
        for n in names:
            mean, sem = rep.summary(p, n)
            out += f",{mean:.10g},{sem:.10g}"
        out += "\n"
    return out


def _save_report(rep, csv_path: str | None = None, json_path: str | None = None, summary_path: str | None = None) -> None:
    """Writes an EvalReport as CSV, summary CSV and / or JSON, each file atomically."""
    if csv_path:
        atomic_write(csv_path, rep.csv())
        print(f"wrote {csv_path}")
    if summary_path:
        atomic_write(summary_path, summary_csv(rep))
        print(f"wrote {summary_path}")
    if json_path:
        atomic_write(json_path, json.dumps(rep.to_json(), indent=1) + "\n")
        print(f"wrote {json_path}")


def _write_report(rep, args) -> None:
    print(f"scenario {rep.scenario}")
    print(rep.table(), end="")
    _save_report(rep, getattr(args, "csv", None), getattr(args, "json", None), getattr(args, "summary_csv", None))


def _load_model(path: str):
    """A MaskablePPO model, with a clear error naming the file when it is missing or unreadable."""
    from .sb3 import load_maskable_ppo

    return load_maskable_ppo(path)


def _round_overrides(args) -> dict | None:
    """--round and --restore as scenario overrides (as gpuplace-eval applies them)."""
    o: dict[str, Any] = {}
    if args.round is not None:
        o["preemption"] = {"round": args.round}
        if args.round > 0:
            o["rounds"] = {"length": args.round}
    if args.restore is not None:
        o.setdefault("rounds", {})["restore"] = {"seconds": args.restore}
    return o or None


def _load_plugins(args) -> None:
    """--plugin FILE.py|MODULE: user code registering policies (gpuplace.register_policy), imported
    before any name is checked."""
    from .registry import load_plugin, registered_policies

    before = set(registered_policies())
    for spec in getattr(args, "plugin", None) or []:
        load_plugin(spec)
    args.plugin_policies = [n for n in registered_policies() if n not in before]


def _check_short_episodes(args, sc: dict, scenario) -> None:
    """A trace that cannot fill the episodes asked, as gpuplace-eval says it: --episode-jobs above
    the trace's jobs is a ConfigError naming both counts; a scenario's own episode_jobs a warning."""
    if sc.get("workload", {}).get("kind") not in ("trace", "mixture"):
        return
    why = str(core_classes(scenario)[0](scenario).short_episodes)
    if not why:
        return
    if getattr(args, "episode_jobs", None):
        raise _core.ConfigError(f"--episode-jobs {args.episode_jobs}: {why}; give at most the trace's number of jobs")
    print(f"warning: {why}", file=sys.stderr)


def _print_calibration(scenario) -> None:
    """gpuplace-eval --calibration's table: per model and measured GPU count, the measured throughputs
    and the ones the ring all-reduce model gives on the measurement cluster (consolidated, spread)."""
    print(f"{'model':<34} {'gpus':>4} {'meas_cons':>12} {'model_cons':>12} {'meas_spread':>12} {'model_spread':>12} "
          f"{'max_err%':>9}")
    for r in _core.calibration(scenario):
        print(f"{r['model']:<34} {r['gpus']:>4} {r['measured_consolidated']:12.4f} {r['model_consolidated']:12.4f} "
              f"{r['measured_spread']:12.4f} {r['model_spread']:12.4f} {r['max_error_percent']:9.2e}")


def _model_or_sb3(args) -> None:
    """evaluate --model: a zoo model for a --trace's jobs, as gpuplace-eval's; a FILE.zip there is the
    MaskablePPO model of the deprecated spelling (--sb3 now), and so is a path."""
    m = args.model
    if m is not None and (m.endswith(".zip") or os.sep in m or os.path.exists(m)):  # a zoo model name is neither
        if args.sb3 is not None:
            raise _core.ConfigError(f"--model {args.model} and --sb3 {args.sb3}: give the MaskablePPO model once, "
                                    f"as --sb3")
        print(f"note: evaluate --model {args.model} is deprecated: use --sb3 {args.model} (--model NAME gives a "
              f"--trace's jobs a zoo model, as gpuplace-eval's)", file=sys.stderr)
        args.sb3, args.model = args.model, None
    args.trace_model = args.model


def cmd_evaluate(args) -> int:
    _load_plugins(args)
    _model_or_sb3(args)
    if args.calibration:
        _print_calibration(scenario_of(args.scenario))
        return 0
    _scenario_arg(args)
    scenario = scenario_of(args.scenario, _round_overrides(args))  # read once: every policy's run takes it as it is
    sc = scenario.to_dict()
    _check_short_episodes(args, sc, scenario)
    seeds = _seed_list(args)
    names = _policies(args.policies, args.plugin_policies)
    if args.queue is not None:  # every policy under each queue policy, as gpuplace-eval --queue
        queues = [q.strip() for q in args.queue.split(",")]
        if not all(queues):
            raise _core.ConfigError(f"--queue {args.queue!r}: an empty queue policy name (expected comma-separated "
                                    f"names of {', '.join(QUEUES)}, e.g. --queue fifo,sjf)")
        names = _policies(",".join(f"{n}+{q}" for n in names for q in queues))
    _check_outputs(args)
    model = _load_model(args.sb3) if args.sb3 else None  # before any heuristic runs
    model_runs: list[tuple[dict, str]] = []
    if model is not None:
        from .sb3 import model_queue, scenario_for_model

        # as gpuplace-eval --queue runs every policy under each queue policy, the model runs under
        # each too; without --queue under its own (the one it was trained under). A model that
        # cannot act here: LayoutError before any episode.
        if args.queue is None:
            model_runs.append(scenario_for_model(model, sc))
        else:
            own = model_queue(model)
            for q in queues:
                try:
                    model_runs.append(scenario_for_model(model, sc, queue=q))
                except _core.ConfigError as e:  # e.g. a round policy: its rounds decide, not a model
                    raise _core.ConfigError(f"--sb3 {args.sb3} under --queue {q}: {e} (a model acts under the "
                                            f"queue policies {', '.join(QUEUES)})") from e
                if own and q != own and not args.quiet:
                    print(f"note: model {args.sb3} was trained under queue policy {own}; its row maskable_ppo+{q} "
                          f"runs it under {q} (--queue), as every heuristic's", file=sys.stderr)
    rep = _core.EvalReport(sc["name"], seeds)
    # one policy at a time so that the bar moves; results are identical to a single call
    with progress_bar(total=len(names), desc="policies", disable=args.quiet) as bar:
        for n in names:
            r = _core.evaluate(scenario, [n], seeds, args.threads)
            rep.add(n, r.per_seed(n), r.returns(n))
            bar.update(1)
    if model_runs:
        from .evaluation import evaluate_agent, maskable_policy

        for msc, name in model_runs:
            evaluate_agent(maskable_policy(model), msc, seeds, name=name, report=rep, show_progress=not args.quiet)
    _write_report(rep, args)
    return 0


def cmd_train_sb3(args) -> int:
    _scenario_arg(args)
    from .evaluation import evaluate_agent, maskable_policy

    load_scenario(args.scenario)
    teacher = None if (args.teacher or "").lower() in ("", "none") else args.teacher
    if teacher:
        from .sb3 import split_teacher

        split_teacher(teacher)  # unknown heuristics or queue policies: before any work
    policies = _policies(args.policies) if args.seeds > 0 else []
    if args.threads > args.num_envs:
        raise _core.ConfigError(f"--threads {args.threads} out of range [1, {args.num_envs}] (each thread steps at least "
                                f"one of the --num-envs {args.num_envs} envs)")
    _check_outputs(args)
    check_output_folder(args.out, "--out")
    if args.tensorboard:
        check_output_folder(args.tensorboard, "--tensorboard")
        import importlib.util

        if importlib.util.find_spec("tensorboard") is None:
            raise ImportError("--tensorboard needs the tensorboard package: pip install './python[sb3]'")
    if args.policy == "mlp":
        from .sb3 import train_maskable_ppo

        timesteps = args.steps or 50_000
        model, cb = train_maskable_ppo(
            args.scenario,
            total_timesteps=timesteps,
            num_envs=args.num_envs,
            seed=args.seed,
            num_threads=args.threads,
            n_steps=args.n_steps,
            gamma=args.gamma,
            log_csv=os.path.join(args.out, "episodes.csv"),
            show_progress=not args.quiet,
            tensorboard_log=args.tensorboard,
        )
        train_sc = load_scenario(args.scenario)
        model.gpuplace_queue = None
        print(f"trained {timesteps} steps ({len(cb.rows)} episodes); learning curve {args.out}/episodes.csv")
    else:
        from .sb3 import queue_policy_of, save_cpp_checkpoint, split_teacher, train_per_gpu

        queue = split_teacher(teacher)[1] if teacher else None
        if queue and queue_policy_of(args.scenario) != queue:  # train_per_gpu trains under it
            print(f"teacher {teacher} acts under queue policy {queue}: training, validation and the agent's evaluation "
                  f"run under {queue} (the scenario's own is {queue_policy_of(args.scenario)})")
        timesteps = args.steps or 600_000
        model, info = train_per_gpu(
            args.scenario,
            total_timesteps=timesteps,
            teacher=teacher,
            imitation_steps=args.imitation_steps if teacher else 0,
            value_warmup=args.value_warmup,
            num_envs=args.num_envs,
            n_steps=args.n_steps,
            seed=args.seed,
            num_threads=args.threads,
            gamma=args.gamma,
            validation_seeds=args.validation_seeds,
            log_dir=args.out,
            show_progress=not args.quiet,
            tensorboard_log=args.tensorboard,
        )
        train_sc = info["scenario"]
        pre = info["pretrain"]
        if pre["imitation_steps"]:
            print(f"cloned {teacher} for {pre['imitation_steps']} env steps (agreement {pre['agreement']:.3f})")
        best = info["best_val_jct"]
        kept = ("no validation (--validation-seeds 0): the last weights are kept" if math.isnan(best)
                else f"best validation JCT {best / 3600:.3f} h")
        print(f"trained {info['env_steps']} env steps in {info['seconds']:.0f} s "
              f"({info['env_steps'] / info['seconds']:,.0f} env steps/s); {kept}; "
              f"learning curve {args.out}/episodes.csv")
        save_cpp_checkpoint(model, os.path.join(args.out, "ppo.json"), train_sc)
        print(f"C++ checkpoint {args.out}/ppo.json (gpuplace-train --load, gpuplace._core.load_checkpoint)")
    queue = model.gpuplace_queue  # saved with the model: evaluate --sb3 runs it under that queue policy
    from .sb3 import save_model

    path = save_model(model, os.path.join(args.out, "maskable_ppo.zip"))
    print(f"model {path}")
    if args.tensorboard:
        print(f"TensorBoard event files {args.tensorboard} (tensorboard --logdir {args.tensorboard})")
    if args.seeds > 0:
        sc = load_scenario(args.scenario)
        seeds = list(_core.held_out_seeds(args.seeds))
        if queue:  # the heuristics under the agent's queue policy too: one discipline in the whole table
            policies = list(dict.fromkeys(p if "+" in p else f"{p}+{queue}" for p in policies))
            print(f"every row acts under queue policy {queue} (the agent's)")
        rep = _core.evaluate(sc, policies, seeds, 1)
        name = "maskable_ppo" + (f"+{queue}" if queue else "")
        evaluate_agent(maskable_policy(model), train_sc, seeds, name=name, report=rep, show_progress=not args.quiet)
        _write_report(rep, args)
        _save_report(rep, os.path.join(args.out, "compare.csv"), os.path.join(args.out, "compare.json"))
    print(f"plots: python -m gpuplace plot {args.out}")
    return 0


def cmd_train(args) -> int:
    """``python -m gpuplace train``: the same run as ``gpuplace-train`` (same config and files), then
    the kept network against the heuristics on held-out seeds (OUT/compare.csv, OUT/compare.json,
    as gpuplace-train writes them; ``python -m gpuplace plot OUT`` draws them)."""
    if not getattr(_core, "has_ppo", False):
        print(
            "error: this build of gpuplace._core has no C++ PPO (include/gpuplace/rl/ was not available when it "
            "was built); use train-sb3, or rebuild with pip install ./python",
            file=sys.stderr,
        )
        return 2
    from . import ppo

    _core.keep_freed_memory()  # a program's choice, not the library's (include/gpuplace/rl/memory.hpp)
    _core.pin_cache_sizes()  # the same training on every CPU (include/gpuplace/rl/blocking.hpp)
    over: dict[str, Any] = {}
    if args.config in _core.run_recipe_names() and not os.path.exists(args.config):
        over = _core.run_recipe(args.config)  # a recipe by name
    elif args.config:
        over = read_json_object(args.config, "training config")
    policies = _policies(args.policies) if args.seeds > 0 and not args.print_config else []
    if args.resume and args.overwrite:
        raise _core.ConfigError("--overwrite excludes --resume (start the run in --out over, or continue it)")
    compare_on: list[str] = []
    if args.compare_on is not None:
        compare_on = [c.strip() for c in args.compare_on.split(",")]
        for i, c in enumerate(compare_on):
            if not c:
                raise _core.ConfigError(f"--compare-on {args.compare_on!r}: item {i + 1} is empty (give presets or "
                                        "scenario files, separated by commas)")
    if not args.print_config:
        _check_outputs(args)
        check_output_folder(args.out, "--out")
        run_file = os.path.join(args.out, "run.json")
        if args.load is None and not args.resume and not args.overwrite and os.path.exists(run_file):
            raise _core.ConfigError(f"--out {args.out} already holds a run ({run_file}): continue it with --resume, start "
                                    "it over with --overwrite, or choose another folder with --out")
    if args.scenario is not None:
        over["scenario"] = args.scenario
    if args.action_mode is not None:
        over["action_mode"] = args.action_mode
    ppo_over = over.setdefault("ppo", {})
    for key, value in (("total_steps", args.steps), ("num_envs", args.num_envs), ("seed", args.seed),
                       ("threads", args.threads)):
        if value is not None:
            ppo_over[key] = value
    if not ppo_over:
        over.pop("ppo")
    for key, value in (("restarts", args.restarts), ("checkpoint_every", args.checkpoint_every)):
        if value is not None:
            over[key] = value
    if compare_on:
        over["compare_on"] = compare_on
    if args.print_config:  # as gpuplace-train --print-config: the config the run would use
        print(json.dumps(ppo._merge(_core.default_run_config(), over), indent=2))
        return 0
    if args.load is not None:  # as gpuplace-train --load: evaluate a checkpoint instead of training
        try:
            net = _core.load_checkpoint(_core.model_path(args.load))
        except _core.CheckpointError as e:
            raise type(e)(f"--load {args.load}: {e} (a checkpoint file, or a shipped model: "
                          f"{', '.join(_core.model_names())})") from None
        own = net.scenario.get("name", "") if isinstance(net.scenario, dict) else net.scenario
        print(f"loaded {args.load} (scenario {own})")
        on = compare_on or [args.scenario if args.scenario is not None else net.scenario]
    else:
        config = None if args.resume and not over else over
        try:
            res = ppo.run(config, out=args.out, resume=args.resume, show_progress=not args.quiet)
        except KeyboardInterrupt:
            print(f"stopped; every state is saved. Continue with:\n  python -m gpuplace train --out {args.out} --resume")
            return 130
        ckpt = res["checkpoint"]
        print(f"trained {res['env_steps']} env steps in {res['seconds']:.1f} s; kept training seed {res['kept']}; "
              f"checkpoint {ckpt}")
        net = _core.load_checkpoint(ckpt) if args.seeds > 0 else None
        on = compare_on or ([net.scenario] if net is not None else [])
    if args.seeds > 0:
        seeds = list(_core.held_out_seeds(args.seeds))
        for i, scenario in enumerate(on):
            sc = load_scenario(scenario)
            rep = _core.evaluate(sc, policies, seeds, 1)
            r = _core.evaluate_network(sc, net, seeds, "ppo", 1)
            rep.add("ppo", r.per_seed("ppo"), r.returns("ppo"))
            _write_report(rep, args) if len(on) == 1 else print(f"scenario {rep.scenario}\n{rep.table()}", end="")
            stem = "compare" if len(on) == 1 else f"compare_{i}"  # as gpuplace-train names them
            _save_report(rep, os.path.join(args.out, f"{stem}.csv"), os.path.join(args.out, f"{stem}.json"))
        if len(on) > 1:
            _save_report(rep, getattr(args, "csv", None), getattr(args, "json", None))
        if not args.no_plot:  # as gpuplace-train: the run's plots, unless the plot extra is missing
            from . import plot

            try:
                for written in plot.training_plots(args.out):
                    print(f"wrote {written}")
            except ImportError as e:
                print(f"plots skipped: {e}. The run itself is complete (python -m gpuplace plot {args.out} draws "
                      "them later).")
    return 0


def _heuristic_jobs(sc, policy: str, seeds: list[int]) -> dict:
    out = []
    for s in seeds:
        out.append(_core.run_episode(sc, policy, s, record=False)["jobs"])
    return out


def _model_jobs(sc, model, seeds: list[int]) -> list[dict]:
    from .evaluation import maskable_policy
    from .sb3 import scenario_for_model

    act = maskable_policy(model)
    return _policy_jobs(scenario_for_model(model, sc)[0], lambda obs, mask: int(act(obs[None], mask[None])[0]), seeds)


def _policy_jobs(sc, act, seeds: list[int]) -> list[dict]:
    """The finished jobs of each seed's episode of a Python policy ``act(obs, mask) -> action``."""
    from .config import make_core_env

    out = []
    for s in seeds:
        e = make_core_env(sc)
        e.reset(s)
        while not e.done:
            e.step(int(act(e.observation, e.action_mask.view(np.bool_))))
        out.append(e.finished_jobs())
    return out


def _callable_policy(spec: str):
    """--callable module:function: the function and its name (the part after the colon)."""
    from .bench import load_callable

    return load_callable(spec), spec.partition(":")[2]


PLOT_KINDS = ("jct-cdf", "learning-curve", "timeline")


def cmd_plot(args) -> int:
    _scenario_arg(args)
    from . import plot

    kind, rest = args.what[0], args.what[1:]
    if kind not in PLOT_KINDS:  # run folders or CSV files: a training run's plots
        for source in args.what:
            for out in plot.training_plots(source, args.out):
                print(f"wrote {out}")
        return 0
    plot._plt()  # the error naming the plot extra, before any episode runs
    check_output_file(args.out, "--out")
    model = _load_model(args.model) if args.model and kind != "learning-curve" else None
    if model is not None:
        from .sb3 import scenario_for_model

        scenario_for_model(model, args.scenario)  # a model that cannot act here: LayoutError before any episode
    fn, fn_name = _callable_policy(args.callable) if args.callable and kind != "learning-curve" else (None, None)
    fn_name = args.name or fn_name
    if kind == "jct-cdf":
        sc = load_scenario(args.scenario)
        seeds = _seed_list(args)
        jcts = {}
        for p in _policies(args.policies):
            runs = _heuristic_jobs(sc, p, seeds)
            jcts[p] = np.concatenate([r["end"] - r["submit"] for r in runs])
        if model is not None:
            runs = _model_jobs(sc, model, seeds)
            jcts["maskable_ppo"] = np.concatenate([r["end"] - r["submit"] for r in runs])
        if fn is not None:  # a Python policy, under its own name
            jcts[fn_name] = np.concatenate([r["end"] - r["submit"] for r in _policy_jobs(sc, fn, seeds)])
        out = plot.jct_cdf(jcts, args.out or "jct_cdf.png", title=f"JCT CDF, {sc['name']}, {len(seeds)} seeds")
    elif kind == "learning-curve":
        if not rest:
            print("error: plot learning-curve needs one or more CSV files (train-sb3 writes OUT/episodes.csv)",
                  file=sys.stderr)
            return 2
        curves = {os.path.basename(os.path.dirname(os.path.abspath(p))) or p: plot.read_learning_curve(p, y=args.y)
                  for p in rest}
        out = plot.learning_curves(curves, args.out or "learning_curve.png", ylabel=args.y)
    else:  # timeline
        sc = load_scenario(args.scenario)
        seed = _seed_list(args)[0]
        if model is not None:
            jobs = _model_jobs(sc, model, [seed])[0]
            who = args.name or "maskable_ppo"
        elif fn is not None:  # a Python policy, labelled by its name
            jobs = _policy_jobs(sc, fn, [seed])[0]
            who = fn_name
        else:
            who = _policies(args.policies)[0]
            jobs = _heuristic_jobs(sc, who, [seed])[0]
        from .config import make_core_env

        topo = make_core_env(sc).topology()
        out = plot.occupancy_timeline(jobs, int(topo["num_gpus"]), args.out or "timeline.png",
                                      title=f"{sc['name']}: {who}, seed {seed}",
                                      gpus_per_node=int(topo["gpus_per_node"]))
    print(f"wrote {out}")
    return 0


def cmd_tensorboard(args) -> int:
    from .tensorboard import write_events

    check_output_folder(args.out, "--out")
    for source in args.runs:  # several runs: each in its own folder under --out, side by side in TensorBoard
        out = args.out if len(args.runs) == 1 else os.path.join(args.out, os.path.basename(os.path.normpath(source)))
        for folder in write_events(source, out):
            print(f"wrote {folder}")
    print(f"view: tensorboard --logdir {args.out}")
    return 0


def cmd_info(args) -> int:
    _load_plugins(args)
    print(f"gpuplace {_core.__version__} (core {_core.core_version}, {_core.variant} build)")
    print(f"presets: {', '.join(PRESETS)}")
    print(f"heuristics: {', '.join(_core.heuristic_names())}")
    print(f"C++ PPO: {'yes' if getattr(_core, 'has_ppo', False) else 'not built'}")
    if getattr(args, "list", False):  # everything that can be named, by kind (gpuplace/registry.hpp)
        for kind, name, about in _core.registry():
            print(f"{kind} {name}: {about}")
    if args.scenario:
        print(json.dumps(load_scenario(args.scenario), indent=1))
    return 0


def cmd_bench(args) -> int:
    from .bench import main as bench_main

    return bench_main(args.bench_args)


def cmd_rllib(args) -> int:
    try:
        from . import rllib
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return rllib.main(args.rllib_args)


_SEEDS = count(1, 10_000_000, "a number of held-out seeds")
_SEED = count(0, 2**64 - 1, "a seed")


def _example(line: str) -> str:
    """A subcommand's --help epilog: one example command line."""
    return f"example: {line}"


def _add_policies(p: argparse.ArgumentParser, help: str = "comma-separated heuristic names (default: all)") -> None:
    p.add_argument("--policies", nargs="+", action=comma_list, metavar="P,P", help=help)


def _add_plugin(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugin", action="append", metavar="FILE.py|MODULE",
                   help="import user code that registers policies (@gpuplace.register_policy; docs/extending.md) "
                        "before the names are read; repeatable")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m gpuplace", description=__doc__,
                                 epilog=_example("python -m gpuplace evaluate --scenario default --seeds 5"))
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("evaluate", aliases=["eval"], help="heuristics (and optionally a MaskablePPO model) on held-out seeds",
                       epilog=_example("python -m gpuplace evaluate --scenario default --policies pack,first_fit "
                                       "--queue fifo,sjf --seeds 10 --csv eval.csv"))
    _add_scenario(p, run_options=True)
    _add_policies(p)
    p.add_argument("--queue", nargs="+", action=comma_list, metavar="Q,Q",
                   help=f"run every policy under each queue policy ({', '.join(QUEUES)}; Gavel's round policies too: "
                         "max_min_fairness_perf, fifo_perf, ...; docs/rounds.md), as gpuplace-eval --queue")
    p.add_argument("--seeds", type=_SEEDS, default=20, help="number of held-out seeds (1000000 + i)")
    p.add_argument("--seed-list", type=seed_list, help="explicit comma-separated seeds instead")
    p.add_argument("--model", help="trace: give every job this zoo model, as gpuplace-eval's (a FILE.zip: the "
                                   "deprecated spelling of --sb3)")
    p.add_argument("--sb3", metavar="FILE.zip", help="a MaskablePPO model to evaluate on the same seeds (greedy)")
    p.add_argument("--calibration", action="store_true",
                   help="print the zoo's calibration error on its measurement cluster and exit, as gpuplace-eval's")
    _add_plugin(p)
    p.add_argument("--threads", type=count(0, 4096, "a number of threads (0: every core)"), default=1)
    p.add_argument("--csv", help="write the per-seed metrics (CSV)")
    p.add_argument("--summary-csv", help="write the summary (CSV): per policy, mean and standard error of each metric")
    p.add_argument("--json", help="write the report (JSON)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_evaluate)

    p = sub.add_parser(
        "train-sb3",
        help="train sb3-contrib MaskablePPO on the batched VecEnv (default: the per-GPU policy with the C++ "
             "trainer's recipe: clone a heuristic, warm up the value, PPO, keep the best on validation)",
        epilog=_example("python -m gpuplace train-sb3 --scenario default --steps 20000 --imitation-steps 20000 "
                        "--out runs/sb3"))
    _add_scenario(p)
    p.add_argument("--policy", choices=["per_gpu", "mlp"], default="per_gpu",
                   help="per_gpu: gpuplace.sb3.PerGpuPolicy (default); mlp: SB3's MlpPolicy")
    p.add_argument("--teacher", default="pack",
                   help="per_gpu: heuristic cloned first, e.g. pack or pack+sjf (its queue policy then applies to "
                        "training and evaluation); none: no cloning")
    p.add_argument("--imitation-steps", type=count(0), default=400_000, help="per_gpu: env steps of the teacher cloned")
    p.add_argument("--value-warmup", type=count(0), default=10, help="per_gpu: PPO iterations that train only the value")
    p.add_argument("--steps", type=count(1), help="PPO env steps (default: 600000 per_gpu, 50000 mlp)")
    add_renamed_option(p, "--timesteps", "--steps", type=count(1))
    p.add_argument("--gamma", type=number(0.0, 1.0, "a discount", lo_open=True), default=1.0,
                   help="discount per decision (default 1: DEFER takes no simulated time, so with gamma < 1 "
                        "deferring looks good and the policy learns to defer)")
    p.add_argument("--num-envs", type=count(1), default=16)
    p.add_argument("--n-steps", type=count(1), default=128, help="env steps per env and PPO iteration")
    p.add_argument("--seed", type=count(0, 2**32 - 1, "a seed"), default=1, help="training seed (SB3: below 2**32)")
    p.add_argument("--threads", type=count(1), default=1, help="C++ threads stepping the envs (at most --num-envs)")
    p.add_argument("--validation-seeds", type=count(0), default=16,
                   help="per_gpu: validation seeds (2000000 + i) for keeping the best weights (0: the last)")
    p.add_argument("--out", default="runs/maskable_ppo")
    p.add_argument("--tensorboard", metavar="DIR",
                   help="also write SB3's training log as TensorBoard event files here (tensorboard --logdir DIR)")
    p.add_argument("--seeds", type=count(0, 10_000_000), default=10, help="held-out seeds for the final table (0: skip)")
    add_renamed_option(p, "--eval-seeds", "--seeds", type=count(0, 10_000_000))
    _add_policies(p, "heuristics in the final table (default: all)")
    p.add_argument("--csv")
    p.add_argument("--json")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(fn=cmd_train_sb3)

    p = sub.add_parser("train", help="train the C++ PPO as gpuplace-train does (restarts, validation; --resume continues)",
                       epilog=_example("python -m gpuplace train --scenario default --steps 100000 --out runs/cpp_ppo"))
    p.add_argument("--scenario", help="preset name or scenario file (default: the config's)")
    p.add_argument("--config", help="training config (JSON) merged over the default (gpuplace-train --print-config)")
    p.add_argument("--action-mode", choices=("gpu", "placement", "job", "round"),
                   help="what an action chooses in every scenario of the run (default: each scenario's; docs/mdp.md)")
    p.add_argument("--steps", type=count(1), help="PPO env steps (after imitation)")
    add_renamed_option(p, "--timesteps", "--steps", type=count(1))
    p.add_argument("--num-envs", type=count(1))
    p.add_argument("--seed", type=_SEED, help="first training seed")
    p.add_argument("--restarts", type=count(1), help="training seeds seed..seed+N-1; the best on validation is kept")
    p.add_argument("--threads", type=count(1), help="env stepping threads per restart")
    p.add_argument("--checkpoint-every", type=count(1), help="iterations between saved training states")
    p.add_argument("--out", default="runs/cpp_ppo")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last saved state")
    p.add_argument("--overwrite", action="store_true",
                   help="start a new run in --out even if it holds one (its saved states are removed)")
    p.add_argument("--load", help="evaluate this checkpoint (a file, or a shipped model: "
                                  f"{', '.join(_core.model_names()) if hasattr(_core, 'model_names') else 'none'}) "
                                  "instead of training")
    p.add_argument("--compare-on", nargs="+", action=comma_list, metavar="S,S",
                   help="scenarios the final table evaluates on (default: the run's), separated by commas, "
                        "e.g. philly:0e4a51,philly:6c71a0")
    p.add_argument("--no-plot", action="store_true", help="do not write plots")
    p.add_argument("--print-config", action="store_true",
                   help="print the config the run would use (the default, or --config's, with the options merged over it) "
                        "and exit")
    p.add_argument("--seeds", type=count(0, 100_000), default=10, help="held-out seeds for the final table (0: skip)")
    add_renamed_option(p, "--eval-seeds", "--seeds", type=count(0, 100_000))
    _add_policies(p, "heuristics in the final table (default: all)")
    p.add_argument("--csv")
    p.add_argument("--json")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_train)

    p = sub.add_parser(
        "plot", help="a training run's plots (RUN_FOLDER or CSV), or jct-cdf, learning-curve, timeline (needs the plot "
                     "extra: matplotlib)",
        description="python -m gpuplace plot RUN_FOLDER|CSV...: a training run's learning curve and JCT comparison "
                    "(learning_curve.png, jct_comparison.png in the run folder, or --out), from the learning.csv and "
                    "compare.csv that gpuplace-train and python -m gpuplace train write. "
                    "python -m gpuplace plot jct-cdf|learning-curve|timeline ...: the other plots.",
        epilog=_example("python -m gpuplace plot jct-cdf --scenario default --policies pack,first_fit --out cdf.png"))
    p.add_argument("what", nargs="+", metavar="RUN_FOLDER|CSV|KIND",
                   help="run folders or CSV files (learning.csv, compare.csv); or jct-cdf, timeline, or learning-curve "
                        "followed by CSV files (e.g. runs/maskable_ppo/episodes.csv)")
    _add_scenario(p)
    # one comma-separated value here: space-separated items would swallow the positional KIND
    p.add_argument("--policies", metavar="P,P", help="heuristics, comma-separated (jct-cdf: all by default; timeline: "
                                                     "the first)")
    p.add_argument("--model", help="a MaskablePPO .zip to include")
    p.add_argument("--callable", metavar="MODULE:FUNCTION",
                   help="a Python policy (obs, mask) -> action to include (timeline: instead of a heuristic), named "
                        "by its function")
    p.add_argument("--name", help="the name of --callable's (or --model's) policy in the plot")
    p.add_argument("--seeds", type=_SEEDS, default=5)
    p.add_argument("--seed-list", type=seed_list)
    p.add_argument("--y", default="episode_return", help="learning-curve: column to plot")
    p.add_argument("--out", help="the image file; for a run's plots, the folder (default: the run folder)")
    p.set_defaults(fn=cmd_plot)

    p = sub.add_parser("tensorboard", help="a training log (learning.csv of the C++ PPO, train-sb3's episodes.csv) as "
                                           "TensorBoard event files (needs the sb3 extra)",
                       epilog=_example("python -m gpuplace tensorboard runs/cpp_ppo --out runs/tb/cpp_ppo"))
    p.add_argument("runs", nargs="+", metavar="RUN_FOLDER|CSV", help="run folders or learning.csv / episodes.csv files")
    p.add_argument("--out", required=True, help="the folder the event files go into (tensorboard --logdir OUT)")
    p.set_defaults(fn=cmd_tensorboard)

    # every argument after "bench" goes to gpuplace.bench.main (prefix_chars: none is an option here)
    p = sub.add_parser("bench", add_help=False, prefix_chars="\x00",
                       help="the benchmark: tracks, run any policy, validate results (docs/bench.md)")
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help="tracks|run|validate and their options (bench --help)")
    p.set_defaults(fn=cmd_bench)

    # every argument after "rllib" goes to gpuplace.rllib.main (prefix_chars: none is an option here, not even --help)
    p = sub.add_parser("rllib", add_help=False, prefix_chars="\x00",
                       help="RLlib PPO (train) and Tune sweeps (tune) on Ray (needs the rllib extra)")
    p.add_argument("rllib_args", nargs=argparse.REMAINDER, help="train|tune and their options (rllib --help)")
    p.set_defaults(fn=cmd_rllib)

    p = sub.add_parser("info", help="version, presets, heuristics; --list everything by kind; --scenario prints it in full",
                       epilog=_example("python -m gpuplace info --scenario heterogeneous"))
    p.add_argument("--scenario")
    p.add_argument("--list", action="store_true", help="everything that can be named, by kind (placers, queues, topologies, ...)")
    _add_plugin(p)
    p.set_defaults(fn=cmd_info)
    return ap


def main(argv=None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
