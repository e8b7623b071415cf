#!/bin/bash
# `intelliperf campaign` on the vendored AgentKernelArena suite on one GPU, resumable across device calls:
#   bash benchmarks/campaign_gpu.sh [SECONDS] [REGEX]
# Runs the tasks matching REGEX (default: the eight below, each passing its own correctness command
# under the interpreter on the CPU, chosen to finish in one call) for at most SECONDS (default 420; then Ctrl-C: the finished rows are kept and a
# later call with the carried campaign.json continues). Per task: 3 attempts at most, no attempt
# started after 60 s, 120 s per program run, 150 s in all. No Ray: the device machine reaches no
# package registry and Ray's wheel (79 MB) is over the carry limit. Results: $OUT/campaign/campaign.{json,md,png}.
set -u
source benchmarks/gpu_setup.sh
budget=${1:-420}
only=${2:-'^(geak_eval/L1/(refk_identity|llama_ff_triton)|rocmbench/(easy/test_kernel_sub|medium/test_chained_matmul)|vllm/triton_(bincount|bmm|batch_memcpy|apply_write))$'}
mkdir -p "$OUT/campaign"
resume=()
if [ -f benchmarks/results/agentkernelarena_gpu/campaign.json ]; then
  cp benchmarks/results/agentkernelarena_gpu/campaign.json "$OUT/campaign/" && resume=(--resume)
fi
start=$(date +%s)
timeout -s INT "$budget" python3 -m intelliperf campaign benchmarks/suites/agentkernelarena "${resume[@]}" \
  --only "$only" --device gpu --max-attempts 3 --time-budget 60 --timeout 120 --task-timeout 150 \
  --out-dir "$OUT/campaign" 2>&1 | grep -v '^intelliperf:   ' | tail -40
echo "campaign wall time: $(( $(date +%s) - start )) s (budget $budget s)"
# keep the table and each task's report and log, drop the copies and per-attempt folders
find "$OUT/campaign/tasks" -mindepth 1 -maxdepth 1 -type d -exec sh -c \
  'rm -rf "$1/original" "$1/patched" "$1/optimize/attempts" "$1/optimize/regions" "$1/optimize/reference"' _ {} \; 2>/dev/null
du -sh "$OUT/campaign"
