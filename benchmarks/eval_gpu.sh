#!/bin/bash
# `intelliperf eval` of the offline rewriters on the GPU machine, resumable across device calls:
#   bash benchmarks/eval_gpu.sh [SECONDS] [CASES]...     (default: examples/ and benchmarks/corpus/)
# Starts no case after SECONDS (default 450). An eval.json carried in benchmarks/results/eval_h100/
# is continued (--resume). Results: $OUT/eval/eval.{json,md,png} and each case's report.
set -u
source benchmarks/gpu_setup.sh
budget=${1:-450}; shift || true
mkdir -p "$OUT/eval"
resume=()
if [ -f benchmarks/results/eval_h100/eval.json ]; then
  cp benchmarks/results/eval_h100/eval.json "$OUT/eval/" && resume=(--resume)
fi
python3 -m intelliperf eval "${resume[@]}" --device gpu --max-attempts 4 --time-budget "$budget" \
  --sandbox-env CORPUS_SMALL --out-dir "$OUT/eval" "$@" 2>&1 | grep -v '^intelliperf:   ' | tail -60
# keep the reports, drop the bulky per-attempt folders and traces
find "$OUT/eval/runs" -mindepth 3 -maxdepth 3 \( -name attempts -o -name regions -o -name reference \) -exec rm -rf {} + 2>/dev/null
du -sh "$OUT/eval"
