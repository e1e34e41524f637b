#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh) and runs the main job:
#  1. every heuristic under every queue policy on the default scenario, 20 held-out seeds
#     (table; out/heuristics.{csv,json});
#  2. the reference C++ PPO trained on the default scenario (the default recipe: 5 training seeds),
#     then compared with every heuristic variant on the same held-out seeds: the table, each training
#     seed's network, the median seed against the best heuristic (out/default/);
#  3. the philly recipe: trained on windows of the training trace files, compared on each held-out
#     file (out/philly/);
#  4. the rollout planners over the default scenario's best heuristic (placement action mode, 20
#     held-out seeds; docs/planning.md): the fair planner with 16 forked futures, and hindsight,
#     which plans on the episode's own future (not causal) (out/planning.json); then the network
#     distilled from the fair planner (data/models/default_distilled.json, the default_distilled
#     recipe; docs/planning.md), compared with every heuristic variant on the same seeds
#     (out/default_distilled/).
# GPUPLACE_PPO_STEPS sets PPO's training budget of step 2 (after its imitation). Every run can be
# stopped (Ctrl-C) and continued: build/apps/gpuplace-train --out out/<name> --resume (docs/ppo.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
[ -x .venv/bin/python3 ] && export PATH="$(pwd)/.venv/bin:$PATH"   # matplotlib for the plots
start=$(date +%s)
printf '\n==> 1/4 every heuristic under every queue policy, default scenario (20 held-out seeds)\n'
build/apps/gpuplace-eval --scenario default --queue fifo,backfill,sjf,fewest_gpus --seeds 20 \
  --csv out/heuristics.csv --json out/heuristics.json
printf '\n==> 2/4 train PPO on the default scenario, then compare on the held-out seeds\n'
build/apps/gpuplace-train --compare ${GPUPLACE_PPO_STEPS:+--steps "$GPUPLACE_PPO_STEPS"} --out out/default --overwrite
printf '\n==> 3/4 train PPO on Philly-derived traces, then compare on the held-out trace files\n'
build/apps/gpuplace-train --config philly --compare --no-plot --out out/philly --overwrite
printf '\n==> 4/4 rollout planners over pack_wait+sjf, default scenario, placement mode (20 held-out seeds)\n'
build/apps/gpuplace-eval --scenario default --action-mode placement --seeds 20 \
  --policies pack_wait+sjf,rollout16:pack_wait+sjf,hindsight:pack_wait+sjf --json out/planning.json
build/apps/gpuplace-train --load default_distilled --seeds 20 --no-plot --out out/default_distilled
printf '\nresults: out/heuristics.csv, out/default/compare.csv, out/default/learning_curve.png, out/default/jct_comparison.png, out/philly/compare_*.csv, out/planning.json, out/default_distilled/compare.csv (%ss)\n' \
  "$(( $(date +%s) - start ))"
