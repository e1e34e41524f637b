"""Does a Stable-Baselines3 user learn as well as the reference C++ PPO? MaskablePPO with
gpuplace.sb3.PerGpuPolicy and the C++ main job's recipe (gpuplace.sb3.train_per_gpu: clone the
teacher for 400k env steps, 10 value-only iterations, PPO to 600k steps, the best of R restarts on
16 validation seeds) against the C++ PPO trained by `gpuplace-train --compare` (the same budget:
R restarts of 400k + 600k env steps), and against every heuristic under every queue policy, on
held-out seeds, with paired differences. Both trainers run R restarts, P at a time (one per core),
and their wall time and env steps per second are reported side by side.

    python benchmarks/python/sb3_vs_cpp.py --cpp-train build/apps/gpuplace-train --out out/sb3_vs_cpp
    python benchmarks/python/sb3_vs_cpp.py --cpp-dir out/cpp_main --out out/sb3_vs_cpp  # reuse a C++ run
    python benchmarks/python/sb3_vs_cpp.py --quick ...        # tiny budgets: checks that everything runs

Writes OUT/table.md (the tables for docs/python.md), OUT/results.json, OUT/compare.csv, and each SB3
restart's model, C++ checkpoint and logs under OUT/sb3/seed_K/.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import gpuplace
from gpuplace import _core

QUEUES = ("fifo", "backfill", "sjf", "fewest_gpus")


def sb3_restart(args: dict) -> dict:
    """One SB3 training run (in a worker process)."""
    import torch

    from gpuplace.sb3 import save_cpp_checkpoint, train_per_gpu

    torch.set_num_threads(1)
    cpu0 = time.process_time()
    d = args["dir"]
    os.makedirs(d, exist_ok=True)
    model, info = train_per_gpu(args["scenario"], total_timesteps=args["ppo_steps"], teacher=args["teacher"] or None,
                                imitation_steps=args["imitation_steps"], value_warmup=args["value_warmup"],
                                num_envs=args["num_envs"], seed=args["seed"], validation_seeds=args["validation_seeds"],
                                log_dir=d, show_progress=False)
    model.save(os.path.join(d, "maskable_ppo.zip"))
    save_cpp_checkpoint(model, os.path.join(d, "ppo.json"), info["scenario"])
    pre = info["pretrain"]
    return {"seed": args["seed"], "best_val_jct": info["best_val_jct"], "best_timesteps": info["best_timesteps"],
            "env_steps": info["env_steps"], "seconds": info["seconds"], "cpu_seconds": time.process_time() - cpu0,
            "agreement": pre.get("agreement"),
            "imitation_seconds": pre.get("seconds"), "dir": d}


def run_cpp(binary: str, out: str, restarts: int, steps: int | None, seeds: int) -> str:
    cmd = ["nice", "-n", "5", binary, "--compare", "--out", out, "--restarts", str(restarts), "--seeds", str(seeds),
           "--no-plot"]
    if steps:
        cmd += ["--steps", str(steps)]
    os.makedirs(out, exist_ok=True)
    print("C++:", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(out, "train.log"), "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    with open(os.path.join(out, "cpu_seconds.txt"), "w") as f:  # training and the --compare evaluation
        f.write(f"{cpu:.1f}\n")
    print(f"C++ done in {time.perf_counter() - t0:.0f} s ({cpu:.0f} s CPU)", flush=True)
    return out


def cpp_summary(d: str) -> dict:
    """Wall time, env steps/s and restarts of a gpuplace-train output directory (from its log)."""
    text = open(os.path.join(d, "train.log")).read() if os.path.exists(os.path.join(d, "train.log")) else ""
    m = re.search(r"trained in (\d+):(\d+):(\d+) \(([\d.]+) env steps/s over (\d+) run", text)
    res = {}
    if m:
        h, mi, s, sps, runs = m.groups()
        res = {"seconds": int(h) * 3600 + int(mi) * 60 + int(s), "steps_per_second": float(sps), "restarts": int(runs)}
    rs = os.path.join(d, "restarts.csv")
    if os.path.exists(rs):
        rows = [ln.split(",") for ln in open(rs).read().split("\n")[1:] if ln.strip()]
        res["best_val_jct"] = [float(r[1]) for r in rows]
        res["run_seconds"] = [float(r[3]) for r in rows]
        res["env_steps"] = sum(int(r[2]) for r in rows)
    cpu = os.path.join(d, "cpu_seconds.txt")
    if os.path.exists(cpu):
        res["cpu_seconds"] = float(open(cpu).read())
    return res


def fmt_h(x: float) -> str:
    return f"{x / 3600:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--out", default="out/sb3_vs_cpp")
    ap.add_argument("--cpp-train", help="gpuplace-train binary: train the C++ reference (its main job) into OUT/cpp")
    ap.add_argument("--cpp-dir", help="or: an existing gpuplace-train --compare output directory (ppo.json, train.log)")
    ap.add_argument("--restarts", type=int, default=8, help="training runs per stack (the best on validation is kept)")
    ap.add_argument("--parallel", type=int, default=2, help="runs at a time (one per core)")
    ap.add_argument("--teacher", default="pack", help="SB3's teacher (the C++ main job clones pack)")
    ap.add_argument("--imitation-steps", type=int, default=400_000)
    ap.add_argument("--ppo-steps", type=int, default=600_000)
    ap.add_argument("--value-warmup", type=int, default=10)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--validation-seeds", type=int, default=16)
    ap.add_argument("--seeds", type=int, default=20, help="held-out seeds (1000000 + i)")
    ap.add_argument("--first-seed", type=int, default=1, help="training seeds first..first+restarts-1")
    ap.add_argument("--quick", action="store_true", help="tiny budgets, 2 restarts, 3 seeds")
    a = ap.parse_args()
    if a.quick:
        a.restarts, a.imitation_steps, a.ppo_steps, a.seeds, a.validation_seeds, a.value_warmup = 2, 4096, 4096, 3, 2, 1
    if not (a.cpp_train or a.cpp_dir):
        ap.error("give --cpp-train (to train the C++ reference) or --cpp-dir (an existing run)")
    os.makedirs(a.out, exist_ok=True)
    sc = gpuplace.load_scenario(a.scenario)

    # 1. the C++ reference
    cpp_dir = a.cpp_dir or run_cpp(a.cpp_train, os.path.join(a.out, "cpp"), a.restarts,
                                   a.ppo_steps if a.quick else None, a.seeds)
    cpp = cpp_summary(cpp_dir)

    # 2. SB3: R restarts, P at a time, each in its own process (one torch thread each)
    from gpuplace.sb3 import queue_policy_of, split_teacher, teacher_scenario

    queue = split_teacher(a.teacher)[1] if a.teacher else None
    train_sc = teacher_scenario(sc, a.teacher)
    jobs = [{"scenario": train_sc, "teacher": a.teacher, "imitation_steps": a.imitation_steps, "ppo_steps": a.ppo_steps,
             "value_warmup": a.value_warmup, "num_envs": a.num_envs, "seed": s,
             "validation_seeds": a.validation_seeds, "dir": os.path.join(a.out, "sb3", f"seed_{s}")}
            for s in range(a.first_seed, a.first_seed + a.restarts)]
    print(f"SB3: {a.restarts} restarts of MaskablePPO + PerGpuPolicy ({a.teacher} cloned for {a.imitation_steps} env "
          f"steps, PPO {a.ppo_steps}), {a.parallel} at a time", flush=True)
    t0 = time.perf_counter()
    runs = []
    with cf.ProcessPoolExecutor(max_workers=a.parallel, mp_context=mp.get_context("spawn")) as ex:
        for r in ex.map(sb3_restart, jobs):
            runs.append(r)
            print(f"  seed {r['seed']}: best validation JCT {fmt_h(r['best_val_jct'])} h after {r['best_timesteps']} PPO "
                  f"steps, {r['env_steps']} env steps in {r['seconds']:.0f} s (cloning agreement {r['agreement']:.3f})",
                  flush=True)
    sb3_wall = time.perf_counter() - t0
    sb3_steps = sum(r["env_steps"] for r in runs)
    win = min(runs, key=lambda r: r["best_val_jct"])

    # 3. held-out evaluation: every heuristic under every queue policy, the C++ PPO, the kept SB3
    #    model and each SB3 restart (for the median over training seeds)
    from sb3_contrib import MaskablePPO

    from gpuplace.evaluation import evaluate_agent, maskable_policy

    seeds = list(gpuplace.held_out_seeds(a.seeds))
    names = [f"{h}+{q}" for h in gpuplace.heuristic_names() for q in QUEUES]
    rep = gpuplace.evaluate(sc, names, seeds)
    net = _core.load_checkpoint(os.path.join(cpp_dir, "ppo.json"))
    r = _core.evaluate_network(sc, net, seeds, "cpp_ppo", 1)
    rep.add("cpp_ppo", r.per_seed("cpp_ppo"), r.returns("cpp_ppo"))
    sb3_name = "sb3_ppo" + (f"+{queue}" if queue and queue != queue_policy_of(sc) else "")
    per_restart = {}
    t_eval = time.perf_counter()
    for run in runs:
        model = MaskablePPO.load(os.path.join(run["dir"], "maskable_ppo.zip"), device="cpu")
        name = sb3_name if run is win else f"seed_{run['seed']}"
        sub = evaluate_agent(maskable_policy(model), train_sc, seeds, name=name)
        per_restart[run["seed"]] = sub.summary(name, "avg_jct")[0]
        if run is win:
            rep.add(name, sub.per_seed(name), sub.returns(name))
    eval_seconds = time.perf_counter() - t_eval
    with open(os.path.join(a.out, "compare.csv"), "w") as f:
        f.write(rep.csv())

    # 4. tables
    jct = {p: rep.summary(p, "avg_jct") for p in rep.policies}
    cpp_jct = jct["cpp_ppo"][0]
    sb3_jct = jct[sb3_name][0]
    best_h = min((p for p in names), key=lambda p: jct[p][0])
    paired = {d["other"]: d for d in rep.paired(sb3_name, "avg_jct")}
    lines = []
    lines.append(f"Scenario `{sc['name']}`, {a.seeds} held-out seeds (1000000 + i); mean JCT in hours, +- standard "
                 f"error; paired: {sb3_name} minus the other policy on the same seeds (+- standard error of the "
                 f"difference), seeds where {sb3_name} is lower.\n")
    lines.append(f"| policy | mean JCT (h) | p95 JCT (h) | paired difference (h) | {sb3_name} lower on |")
    lines.append("|---|---|---|---|---|")
    order = [sb3_name, "cpp_ppo"] + sorted(names, key=lambda p: jct[p][0])
    for p in order:
        m, se = jct[p]
        p95 = rep.summary(p, "p95_jct")
        if p == sb3_name:
            diff, wins = "", ""
        else:
            d = paired[p]
            diff, wins = f"{d['mean'] / 3600:+.3f} +- {d['sem'] / 3600:.3f}", f"{d['lower']}/{d['seeds']}"
        lines.append(f"| {p} | {fmt_h(m)} +- {fmt_h(se)} | {fmt_h(p95[0])} +- {fmt_h(p95[1])} | {diff} | {wins} |")
    gap = (sb3_jct - cpp_jct) / cpp_jct * 100
    lines.append("")
    lines.append(f"{sb3_name} vs cpp_ppo: {gap:+.1f}% mean JCT; best heuristic {best_h} {fmt_h(jct[best_h][0])} h.")
    med = statistics.median(per_restart.values())
    lines.append(f"SB3 held-out mean JCT of each restart (training seeds {a.first_seed}..{a.first_seed + a.restarts - 1}): "
                 + ", ".join(f"{fmt_h(per_restart[s])}" for s in sorted(per_restart)) + f" h; median {fmt_h(med)} h.")
    lines.append("")
    lines.append("| trainer | restarts (at a time) | env steps | wall time | env steps/s (wall) | CPU time | "
                 "env steps per CPU second | one run (median wall) |")
    lines.append("|---|---|---|---|---|---|---|---|")
    if cpp:
        c_cpu = cpp.get("cpu_seconds")
        lines.append(f"| C++ PPO (gpuplace-train) | {cpp.get('restarts')} ({a.parallel}) | {cpp.get('env_steps', 0):,} | "
                     f"{cpp['seconds'] / 60:.1f} min | {cpp['steps_per_second']:,.0f} | "
                     + (f"{c_cpu / 60:.1f} min (with --compare) | {cpp.get('env_steps', 0) / c_cpu:,.0f} | " if c_cpu else "- | - | ")
                     + f"{statistics.median(cpp.get('run_seconds', [0])):.0f} s |")
    s_cpu = sum(r.get("cpu_seconds", 0.0) for r in runs)
    lines.append(f"| MaskablePPO + PerGpuPolicy | {a.restarts} ({a.parallel}) | {sb3_steps:,} | {sb3_wall / 60:.1f} min | "
                 f"{sb3_steps / sb3_wall:,.0f} | {s_cpu / 60:.1f} min | {sb3_steps / max(s_cpu, 1e-9):,.0f} | "
                 f"{statistics.median(r['seconds'] for r in runs):.0f} s |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"args": vars(a), "cpp": cpp, "sb3_runs": runs, "sb3_wall_seconds": sb3_wall, "sb3_env_steps": sb3_steps,
                   "sb3_kept_seed": win["seed"], "sb3_heldout_per_restart": per_restart, "eval_seconds": eval_seconds,
                   "report": rep.to_json()}, f, indent=1)
    print(rep.paired_table(sb3_name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
