#!/usr/bin/env python3
"""Writes docs/leaderboard.md and one plot per track (docs/leaderboard/<track>.png) from the
benchmark's result files (bench/results/*.json, written by gpuplace-bench or
python -m gpuplace bench; docs/bench.md). Never edit docs/leaderboard.md by hand: run

    python3 scripts/leaderboard.py                 # --results bench/results --out docs/leaderboard.md

Reads the result files only (no gpuplace import): the table ranks each track's policies by mean
JCT and shows each one's paired difference against the track's best heuristic; the plot shows the
same difference with its standard error. Every row carries the command that reproduces it: a
named policy's `gpuplace-bench run`, and for a Python policy (an SB3 or RLlib model, a callable)
the commands bench/commands.json gives for its result file (training included); a result without
one stops the script. A planner that reads the future (`"causal": false` in its result, hindsight)
is labelled NOT causal in the table and the plot. --validate PROGRAM checks every file with
`PROGRAM validate` (gpuplace-bench) first and stops at an invalid one. Plots need matplotlib
(skipped with a note otherwise)."""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOUR = 3600.0
#: Bar colours of the plots by policy kind (a trained model orange, a Python policy -- learned or a
#: hand-written heuristic, the result cannot tell -- purple; NOT causal grey).
COLOURS = {"heuristic": "tab:blue", "planner": "tab:green", "model": "tab:orange", "python": "tab:purple"}


def load(results: str) -> list[dict]:
    """Every result file of the folder, with its path."""
    out = []
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        with open(path, encoding="utf-8") as f:
            try:
                r = json.load(f)
            except json.JSONDecodeError as e:
                raise SystemExit(f"leaderboard: {path}: not JSON ({e})")
        if r.get("format") != "gpuplace-bench-result":
            raise SystemExit(f"leaderboard: {path}: not a gpuplace-bench result (format {r.get('format')!r})")
        r["_path"] = os.path.relpath(path, REPO)
        out.append(r)
    return out


def load_commands(path: str) -> dict[str, str]:
    """bench/commands.json: result file name -> the commands that reproduce it (a Python policy's)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        commands = json.load(f)
    if not isinstance(commands, dict) or not all(isinstance(v, str) for v in commands.values()):
        raise SystemExit(f"leaderboard: {path}: expected an object of result file name -> command text")
    return commands


def command_of(r: dict, commands: dict[str, str]) -> str:
    """The command that reproduces a result: a named policy's gpuplace-bench run, else its entry in
    bench/commands.json (SystemExit naming the file when it has none)."""
    t, p = r["track"], r["policy"]
    if p["kind"] in ("heuristic", "model", "planner"):
        extra = "" if r["actions_kept"] else " --hash-only"
        return f"gpuplace-bench run --track {t['name']} --version {t['version']} --policy {p['name']}{extra}"
    name = os.path.basename(r["_path"])
    if name not in commands:
        raise SystemExit(f"leaderboard: {r['_path']}: a {p['kind']} policy's result needs its command in bench/commands.json")
    return commands[name]


def label(r: dict) -> str:
    """A policy's name, with NOT causal for a planner that reads the future."""
    return r["policy"]["name"] + (" (NOT causal)" if r["policy"].get("causal") is False else "")


def rows_by_track(results: list[dict]) -> dict[tuple[str, str], list[dict]]:
    by = defaultdict(list)
    for r in results:
        by[(r["track"]["name"], r["track"]["version"])].append(r)
    for rs in by.values():
        rs.sort(key=lambda r: (r["summary"]["avg_jct"]["mean"], r["policy"]["name"]))
    return dict(sorted(by.items()))


def plot_track(track: str, version: str, rs: list[dict], out_dir: str) -> str | None:
    """Each policy's mean JCT minus the best heuristic's (paired, h) with its standard error."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [label(r) for r in rs]
    diff = [r["vs_best_heuristic"]["metrics"]["avg_jct"]["diff"]["mean"] / HOUR for r in rs]
    sem = [r["vs_best_heuristic"]["metrics"]["avg_jct"]["diff"]["sem"] / HOUR for r in rs]
    colours = [COLOURS.get(r["policy"]["kind"], "tab:purple") if r["policy"].get("causal", True) else "tab:gray" for r in rs]
    fig, ax = plt.subplots(figsize=(7, 0.28 * len(rs) + 1.4))
    y = list(range(len(rs)))[::-1]
    ax.barh(y, diff, xerr=sem, color=colours, capsize=2)
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    best = rs[0]["vs_best_heuristic"]["policy"]
    ax.set_xlabel(f"mean JCT minus {best}'s, same seeds (h; +- standard error)")
    ax.set_title(f"{track} {version}: policies against the best heuristic\n(blue: heuristic, orange: trained model, "
                 "purple: Python policy, green: planner, grey: NOT causal)", fontsize=9)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{track}.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")  # the title is wider than the axes
    plt.close(fig)
    return path


def table(results: list[dict], plots: dict[str, str], out_md: str, commands: dict[str, str]) -> str:
    lines = [
        "# Leaderboard",
        "",
        "<!-- Generated by scripts/leaderboard.py from bench/results/*.json: do not edit by hand. -->",
        "*Generated from the result files in `bench/results/` by `python3 scripts/leaderboard.py`; never "
        "edited by hand. Every file passes `gpuplace-bench validate` (docs/bench.md has the tracks and the "
        "protocol).*",
        "",
        "Per track, the policies by mean job completion time (JCT) over the track's held-out seeds, in hours "
        "(mean +- standard error), and the paired difference against the track's best heuristic on the same "
        "seeds (negative: better than it). Decisions per second are as measured where the result was made "
        "(not part of what validate checks); a round policy makes its decisions per round, not per job, and shows "
        "none (-). A track with a steady-state window (`steady-*`) scores only the "
        "window's jobs. **NOT causal** marks a planner that plans on the episode's own future (hindsight): an "
        "estimate of the headroom above its heuristic, not a scheduler.",
    ]
    for (track, version), rs in rows_by_track(results).items():
        best = rs[0]["vs_best_heuristic"]["policy"]
        window = rs[0]["track"].get("window")
        scope = f"; metrics over jobs {window['first_job']}..{window['end_job'] - 1} of each episode" if window else ""
        lines += ["", f"## {track} ({version})", "", f"Best heuristic: `{best}`; {len(rs[0]['episodes'])} episodes{scope}.", ""]
        if track in plots:
            lines += [f"![{track}]({os.path.relpath(plots[track], os.path.dirname(out_md))})", ""]
        lines += ["| # | policy | kind | mean JCT (h) | vs best (h) | lower on | p95 JCT (h) | p99 queueing (h) | "
                  "utilisation | fairness | decisions/s | result |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for i, r in enumerate(rs, 1):
            s, vs = r["summary"], r["vs_best_heuristic"]["metrics"]["avg_jct"]
            n = len(r["episodes"])
            dps = r.get("timing", {}).get("decisions_per_second", 0)
            lines.append(
                f"| {i} | `{r['policy']['name']}`{'' if r['policy'].get('causal', True) else ' **NOT causal**'} | {r['policy']['kind']} | {s['avg_jct']['mean'] / HOUR:.3f} +- "
                f"{s['avg_jct']['sem'] / HOUR:.3f} | {vs['diff']['mean'] / HOUR:+.3f} +- {vs['diff']['sem'] / HOUR:.3f} | "
                f"{vs['lower']}/{n} | {s['p95_jct']['mean'] / HOUR:.3f} | {s['p99_queueing_delay']['mean'] / HOUR:.3f} | "
                f"{s['utilization']['mean']:.3f} | {s['avg_fairness']['mean']:.3f} | {f'{dps:,.0f}' if dps else '-'} | "
                f"[json](../{r['_path']}) |")
        lines += ["", "Commands:", ""]
        for i, r in enumerate(rs, 1):
            lines.append(f"{i}. `{command_of(r, commands)}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results"), help="folder of result files")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "leaderboard.md"), help="the markdown file")
    ap.add_argument("--plots", default=os.path.join(REPO, "docs", "leaderboard"), help="folder of the per-track plots")
    ap.add_argument("--commands", default=os.path.join(REPO, "bench", "commands.json"),
                    help="the commands of the Python policies' results, by result file name")
    ap.add_argument("--validate", metavar="PROGRAM", help="check every file with PROGRAM validate first (gpuplace-bench)")
    args = ap.parse_args(argv)
    results = load(args.results)
    if not results:
        raise SystemExit(f"leaderboard: no result files in {args.results}")
    if args.validate:
        out = subprocess.run([args.validate, "validate", "--quiet", *[os.path.join(REPO, r["_path"]) for r in results]],
                             capture_output=True, text=True)
        sys.stdout.write(out.stdout)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit("leaderboard: invalid results (above); nothing written")
    commands = load_commands(args.commands)
    for r in results:
        command_of(r, commands)  # every row has its command before anything is drawn
    plots = {}
    for (track, version), rs in rows_by_track(results).items():
        p = plot_track(track, version, rs, args.plots)
        if p:
            plots[track] = p
    if not plots:
        print("leaderboard: no matplotlib: the plots are not drawn", file=sys.stderr)
    text = table(results, plots, args.out, commands)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(args.out)} ({len(results)} results) and {len(plots)} plots in {os.path.relpath(args.plots)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
