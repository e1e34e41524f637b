"""The benchmark (docs/bench.md): ``python -m gpuplace bench
tracks|run|validate|leaderboard|yardstick|submit``, and the same from Python. Every run and check goes through the C++ code gpuplace-bench runs
(src/bench/), so a result file is the same text bit for bit from either.

A policy is a name (a heuristic variant such as ``pack+sjf``; with the C++ PPO built, a shipped
model such as ``default`` or a checkpoint file), scored in C++; or a Python callable
``policy(obs, mask) -> action``, run here episode by episode on the track's seeds (slower: one
Python call per decision), whose actions are then replayed and scored in C++ (so its result
validates by replaying them). ``from_batch(p)`` adapts a batch policy such as
``gpuplace.evaluation.maskable_policy(model)``; ``sb3_policy(model or .zip)`` makes an SB3
MaskablePPO model one (``--sb3 ZIP`` on the command line), ``rllib_policy(path)`` an RLlib
checkpoint's module (``--rllib PATH``)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import _core
from ._args import comma_list, count
from ._files import atomic_write, check_input_file
from .command import run as run_command

VERSION = "v1"

Policy = Callable[[np.ndarray, np.ndarray], int]


@dataclass
class BenchResult:
    """One policy on one track: the result file's text, its data and a markdown row."""

    text: str
    row: str

    @property
    def data(self) -> dict[str, Any]:
        return json.loads(self.text)

    def save(self, path: str) -> None:
        """Writes the result file (atomically)."""
        atomic_write(path, self.text)


def tracks(version: str = VERSION) -> list[dict]:
    """The tracks of a version: name, version, about, preset, patch, seeds, episodes, best_heuristic."""
    return _core.bench_tracks(version)


def _commit(commit: str | None) -> str:
    """The commit to record: as given, else $GPUPLACE_COMMIT, else none (as gpuplace-bench)."""
    return commit if commit else os.environ.get("GPUPLACE_COMMIT", "")


def from_batch(batch_policy: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Policy:
    """A per-decision policy from a batch one (``policy(obs[B, O], masks[B, A] bool) -> actions[B]``)."""

    def act(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.asarray(batch_policy(obs[None, :], mask[None, :].astype(bool)))[0])

    return act


def sb3_policy(model) -> tuple[Policy, str | None]:
    """An SB3 MaskablePPO model (or the path of its .zip) as a policy acting greedily, and the queue
    policy it acts under (None: the track's)."""
    from .evaluation import maskable_policy
    from .sb3 import load_maskable_ppo, model_queue, scenario_for_model

    if isinstance(model, (str, os.PathLike)):
        model = load_maskable_ppo(model)
    act = from_batch(maskable_policy(model))
    # run() asks before any episode whether the model can act on the track (LayoutError otherwise)
    act.gpuplace_check = lambda scenario: scenario_for_model(model, scenario)
    return act, model_queue(model)


def _rllib_module_dir(path: str) -> str:
    """The RLModule folder of an RLlib checkpoint: an algorithm's (``train``'s ``out/checkpoint``),
    its learner's ``rl_module`` folder, or a module's own folder; FileNotFoundError otherwise."""
    for sub in (os.path.join("learner_group", "learner", "rl_module", "default_policy"), "default_policy", ""):
        d = os.path.join(path, sub)
        if os.path.isfile(os.path.join(d, "module_state.pkl")) and not os.path.isdir(os.path.join(d, "default_policy")):
            return d
    raise FileNotFoundError(f"--rllib {path}: not an RLlib checkpoint (no learner_group/learner/rl_module/default_policy "
                            "nor module_state.pkl there)")


def _rllib_queue(path: str) -> str | None:
    """The queue policy of the scenario an RLlib algorithm checkpoint trained in (its env config),
    or None when the path holds no algorithm config (a module alone)."""
    import pickle

    from .config import queue_name

    f = os.path.join(path, "class_and_ctor_args.pkl")
    if not os.path.isfile(f) or not os.path.isdir(os.path.join(path, "learner_group")):
        return None
    with open(f, "rb") as fh:
        args, kwargs = pickle.load(fh)["ctor_args_and_kwargs"]
    config = args[0] if args else kwargs.get("config", {})
    env = ((config.get("env_config") or {}).get("scenario") or {}).get("env") if isinstance(config, dict) else None
    return queue_name(env["queue_policy"], env["backfill"]) if env else None


def rllib_policy(path: str | os.PathLike) -> tuple[Policy, str | None]:
    """An RLlib checkpoint (:func:`gpuplace.rllib.train`'s ``out/checkpoint``, or the module's own
    folder) as a policy acting greedily through the module's inference pass, and the queue policy it
    acts under: that of the scenario it trained in when the checkpoint records it (None: the
    track's). A track whose observations the network cannot read is refused before any episode.
    Needs the ``rllib`` extra."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    from .config import make_core_env
    from .torch_net import NetConfig, ObsSpec, check_compatible

    path = os.fspath(path)
    module = RLModule.from_checkpoint(os.path.abspath(_rllib_module_dir(path)))
    spec, net = ObsSpec(**module.model_config["obs_spec"]), NetConfig(**module.model_config["network"])
    act = from_batch(module.greedy_actions)
    act.gpuplace_check = lambda scenario: check_compatible(spec, ObsSpec.from_env(make_core_env(scenario)), net,
                                                           what=f"track scenario {scenario.get('name', '')}")
    return act, _rllib_queue(path)


def _run_callable(track: str, policy: Policy, name: str, version: str, threads: int, commit: str,
                  queue: str | None) -> BenchResult:
    info = next((t for t in tracks(version) if t["name"] == track), None)
    if info is None:
        _core.bench_track_scenario(track, version)  # raises the ConfigError that lists the tracks
    scenario = _core.bench_track_scenario(track, version, queue or "")
    check = getattr(policy, "gpuplace_check", None)
    if check is not None:
        check(scenario.to_dict())
    env = _core.Env(scenario)
    actions: list[list[int]] = []
    start = time.perf_counter()
    for seed in info["seeds"]:
        env.reset(seed)
        acts: list[int] = []
        while not env.done:
            a = int(policy(env.observation, env.action_mask))
            env.step(a)
            acts.append(a)
        actions.append(acts)
    seconds = time.perf_counter() - start
    r = _core.bench_score_actions(track, name, actions, seconds, version, "python", threads, commit, True, queue or "")
    return BenchResult(r["json"], r["row"])


def run(track: str, policy: str | Policy, *, name: str | None = None, version: str = VERSION, threads: int = 0,
        commit: str | None = None, keep_actions: bool = True, queue: str | None = None) -> BenchResult:
    """Scores ``policy`` on ``track``: a name in C++ (``keep_actions=False`` records only each
    episode's action hash), or a Python callable ``(obs, mask) -> action`` (``name`` names it in the
    result; its actions are always kept, since validating it replays them), acting under queue
    policy ``queue`` (None: the track's; ``sb3_policy()`` says which one an SB3 model needs). The
    observation and mask are read-only views the env updates in place: copy them to keep them."""
    if isinstance(policy, str):
        r = _core.bench_run(track, policy, version, threads, _commit(commit), keep_actions)
        return BenchResult(r["json"], r["row"])
    if not callable(policy):
        raise TypeError(f"policy must be a name or a callable (obs, mask) -> action, got {type(policy).__name__}")
    if not keep_actions:
        raise ValueError("a Python policy's result keeps its actions (validating it replays them)")
    return _run_callable(track, policy, name or getattr(policy, "__name__", "python_policy"), version, threads,
                         _commit(commit), queue)


def validate(result: str | os.PathLike, threads: int = 0, rerun_planners: bool = False) -> tuple[bool, str, str]:
    """Checks a result file (or a result's JSON text) bit for bit: (valid, how, message), how being
    're-run' (a heuristic, a loadable model) or 'replayed' (the recorded actions: a Python policy's,
    and a rollout planner's unless ``rerun_planners``, which plays its futures again)."""
    text, source = _result_text(result)
    return tuple(_core.bench_validate(text, source, threads, rerun_planners))


def _result_text(result: str | os.PathLike) -> tuple[str, str]:
    """A result's JSON text and where it came from (a file, or "<text>")."""
    text = str(result)
    if text.lstrip().startswith("{"):
        return text, "<text>"
    source = check_input_file(result, "result file")
    with open(source, encoding="utf-8") as f:
        return f.read(), source


def leaderboard(results: Sequence[str | os.PathLike], threads: int = 0, check: bool = True) -> str:
    """Result files (or folders of them: every ``*.json``) ranked per track by mean JCT, as markdown
    tables with each policy's paired difference against the track's best heuristic (hours, mean +-
    standard error), as docs/leaderboard.md shows them. With ``check`` every file is validated first
    (:func:`validate`); an invalid one is a ValueError naming it."""
    files: list[str] = []
    for r in results:
        r = os.fspath(r)
        files += sorted(os.path.join(r, f) for f in os.listdir(r) if f.endswith(".json")) if os.path.isdir(r) else [r]
    if not files:
        raise ValueError(f"leaderboard: no result files in {', '.join(map(os.fspath, results))}")
    by_track: dict[tuple[str, str], list[dict]] = {}
    for f in files:
        text, source = _result_text(f)
        if check:
            ok, _how, msg = _core.bench_validate(text, source, threads, False)
            if not ok:
                raise ValueError(f"leaderboard: {f} is not a valid result: {msg}")
        d = json.loads(text)
        by_track.setdefault((d["track"]["name"], d["track"]["version"]), []).append(d)
    hour = 3600.0
    lines: list[str] = []
    for (track, version), rs in sorted(by_track.items()):
        rs.sort(key=lambda d: (d["summary"]["avg_jct"]["mean"], d["policy"]["name"]))
        lines += [f"## {track} ({version})", "", f"Best heuristic: `{rs[0]['vs_best_heuristic']['policy']}`.", "",
                  "| # | policy | kind | mean JCT (h) | vs best (h) | lower on |", "|---|---|---|---|---|---|"]
        for i, d in enumerate(rs, 1):
            s, vs = d["summary"]["avg_jct"], d["vs_best_heuristic"]["metrics"]["avg_jct"]
            causal = "" if d["policy"].get("causal", True) else " **NOT causal**"
            lines.append(f"| {i} | `{d['policy']['name']}`{causal} | {d['policy']['kind']} | {s['mean'] / hour:.3f} +- "
                         f"{s['sem'] / hour:.3f} | {vs['diff']['mean'] / hour:+.3f} +- {vs['diff']['sem'] / hour:.3f} | "
                         f"{vs['lower']}/{len(d['episodes'])} |")
        lines.append("")
    return "\n".join(lines)


def yardstick(track: str, version: str = VERSION, threads: int = 0, show_progress: bool = False) -> list[tuple[str, float]]:
    """Every heuristic variant of a track with its mean JCT in hours over the track's episodes (its
    window's jobs when it has one), lowest first, as ``gpuplace-bench yardstick`` ranks them: the
    first is what the track's ``best_heuristic`` records."""
    from .progress import progress_bar

    with progress_bar(total=None, desc=f"{track} yardstick: episodes", disable=not show_progress) as bar:
        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        rows = _core.bench_yardstick(track, version, threads, progress if show_progress else None)
    return [(name, jct / 3600.0) for name, jct in rows]


def submit(result: str | os.PathLike, repo: str | os.PathLike = ".", command: str | None = None, overwrite: bool = False,
           threads: int = 0, regenerate: bool = True) -> str:
    """``gpuplace-bench submit`` from Python: validates a result file, copies it into
    ``<repo>/bench/results`` (a Python policy's ``command``, the commands that reproduce it, training
    included, into ``bench/commands.json``) and regenerates the leaderboard with
    ``<repo>/scripts/leaderboard.py``. Returns the path it was submitted as. A ValueError naming the
    file when it is invalid, exists already (``overwrite`` replaces it) or lacks its command."""
    results = os.path.join(os.fspath(repo), "bench", "results")
    if not os.path.isdir(results):
        raise ValueError(f"submit: {results} is not a folder (--repo names the gpuplace repository)")
    text, source = _result_text(result)
    ok, _how, msg = _core.bench_validate(text, source, threads, False)
    if not ok:
        raise ValueError(f"submit: {source} is not valid, nothing submitted: {msg}")
    d = json.loads(text)
    kind = d["policy"]["kind"]
    dest = os.path.join(results, _core.bench_result_file_name(d["track"]["name"], d["policy"]["name"]))
    if os.path.exists(dest) and not overwrite:
        raise ValueError(f"submit: {dest} exists (--overwrite replaces it)")
    if kind not in ("heuristic", "planner", "model") and not command:  # bench run reproduces the others by name
        raise ValueError(f"submit: a {kind} policy's result needs the commands that reproduce it (training included): "
                         'give --command "..."')
    if command:
        path = os.path.join(os.fspath(repo), "bench", "commands.json")
        commands = {}
        if os.path.exists(path):
            with open(check_input_file(path, "commands file"), encoding="utf-8") as f:
                commands = json.load(f)
        commands[os.path.basename(dest)] = command
        atomic_write(path, json.dumps(commands, indent=1) + "\n")
    atomic_write(dest, text)
    print(f"{source}: valid ({msg}); submitted as {dest}", flush=True)
    script = os.path.join(os.fspath(repo), "scripts", "leaderboard.py")
    if regenerate:
        if not os.path.isfile(script):
            print(f"warning: no {script}: regenerate the leaderboard with python3 scripts/leaderboard.py", file=sys.stderr)
        elif subprocess.run([sys.executable, script]).returncode != 0:
            raise ValueError(f"submit: the result is in {dest}, but {script} failed: run it again to regenerate the "
                             "leaderboard")
    return dest


def load_callable(spec: str) -> Policy:
    """``module:function`` -> the function (a policy (obs, mask) -> action)."""
    mod, sep, attr = spec.partition(":")
    if not sep or not mod or not attr:
        raise ValueError(f"--callable {spec!r}: expected module:function (e.g. mypkg.agents:act)")
    fn = importlib.import_module(mod)
    for part in attr.split("."):
        fn = getattr(fn, part)
    if not callable(fn):
        raise ValueError(f"--callable {spec}: {attr} is not callable")
    return fn


def cmd_tracks(args) -> int:
    for t in tracks(args.version):
        print(f"{t['name']:<22} {t['version']}  {t['episodes']:3d} episodes (seeds {t['seeds'][0]}..)  "
              f"best heuristic {t['best_heuristic']:<32} {t['about']}")
    return 0


def _items(joined: str | None, option: str) -> list[str]:
    """A comma-separated list option's items; a ValueError naming an empty one."""
    if joined is None:
        return []
    items = [x.strip() for x in joined.split(",")]
    if not all(items):
        raise ValueError(f"{option} {joined!r}: an empty item (expected comma-separated names)")
    return items


def _add_plugin(p) -> None:
    p.add_argument("--plugin", action="append", metavar="FILE.py|MODULE",
                   help="import user code that registers policies (@gpuplace.register_policy) so that --policy "
                        "(or a result's policy) can name them; repeatable")


def _load_plugins(args) -> None:
    from .registry import load_plugin

    for spec in args.plugin or []:
        load_plugin(spec)


def cmd_run(args) -> int:
    from .progress import progress_bar

    _load_plugins(args)
    if args.scenario is not None:  # a track of one's own, as gpuplace-bench run --scenario
        return _run_scenario(args)
    names = [t["name"] for t in tracks(args.version)] if args.suite else _items(args.track, "--track")
    if not names:
        raise ValueError("run: give --track T, --suite or --scenario FILE")
    policies: list[tuple[str, str | Policy, str | None]] = [(p, p, None) for p in _items(args.policy, "--policy")]
    if args.callable:
        policies.append((args.name or args.callable, load_callable(args.callable), None))
    if args.sb3:
        fn, queue = sb3_policy(args.sb3)
        policies.append((args.name or "maskable_ppo:" + os.path.basename(args.sb3), fn, queue))
    if args.rllib:
        fn, queue = rllib_policy(args.rllib)
        policies.append((args.name or "rllib:" + os.path.basename(os.path.normpath(args.rllib)), fn, queue))
    if not policies:
        raise ValueError("run: give --policy NAME, --callable module:function, --sb3 ZIP or --rllib PATH")
    runs = [(t, n, p, q) for t in names for n, p, q in policies]
    if args.out and len(runs) != 1:
        raise ValueError(f"--out writes one result ({len(runs)} runs asked for): give --out-dir")
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    print(_core.bench_row_header())
    skipped = 0
    with progress_bar(total=len(runs), desc="bench runs", disable=args.quiet) as bar:
        for track, n, p, q in runs:
            path = args.out or (os.path.join(args.out_dir, _core.bench_result_file_name(track, n)) if args.out_dir else None)
            if path and args.out_dir and not args.overwrite and os.path.exists(path):
                bar.write(f"{path} exists, kept (--overwrite runs it again)")
                bar.update(1)
                continue
            try:
                r = run(track, p, name=n, version=args.version, threads=args.threads, commit=args.commit,
                        keep_actions=not args.hash_only or not isinstance(p, str), queue=q)
            except (_core.Error, ValueError) as e:
                if len(runs) == 1:
                    raise
                bar.write(f"track {track}: {n} cannot run there, skipped: {e}")
                skipped += 1
                bar.update(1)
                continue
            bar.write(r.row)
            if path:
                r.save(path)
            bar.update(1)
    if skipped:
        print(f"{skipped} runs skipped (above)")
    return 1 if skipped else 0


def run_scenario(scenario, policy: str, *, episodes: int = 10, best: str = "pack", threads: int = 0,
                 commit: str | None = None, keep_actions: bool = True) -> BenchResult:
    """``gpuplace-bench run --scenario``: a policy by name on a track of one's own (a scenario: preset
    name, file, JSON text, dict or Scenario; ``episodes`` held-out seeds from 1000000; paired
    differences against heuristic variant ``best``). Its result holds the whole scenario and
    validates against it."""
    from .config import scenario_of

    r = _core.bench_run_scenario(scenario_of(scenario), policy, episodes, best, threads, _commit(commit), keep_actions)
    return BenchResult(r["json"], r["row"])


def _run_scenario(args) -> int:
    if args.callable or args.sb3 or args.rllib or args.suite or args.track:
        raise ValueError("run --scenario: policies by name (--policy) on the scenario only, as gpuplace-bench's")
    names = _items(args.policy, "--policy")
    if not names:
        raise ValueError("run --scenario: give --policy NAME")
    if args.out and len(names) != 1:
        raise ValueError(f"--out writes one result ({len(names)} policies asked for): give --out-dir")
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    print(_core.bench_row_header())
    for n in names:
        r = run_scenario(args.scenario, n, episodes=args.episodes, best=args.best, threads=args.threads,
                         commit=args.commit, keep_actions=not args.hash_only)
        print(r.row)
        d = r.data
        path = args.out or (os.path.join(args.out_dir, _core.bench_result_file_name(d["track"]["name"], n))
                            if args.out_dir else None)
        if path:
            r.save(path)
    return 0


def cmd_validate(args) -> int:
    _load_plugins(args)
    bad = 0
    for f in args.files:
        ok, _how, msg = validate(f, args.threads, args.rerun_planners)
        print(f"{f}: {'valid' if ok else 'INVALID'}: {msg}")
        bad += not ok
    return 1 if bad else 0


def cmd_leaderboard(args) -> int:
    text = leaderboard(args.results, args.threads, check=not args.no_validate)
    if args.out:
        atomic_write(args.out, text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def cmd_yardstick(args) -> int:
    t = next((t for t in tracks(args.version) if t["name"] == args.track), None)
    rows = yardstick(args.track, args.version, args.threads, show_progress=not args.quiet)
    best = t["best_heuristic"] if t else ""
    for name, jct in rows:
        print(f"{name:<36} {jct:10.4f} h{'  <- the track' + chr(39) + 's best heuristic' if name == best else ''}")
    print(f"best: {rows[0][0]} ({args.track} {args.version} records {best})")
    if args.check and rows[0][0] != best:
        print(f"track {args.track} {args.version}: the best heuristic is {rows[0][0]}, the track records {best}",
              file=sys.stderr)
        return 1
    return 0


def cmd_submit(args) -> int:
    submit(args.file, args.repo, args.command, args.overwrite, args.threads)
    return 0


def _example(line: str) -> str:
    return f"example: {line}"


_THREADS = count(0, 4096, "a number of threads (0: every core)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gpuplace bench", description=__doc__.split("\n\n")[0],
                                epilog=_example("python -m gpuplace bench run --track cluster-16 --policy pack+sjf"))
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tracks", help="list the tracks", epilog=_example("python -m gpuplace bench tracks"))
    t.add_argument("--version", default=VERSION)
    t.set_defaults(fn=cmd_tracks)
    r = sub.add_parser("run", help="score policies on tracks (or the whole suite) and write result JSON",
                       epilog=_example("python -m gpuplace bench run --track cluster-16 --policy pack+sjf,first_fit+fifo "
                                       "--out-dir results"))
    g = r.add_mutually_exclusive_group()
    g.add_argument("--track", nargs="+", action=comma_list, help="track(s), comma-separated")
    g.add_argument("--suite", action="store_true", help="every track of the version")
    r.add_argument("--scenario", help="a track of one's own: a scenario file or preset (not versioned; its results hold "
                                      "the whole scenario and validate against it)")
    r.add_argument("--episodes", type=count(1, 100000), default=10, help="--scenario: held-out seeds 1000000..")
    r.add_argument("--best", default="pack", help="--scenario: the heuristic variant of the paired differences")
    r.add_argument("--policy", nargs="+", action=comma_list,
                   help="heuristic variants (pack+sjf), rollout planners (rollout16:pack_wait+sjf; placement-mode tracks), "
                        "shipped models (default) or C++ checkpoints, comma-separated")
    r.add_argument("--callable", help="a Python policy module:function, (obs, mask) -> action")
    r.add_argument("--sb3", metavar="ZIP", help="an SB3 MaskablePPO model (.zip), acting greedily (needs gpuplace[sb3])")
    r.add_argument("--rllib", metavar="PATH", help="an RLlib checkpoint (gpuplace.rllib.train's out/checkpoint, or its "
                                                    "module's folder), acting greedily (needs gpuplace[rllib])")
    r.add_argument("--name", help="the name of --callable's, --sb3's or --rllib's policy in the result (default: "
                                  "module:function, maskable_ppo:<file>, rllib:<folder>)")
    o = r.add_mutually_exclusive_group()
    o.add_argument("--out", help="write the result here (one track and one policy)")
    o.add_argument("--out-dir", help="write each result as <track>__<policy>.json here (existing ones are kept)")
    r.add_argument("--overwrite", action="store_true", help="with --out-dir: run again results that exist")
    r.add_argument("--hash-only", action="store_true", help="record each episode's action hash only (named policies)")
    r.add_argument("--commit", help="the source's commit to record (default: $GPUPLACE_COMMIT, else none)")
    r.add_argument("--version", default=VERSION)
    r.add_argument("--threads", type=_THREADS, default=0, help="worker threads over episodes (0 = all cores)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_plugin(r)
    r.set_defaults(fn=cmd_run)
    v = sub.add_parser("validate", help="re-run (or replay) result files and check them bit for bit",
                       epilog=_example("python -m gpuplace bench validate results/cluster-16__pack+sjf.json"))
    v.add_argument("files", nargs="+")
    v.add_argument("--threads", type=_THREADS, default=0)
    v.add_argument("--rerun-planners", action="store_true",
                   help="play a rollout planner's futures again (slow) instead of replaying its recorded actions")
    _add_plugin(v)
    v.set_defaults(fn=cmd_validate)
    b = sub.add_parser("leaderboard", help="validate result files and rank them per track (markdown)",
                       epilog=_example("python -m gpuplace bench leaderboard bench/results --out leaderboard.md"))
    b.add_argument("results", nargs="+", help="result files, or folders of them")
    b.add_argument("--out", help="write the markdown here (default: print it)")
    b.add_argument("--threads", type=_THREADS, default=0)
    b.add_argument("--no-validate", action="store_true", help="rank without validating first")
    b.set_defaults(fn=cmd_leaderboard)
    y = sub.add_parser("yardstick", help="run every heuristic variant on a track and print them by mean JCT",
                       epilog=_example("python -m gpuplace bench yardstick --track proximity_drl --check"))
    y.add_argument("--track", required=True, help="the track")
    y.add_argument("--check", action="store_true", help="exit 1 when the best is not the heuristic the track records")
    y.add_argument("--version", default=VERSION)
    y.add_argument("--threads", type=_THREADS, default=0, help="worker threads (0 = all cores)")
    y.add_argument("--quiet", action="store_true", help="no progress bar")
    y.set_defaults(fn=cmd_yardstick)
    u = sub.add_parser("submit", help="validate a result, add it to bench/results and regenerate the leaderboard",
                       epilog=_example("python -m gpuplace bench submit result.json"))
    u.add_argument("file", help="the result JSON file")
    u.add_argument("--repo", default=".", help="the gpuplace repository (its bench/results, bench/commands.json and "
                                               "scripts/leaderboard.py)")
    u.add_argument("--command", help="a Python policy's commands that reproduce the result, training included (into "
                                     "bench/commands.json)")
    u.add_argument("--overwrite", action="store_true", help="replace a result of the same track and policy")
    u.add_argument("--threads", type=_THREADS, default=0, help="worker threads (0 = all cores)")
    u.set_defaults(fn=cmd_submit)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(parser(), argv)
