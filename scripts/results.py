#!/usr/bin/env python3
"""Regenerates the result pages docs/results/*.md from one build of one commit: it runs each
program and writes what the program printed, under the command that printed it. The networks are
the reference ones shipped in data/models/ (trained by experiments/train_models.sh) and
examples/data/colocation_ppo.json, so no page needs training; every number is an evaluation on
held-out seeds, the same on every CPU.

    scripts/results.py [--build build] [--seeds 20] [--only default,philly,...]

The pages name the commands relative to the repository root (build/apps/..., build/examples/...).
"""
import argparse
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]

HEURISTICS = ["random", "first_fit", "pack", "load_balance", "topology_greedy", "pack_wait"]

# name -> (title, what the page shows, [(program, arguments)]); {seeds} and {out} are filled in
PAGES = {
    "default": (
        "Default scenario",
        "64 GPUs (2 racks x 4 DGX-A100 nodes), 160 jobs of the Gavel zoo at load 1.0, DEFER allowed. The "
        "reference PPO network (`data/models/default.json`, the `default` recipe) against every heuristic under "
        "every queue policy; hours, mean ± standard error over the held-out seeds, then the paired differences.",
        [("apps/gpuplace-train", ["--load", "default", "--seeds", "{seeds}", "--no-plot", "--out", "{out}"])],
    ),
    "proximity_drl": (
        "Proximity-DRL preset",
        "Proximity-DRL's 2 x 4 x 4 cluster, route cost and workload, no DEFER. The reference PPO network "
        "(`data/models/proximity_drl.json`) against every heuristic under every queue policy.",
        [("apps/gpuplace-train", ["--load", "proximity_drl", "--seeds", "{seeds}", "--no-plot", "--out", "{out}"])],
    ),
    "philly": (
        "Philly-derived traces",
        "The default cluster replaying Gavel's Philly-derived traces; the reference PPO network "
        "(`data/models/philly.json`, trained on the training files) compared on each held-out file.",
        [("apps/gpuplace-train", ["--config", "philly", "--load", "philly", "--seeds", "{seeds}", "--no-plot", "--out", "{out}"])],
    ),
    "colocation": (
        "Co-location",
        "16 GPUs, a burst of 200 single-GPU jobs of four models that share a GPU well, at most 2 jobs per "
        "32 GB GPU: exclusive GPUs, the co-location packer and a PPO network that co-locates "
        "(`examples/data/colocation_ppo.json`).",
        [("examples/example_colocation", ["{seeds}"])],
    ),
    "heterogeneous": (
        "Heterogeneous cluster",
        "V100, P100 and K80 servers with Gavel's per-type throughputs (the `heterogeneous` preset): every "
        "heuristic, type-aware or not, under every queue policy.",
        [("apps/gpuplace-eval", ["--scenario", "heterogeneous", "--seeds", "{seeds}", "--policies",
                                 ",".join(HEURISTICS + [f"{r}:{h}" for r in ("fastest_type", "throughput_greedy") for h in HEURISTICS]),
                                 "--queue", "fifo", "backfill", "sjf", "fewest_gpus"])],
    ),
}


def run(build: pathlib.Path, program: str, args: list[str]) -> tuple[str, str]:
    """Runs a program of the build; returns the command as a reader types it and its output."""
    exe = build / program
    if not exe.exists():
        sys.exit(f"results.py: {exe} does not exist (build the project first: scripts/setup.sh)")
    r = subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True)
    shown = " ".join(shlex.quote(a) for a in [os.path.relpath(exe, ROOT), *args])
    if r.returncode != 0:
        sys.exit(f"results.py: `{shown}` failed (exit status {r.returncode}):\n{r.stdout}{r.stderr}")
    return shown, r.stdout


def page(name: str, build: pathlib.Path, seeds: int, work: pathlib.Path) -> str:
    title, what, commands = PAGES[name]
    out = [f"# {title}", "", what, ""]
    for program, args in commands:
        filled = [a.format(seeds=seeds, out=(work / name).as_posix()) for a in args]
        shown, text = run(build, program, filled)
        shown = shown.replace((work / name).as_posix(), f"out/results/{name}")
        out += [f"`{shown}`", "", "```text", text.rstrip("\n"), "```", ""]
    out += ["*Written by `scripts/results.py`; run it again to make this page anew.*", ""]
    return "\n".join(out)


def index(names: list[str]) -> str:
    out = ["# Results", "",
           "Each page holds what a program printed and the command that printed it; `scripts/results.py`",
           "writes them all from one build (the reference networks of `data/models/` and",
           "`examples/data/`, evaluated on held-out seeds; no training). Training runs and what was tried:",
           "[../ppo.md](../ppo.md); the action-mode ablation: [../ablation.md](../ablation.md).", ""]
    out += [f"- [{PAGES[n][0]}]({n}.md)" for n in names]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the build folder (default: build)")
    ap.add_argument("--seeds", type=int, default=20, help="held-out seeds per evaluation (default: 20)")
    ap.add_argument("--only", default="", help="pages to write, separated by commas (default: all)")
    ap.add_argument("--out", default="docs/results", help="where the pages go (default: docs/results)")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n] or list(PAGES)
    unknown = [n for n in names if n not in PAGES]
    if unknown:
        sys.exit(f"results.py: unknown page(s) {', '.join(unknown)} (known: {', '.join(PAGES)})")
    if a.seeds < 1:
        sys.exit("results.py: --seeds must be at least 1")
    build = (ROOT / a.build).resolve()
    dest = ROOT / a.out
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            print(f"results.py: {n}", flush=True)
            (dest / f"{n}.md").write_text(page(n, build, a.seeds, pathlib.Path(tmp)))
    (dest / "README.md").write_text(index(list(PAGES)))


if __name__ == "__main__":
    main()
