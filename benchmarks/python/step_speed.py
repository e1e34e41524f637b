"""Step throughput from Python, side by side in one run:

- the Gymnasium env (gym.make, wrappers included, and the bare GymnasiumEnv): step + action_masks;
- the raw batched API (gpuplace._core.VectorEnv), 1 and 2 threads, with the
  actions from NumPy (first valid GPU, or a uniformly random valid GPU) or from the C++ sampler
  (VectorEnv.sample_valid_actions(out) then step(out), or the fused VectorEnv.step_random(out));
- the SB3 VecEnv facade (gpuplace.sb3.SB3VecEnv), NumPy first-fit or C++-sampled actions;
- the RLlib batched facade (gpuplace.rllib.RLlibVectorEnv: Dict observations, NEXT_STEP autoreset),
  NumPy random valid actions, as RLlib's env runner steps it (needs the rllib extra);
- the pure-Python/NumPy reference env (benchmarks/python/reference_env.py) on the same jobs;
- optionally the C++ single env (perf_env's JSON), for the C++ / pure-Python ratio.

Actions: the first valid GPU of each mask (argmax), a uniformly random valid GPU drawn in NumPy,
or the C++ sampler (uniform among the valid actions, one random stream per env, deterministic by
seed); the reference env and the single env's "random" rows draw uniformly among the valid GPUs.
Usage:

    python benchmarks/python/step_speed.py                       # default scenario + proximity_drl
    python benchmarks/python/step_speed.py --seconds 2 --json out.json --cxx build-perf/benchmarks/perf_env
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import platform
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np

import gpuplace
from gpuplace import _core

_HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("reference_env", _HERE / "reference_env.py")
reference_env = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference_env)

GYM_IDS = {"default": "gpuplace/Default-v0", "proximity_drl": "gpuplace/ProximityDRL-v0"}


def timed(fn, seconds, repeats):
    """Median steps/s over `repeats` runs of fn(deadline) -> steps, by the wall clock and by the
    process's CPU time (all threads): on a shared machine the CPU rate is the one to compare."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        steps = fn(t0 + seconds)
        wall.append(steps / (time.perf_counter() - t0))
        cpu.append(steps / max(time.process_time() - c0, 1e-9))
    return Rate(float(np.median(wall)), float(np.median(cpu)))


class Rate:
    """Steps per second by wall clock and per CPU-second."""

    def __init__(self, wall, cpu):
        self.wall, self.cpu = wall, cpu


def bench_gym(scenario, seconds, repeats, wrapped, random_actions):
    env = gym.make(GYM_IDS[scenario]) if wrapped else gpuplace.GymnasiumEnv(scenario)
    base = env.unwrapped
    G = base.num_gpus
    rng = np.random.default_rng(0)

    def run(deadline):
        env.reset(seed=0)
        steps = 0
        while True:
            for _ in range(256):
                mask = base.action_masks()
                if random_actions:
                    a = int(rng.choice(np.flatnonzero(mask[:G])))
                else:
                    a = int(mask[:G].argmax())
                _, _, term, trunc, _ = env.step(a)
                steps += 1
                if term or trunc:
                    env.reset()
            if time.perf_counter() > deadline:
                return steps

    return timed(run, seconds, repeats)


def bench_raw_vector(scenario, num_envs, threads, seconds, repeats, actions="first_fit"):
    """Raw VectorEnv steps/s; actions: first_fit (NumPy argmax of the mask), numpy_random (NumPy,
    uniform among the valid GPUs), sampler (sample_valid_actions(out) then step(out)) or
    step_random (the fused C++ sampler). Also returns the rate of the time inside the step call."""
    v = gpuplace.make_core_vector_env(scenario, num_envs, threads)
    G = int(v.num_gpus)
    masks = v.action_masks  # (N, G + 1) view, updated in place
    buf = np.zeros(num_envs, np.int64)
    rng = np.random.default_rng(0)
    v.reset(0)
    step_only = []

    def choose():
        if actions == "first_fit":
            return masks[:, :G].argmax(axis=1)  # int64, first valid GPU
        if actions == "numpy_random":
            return (rng.random((num_envs, G)) * masks[:, :G]).argmax(axis=1)  # uniform among valid GPUs
        return v.sample_valid_actions(buf)

    def run(deadline):
        steps = 0
        spent = 0.0
        while True:
            for _ in range(32):
                if actions == "step_random":
                    t = time.perf_counter()
                    v.step_random(buf)
                else:
                    a = choose()
                    t = time.perf_counter()
                    v.step(a)
                spent += time.perf_counter() - t
                steps += num_envs
            if time.perf_counter() > deadline:
                step_only.append(steps / spent)
                return steps

    rate = timed(run, seconds, repeats)
    return rate, Rate(float(np.median(step_only)), float("nan"))


def bench_sb3(scenario, num_envs, threads, seconds, repeats, actions="first_fit"):
    from gpuplace.sb3 import SB3VecEnv

    venv = SB3VecEnv(scenario, num_envs=num_envs, num_threads=threads)
    venv.seed(0)
    venv.reset()
    G = int(venv.core.num_gpus)
    buf = np.zeros(num_envs, np.int64)

    def run(deadline):
        steps = 0
        while True:
            for _ in range(16):
                if actions == "first_fit":
                    a = venv.action_masks()[:, :G].argmax(axis=1)
                else:
                    a = venv.core.sample_valid_actions(buf)
                venv.step(a)
                steps += num_envs
            if time.perf_counter() > deadline:
                return steps

    return timed(run, seconds, repeats)


def bench_rllib(scenario, num_envs, seconds, repeats):
    """RLlibVectorEnv steps/s with uniformly random valid actions drawn in NumPy from its Dict
    observation's mask (a restarting env's action is ignored, whatever it is)."""
    from gpuplace.rllib.env import RLlibVectorEnv

    vec = RLlibVectorEnv(scenario, num_envs)
    rng = np.random.default_rng(0)
    obs, _ = vec.reset(seed=0)

    def run(deadline):
        nonlocal obs
        steps = 0
        while True:
            for _ in range(16):
                obs, *_ = vec.step((rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(axis=1))
                steps += num_envs
            if time.perf_counter() > deadline:
                return steps

    return timed(run, seconds, repeats)


def bench_reference(seconds, repeats, seed=0):
    core = gpuplace.make_core_env("proximity_drl")
    jobs = reference_env.jobs_from_core(core, seed)
    env = reference_env.ReferenceEnv()
    rng = np.random.default_rng(0)

    def run(deadline):
        _, mask = env.reset(jobs)
        steps = 0
        while True:
            for _ in range(64):
                a = int(rng.choice(np.flatnonzero(mask[: env.G])))
                _, _, term, mask = env.step(a)
                steps += 1
                if term:
                    _, mask = env.reset(jobs)
            if time.perf_counter() > deadline:
                return steps

    return timed(run, seconds, repeats)


def cxx_rate(binary, bench_filter):
    """items_per_second (median of 3, Google Benchmark's CPU-time rate) of a perf_env benchmark."""
    if not binary:
        return None
    out = subprocess.run([binary, f"--benchmark_filter={bench_filter}$", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return float(b["items_per_second"])
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="time per repetition")
    ap.add_argument("--repeats", type=int, default=3, help="repetitions (the median is reported)")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--cxx", default="", help="path of perf_env, to add the C++ single-env rate")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("--skip-sb3", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated subset of: gym, raw, sb3, rllib, reference")
    args = ap.parse_args(argv)

    rows = []

    def add(name, scenario, rate, note=""):
        rows.append({"name": name, "scenario": scenario, "steps_per_s": rate.wall, "steps_per_cpu_s": rate.cpu,
                     "note": note})
        print(f"{name:<46} {scenario:<14} {rate.wall:>12,.0f} {rate.cpu:>12,.0f}  {note}", flush=True)

    print(f"python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}, "
          f"{platform.machine()}, {args.repeats} x {args.seconds}s, median")
    print(f"{'':<46} {'scenario':<14} {'steps/s':>12} {'steps/CPU-s':>12}")
    only = set(filter(None, args.only.split(","))) or {"gym", "raw", "sb3", "rllib", "reference"}
    for sc in ("default", "proximity_drl") if "gym" in only else ():
        add("gym.make env: step + action_masks", sc, bench_gym(sc, args.seconds, args.repeats, True, False), "first fit")
        add("GymnasiumEnv: step + action_masks", sc, bench_gym(sc, args.seconds, args.repeats, False, False), "first fit")
        add("GymnasiumEnv: step + action_masks, random", sc, bench_gym(sc, args.seconds, args.repeats, False, True),
            "np.random choice among valid")
    raw_notes = {"first_fit": "numpy argmax actions (first valid GPU)",
                 "numpy_random": "numpy random valid actions",
                 "sampler": "sample_valid_actions(out) + step(out)",
                 "step_random": "step_random(out): fused C++ sampler"}
    for threads in (1, 2) if "raw" in only else ():
        for kind, note in raw_notes.items():
            rate, step_only = bench_raw_vector("default", args.num_envs, threads, args.seconds, args.repeats, kind)
            add(f"_core.VectorEnv x{args.num_envs}, {threads} thread(s), {kind}", "default", rate, note)
            if kind == "first_fit":
                add(f"_core.VectorEnv x{args.num_envs}, {threads} thread(s), step only", "default", step_only,
                    "time inside VectorEnv.step")
    if not args.skip_sb3 and "sb3" in only:
        for threads in (1, 2):
            for kind, note in (("first_fit", "numpy argmax of action_masks()"), ("sampler", "C++ sampled actions")):
                add(f"SB3VecEnv x{args.num_envs}, {threads} thread(s), {kind}", "default",
                    bench_sb3("default", args.num_envs, threads, args.seconds, args.repeats, kind), note)
    if "rllib" in only and importlib.util.find_spec("ray") is not None:
        for n in (8, args.num_envs):
            add(f"RLlibVectorEnv x{n} (NEXT_STEP)", "default", bench_rllib("default", n, args.seconds, args.repeats),
                "numpy random valid actions")
    ref = bench_reference(args.seconds, args.repeats) if "reference" in only else None
    if ref:
        add("pure-Python reference env", "proximity_drl", ref, "random valid actions")
    cxx = cxx_rate(args.cxx, "BM_step_random_proximity_drl")
    if cxx and ref:
        add("C++ env (perf_env), random valid actions", "proximity_drl", Rate(float("nan"), cxx), "CPU time")
        print(f"  C++ / pure-Python reference (CPU time): {cxx / ref.cpu:,.0f}x;  "
              f"C++ / Proximity-DRL env (~2,400 steps/s): {cxx / 2400:,.0f}x")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"python": sys.version, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
