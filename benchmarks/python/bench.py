"""Step throughput from Python, side by side in one run:

- the Gymnasium env (gym.make, wrappers included, and the bare GpuPlaceEnv): step + action_masks;
- the raw batched API (gpuplace._core VectorEnv / TreeRouteVectorEnv), 1 and 2 threads;
- the SB3 VecEnv wrapper (gpuplace.vec_env.GpuPlaceVecEnv);
- the pure-Python/NumPy reference env (benchmarks/python/reference_env.py) on the same jobs;
- optionally the C++ single env (bench_env's JSON), for the C++ / pure-Python ratio.

Actions: the first valid GPU of each mask (argmax; a random valid action costs more in numpy than
the C++ step itself), except for the reference env and the single env's "random" rows, which draw
uniformly among the valid GPUs. Usage:

    python benchmarks/python/bench.py                       # default scenario + proximity_drl
    python benchmarks/python/bench.py --seconds 2 --json out.json --cxx build-bench/benchmarks/bench_env
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
    env = gym.make(GYM_IDS[scenario]) if wrapped else gpuplace.GpuPlaceEnv(scenario)
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


def bench_raw_vector(scenario, num_envs, threads, seconds, repeats):
    v = gpuplace.make_core_vector_env(scenario, num_envs, threads)
    G = int(v.num_gpus)
    masks = v.action_masks  # (N, G + 1) view, updated in place
    v.reset(0)
    step_only = []

    def run(deadline):
        steps = 0
        spent = 0.0
        while True:
            for _ in range(32):
                actions = masks[:, :G].argmax(axis=1)  # int64, first valid GPU
                t = time.perf_counter()
                v.step(actions)
                spent += time.perf_counter() - t
                steps += num_envs
            if time.perf_counter() > deadline:
                step_only.append(steps / spent)
                return steps

    rate = timed(run, seconds, repeats)
    return rate, Rate(float(np.median(step_only)), float("nan"))


def bench_sb3(scenario, num_envs, threads, seconds, repeats):
    from gpuplace.vec_env import GpuPlaceVecEnv

    venv = GpuPlaceVecEnv(scenario, num_envs=num_envs, num_threads=threads)
    venv.seed(0)
    venv.reset()
    G = int(venv.core.num_gpus)

    def run(deadline):
        steps = 0
        while True:
            for _ in range(16):
                actions = venv.action_masks()[:, :G].argmax(axis=1)
                venv.step(actions)
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
    """items_per_second (median of 3, Google Benchmark's CPU-time rate) of a bench_env benchmark."""
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
    ap.add_argument("--cxx", default="", help="path of bench_env, to add the C++ single-env rate")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("--skip-sb3", action="store_true")
    args = ap.parse_args(argv)

    rows = []

    def add(name, scenario, rate, note=""):
        rows.append({"name": name, "scenario": scenario, "steps_per_s": rate.wall, "steps_per_cpu_s": rate.cpu,
                     "note": note})
        print(f"{name:<46} {scenario:<14} {rate.wall:>12,.0f} {rate.cpu:>12,.0f}  {note}", flush=True)

    print(f"python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}, "
          f"{platform.machine()}, {args.repeats} x {args.seconds}s, median")
    print(f"{'':<46} {'scenario':<14} {'steps/s':>12} {'steps/CPU-s':>12}")
    for sc in ("default", "proximity_drl"):
        add("gym.make env: step + action_masks", sc, bench_gym(sc, args.seconds, args.repeats, True, False), "first fit")
        add("GpuPlaceEnv: step + action_masks", sc, bench_gym(sc, args.seconds, args.repeats, False, False), "first fit")
        add("GpuPlaceEnv: step + action_masks, random", sc, bench_gym(sc, args.seconds, args.repeats, False, True),
            "np.random choice among valid")
    for threads in (1, 2):
        rate, step_only = bench_raw_vector("default", args.num_envs, threads, args.seconds, args.repeats)
        add(f"_core.VectorEnv x{args.num_envs}, {threads} thread(s)", "default", rate, "incl. numpy argmax actions")
        add(f"_core.VectorEnv x{args.num_envs}, {threads} thread(s), step only", "default", step_only,
            "time inside VectorEnv.step")
    if not args.skip_sb3:
        for threads in (1, 2):
            add(f"SB3 GpuPlaceVecEnv x{args.num_envs}, {threads} thread(s)", "default",
                bench_sb3("default", args.num_envs, threads, args.seconds, args.repeats), "step + action_masks")
    ref = bench_reference(args.seconds, args.repeats)
    add("pure-Python reference env", "proximity_drl", ref, "random valid actions")
    cxx = cxx_rate(args.cxx, "BM_step_random_proximity_drl")
    if cxx:
        add("C++ env (bench_env), random valid actions", "proximity_drl", Rate(float("nan"), cxx), "CPU time")
        print(f"  C++ / pure-Python reference (CPU time): {cxx / ref.cpu:,.0f}x;  "
              f"C++ / Proximity-DRL env (~2,400 steps/s): {cxx / 2400:,.0f}x")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"python": sys.version, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
