#!/usr/bin/env bash
# A policy trained on one cluster, evaluated on others: the default scenario's workload (jobs of 1-8
# GPUs of the Gavel zoo at offered load 1.0, DEFER allowed) on DGX-A100 clusters of 16, 256 and
# 1,024 GPUs (the number of jobs scaled with the cluster: 2.5 per GPU), the network of MODEL (default:
# the reference policy "default", trained on 64 GPUs) against every heuristic under every queue
# policy, 20 held-out seeds each, in the action mode MODE (gpu; placement for the distilled
# networks). Tables in out/transfer/<MODEL>/<GPUs>/ (docs/ppo.md, docs/planning.md).
#   experiments/size_transfer.sh [MODEL] [SEEDS] [MODE]
# Needs build/apps/gpuplace-train (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-default}
SEEDS=${2:-20}
MODE=${3:-gpu}
mkdir -p "out/transfer/$MODEL"
for size in "16 1 2" "256 4 8" "1024 8 16"; do
  read -r gpus racks nodes <<<"$size"
  jobs=$((gpus * 5 / 2))
  f=out/transfer/scenario_${gpus}.json
  cat >"$f" <<JSON
{"name": "default@${gpus}", "topology": {"preset": "dgx_a100", "racks": ${racks}, "nodes_per_rack": ${nodes}},
 "workload": {"kind": "synthetic", "num_jobs": ${jobs}, "load": 1.0, "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
              "duration_min": 600, "duration_max": 14400},
 "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
 "reward": {"jct": 1.0, "time_scale": 3600}}
JSON
  printf '\n==> %s GPUs (%s racks x %s nodes x 8), %s jobs\n' "$gpus" "$racks" "$nodes" "$jobs"
  build/apps/gpuplace-train --load "$MODEL" --scenario "$f" --action-mode "$MODE" --seeds "$SEEDS" --no-plot --out "out/transfer/$MODEL/$gpus" |
    sed -n '/^scenario /,$p'
done
