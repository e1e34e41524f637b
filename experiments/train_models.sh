#!/usr/bin/env bash
# Trains the reference policies shipped in data/models/ (rl::model_names(): default, philly,
# proximity_drl, default_distilled, philly_distilled, sizes_distilled, heterogeneous_distilled, colocation_distilled), each with its recipe
# (gpuplace-train --print-config --config <name>), compares it with every heuristic under every
# queue policy on the held-out seeds (the tables in docs/ppo.md and docs/planning.md), and copies
# the kept network to data/models/<name>.json.
#   experiments/train_models.sh [name ...]      (default: all eight; run scripts/setup.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
names=("$@")
((${#names[@]})) || names=(default philly proximity_drl default_distilled philly_distilled sizes_distilled heterogeneous_distilled colocation_distilled)
mkdir -p data/models out/models
for n in "${names[@]}"; do
  printf '\n==> %s\n' "$n"
  build/apps/gpuplace-train --config "$n" --compare --no-plot --out "out/models/$n" --overwrite | tee "out/models/$n.log"
  cp "out/models/$n/ppo.json" "data/models/$n.json"
  echo "data/models/$n.json"
done
