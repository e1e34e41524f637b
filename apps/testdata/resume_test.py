#!/usr/bin/env python3
"""gpuplace-train loses nothing: a run killed (SIGKILL) during imitation, during PPO, between
restarts, or halfway through writing a state or the checkpoint, then resumed with --resume, writes
the same ppo.json byte for byte as an uninterrupted run and the same logs but for their wall-time
columns; SIGINT / SIGTERM save the state and exit with 130 / 143; a second SIGINT exits at once;
a corrupted state falls back to the previous one or is named in the error; a resume with another
config is refused, naming what differs.

    resume_test.py <gpuplace-train> <gpuplace-train-faults> <config.json> <work folder>   (ctest: app_train_resume)

The faults are injected by gpuplace-train-faults (apps/testdata/train_faults.cpp): gpuplace-train's
program with a kill at the n-th event of the run's seams.
"""
import csv
import os
import shutil
import subprocess
import sys

exe, faults_exe, config, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def run(out, *args, kill=None, resume=False):
    prog = [faults_exe, kill] if kill else [exe]
    cmd = [*prog, "--out", out, "--no-plot", *args] if resume else [*prog, "--config", config, "--out", out, "--no-plot", *args]
    if resume:
        cmd.append("--resume")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def check(cond, what, r=None):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
        if r is not None:
            print("  exit", r.returncode, "\n  stdout:", r.stdout[-2000:], "\n  stderr:", r.stderr[-2000:])


def rows(path, drop):
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    keep = [i for i, name in enumerate(table[0]) if name not in drop]
    return [[row[i] for i in keep] for row in table]


def same_as_reference(out, what):
    with open(os.path.join(ref, "ppo.json"), "rb") as a, open(os.path.join(out, "ppo.json"), "rb") as b:
        check(a.read() == b.read(), f"{what}: ppo.json differs from the uninterrupted run's")
    logs = ["learning.csv"] + [f"seed_{k}/learning.csv" for k in (1, 2, 3)]
    for log in logs:
        check(rows(os.path.join(ref, log), {"seconds", "steps_per_sec"}) == rows(os.path.join(out, log), {"seconds", "steps_per_sec"}),
              f"{what}: {log} differs (wall-time columns aside)")
    check(rows(os.path.join(ref, "restarts.csv"), {"seconds"}) == rows(os.path.join(out, "restarts.csv"), {"seconds"}),
          f"{what}: restarts.csv differs (seconds aside)")


ref = os.path.join(work, "reference")
r = run(ref)
check(r.returncode == 0, "the uninterrupted run", r)

# SIGKILL at several points, then --resume
for kill, what in [("iteration:4", "killed during imitation"), ("iteration:15", "killed during PPO"),
                   ("restart:2", "killed between restarts"), ("write-state:3", "killed while a state is written"),
                   ("write-state:9", "killed while a state is written, later"),
                   ("write-checkpoint:1", "killed while ppo.json is written")]:
    out = os.path.join(work, kill.replace(":", "_"))
    r = run(out, kill=kill)
    check(r.returncode == -9, f"{what}: the run was killed", r)
    r = run(out, resume=True)
    check(r.returncode == 0, f"{what}: the resume", r)
    if r.returncode == 0:
        same_as_reference(out, what)

# SIGINT / SIGTERM: the iteration finishes, the state is saved, exit 130 / 143
for sig, code in [("INT", 130), ("TERM", 143), ("INT2", 130)]:
    out = os.path.join(work, "signal_" + sig)
    r = run(out, kill="iteration:10:" + sig)
    check(r.returncode == code, f"SIG{sig}: exit code {code}", r)
    if sig != "INT2":
        check("--resume" in r.stdout, f"SIG{sig}: prints how to resume", r)
        check(os.path.exists(os.path.join(out, "seed_1", "state.bin")), f"SIG{sig}: the state is on disk")
    if sig == "INT":
        # a corrupted state: the previous one is used
        bad = os.path.join(work, "corrupted")
        shutil.copytree(out, bad)
        with open(os.path.join(bad, "seed_1", "state.bin"), "r+b") as f:
            f.truncate(os.path.getsize(os.path.join(bad, "seed_1", "state.bin")) // 2)
        r = run(bad, resume=True)
        check(r.returncode == 0 and "using the previous state" in r.stdout, "a truncated state: the previous one is used", r)
        if r.returncode == 0:
            same_as_reference(bad, "resumed from the previous state")
        # both unreadable: the error names the file
        worse = os.path.join(work, "corrupted_both")
        shutil.copytree(out, worse)
        for name in ("state.bin", "state.prev.bin"):
            p = os.path.join(worse, "seed_1", name)
            with open(p, "r+b") as f:
                f.seek(40)
                f.write(b"\xff\xfe\xfd")
        r = run(worse, resume=True)
        check(r.returncode == 1 and "seed_1/state.bin: corrupted or truncated" in r.stderr, "two corrupted states: a clear error", r)
        # another config: refused, naming what differs
        r = run(out, "--config", config, "--steps", "999", resume=True)
        check(r.returncode == 1 and "/ppo/total_steps" in r.stderr, "a resume with another config is refused", r)
    r = run(out, resume=True)
    check(r.returncode == 0, f"SIG{sig}: the resume", r)
    if r.returncode == 0:
        same_as_reference(out, f"SIG{sig}")

# a saved state deleted: the resume names the missing file instead of starting over
gone = os.path.join(work, "state_deleted")
r = run(gone, kill="iteration:10:INT")
if r.returncode == 130:
    for name in ("state.bin", "state.prev.bin"):
        if os.path.exists(os.path.join(gone, "seed_1", name)):
            os.remove(os.path.join(gone, "seed_1", name))
    r = run(gone, resume=True)
    check(r.returncode == 1 and os.path.join(gone, "seed_1", "state.bin") + " does not exist" in r.stderr,
          "a deleted state: the resume names it", r)
else:
    check(False, "the run stopped by SIGINT for the deleted-state case", r)

# nothing to resume
r = run(os.path.join(work, "empty"), resume=True)
check(r.returncode == 1 and "holds no run to resume" in r.stderr, "--resume of a folder without a run", r)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
