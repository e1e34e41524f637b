#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh) and runs the main job on the embedded default scenario:
# every heuristic policy on 20 held-out seeds, printed as a table (results in out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
printf '\n==> evaluating every heuristic on the default scenario (20 held-out seeds)\n'
build/apps/gpuplace-eval --scenario default --seeds 20 --csv out/heuristics.csv --json out/heuristics.json
