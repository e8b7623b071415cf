#!/bin/bash
# The public-kernel corpus on the GPU machine (benchmarks/corpus_run.py), in parts that fit one
# device call each:
#   bash benchmarks/corpus_gpu.sh diagnose REGEX [FORMULA]   diagnose the programs matching REGEX
#   bash benchmarks/corpus_gpu.sh optimize REGEX [FORMULA]   also optimize their labelled-positive formulas
# JOBS=N diagnoses N programs at once (verdicts only). Results: $OUT/corpus_<part>.json and .md, the device and versions in $OUT/device.txt.
set -u
source benchmarks/gpu_setup.sh
part=${1:-diagnose}; only=${2:-.}
args=(--device gpu --only "$only" --formula "${3:-diagnoseOnly}" --timeout "${TIMEOUT:-170}" --attempts "${ATTEMPTS:-6}" --jobs "${JOBS:-1}" --out "$OUT/corpus_${part}_$(echo "$only" | tr -c 'a-zA-Z0-9' '_').json")
[ "$part" = optimize ] && args+=(--optimize)
python3 benchmarks/corpus_run.py "${args[@]}" 2>&1
