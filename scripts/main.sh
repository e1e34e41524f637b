#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh) and runs the main job on the embedded default scenario:
#  1. every heuristic policy on 20 held-out seeds (table; out/heuristics.{csv,json});
#  2. the reference C++ PPO trained on the default scenario, then compared with every heuristic on
#     the same 20 held-out seeds (table, learning curve and JCT comparison plots in out/default/).
# GPUPLACE_PPO_STEPS sets PPO's training budget (default: the embedded config's 600,000 env steps
# after 400,000 steps of imitating the pack heuristic, 8 restarts; training takes about 2.5 minutes on
# 2 cores with the x86-64-v3 build scripts/setup.sh makes, the whole job 5.5 minutes once set up;
# a fresh checkout adds the Debian packages, torch==2.13.0 and the builds).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
[ -x .venv/bin/python3 ] && export PATH="$(pwd)/.venv/bin:$PATH"   # matplotlib for the plots
printf '\n==> 1/2 every heuristic on the default scenario (20 held-out seeds)\n'
build/apps/gpuplace-eval --scenario default --seeds 20 --csv out/heuristics.csv --json out/heuristics.json
printf '\n==> 2/2 train PPO on the default scenario, then compare on the held-out seeds\n'
build/apps/gpuplace-train --compare ${GPUPLACE_PPO_STEPS:+--steps "$GPUPLACE_PPO_STEPS"} --out out/default
printf '\nresults: out/heuristics.csv, out/default/compare.csv, out/default/learning_curve.png, out/default/jct_comparison.png\n'
