#!/usr/bin/env bash
# The formulas for what maintainers fix, on the fix corpus, on a GPU machine: benchmarks/formulas_run.py
# in shards, one per GPU. ARGS passes options through (e.g. ARGS=--no-optimize for the diagnoses only).
#   (device tool) run: bash benchmarks/formulas_gpu.sh      carry: [".whl"]
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
gpus=$(nvidia-smi -L | wc -l)
for i in $(seq 0 $((gpus - 1))); do
  CUDA_VISIBLE_DEVICES=$i timeout "${SHARD_TIMEOUT:-560}" python3 benchmarks/formulas_run.py --shard "$i/$gpus" \
    --out "$OUT/formulas-$i.json" ${ARGS:-} >"$OUT/formulas-$i.log" 2>&1 &
done
wait
cat "$OUT"/formulas-*.log
