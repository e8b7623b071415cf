#!/usr/bin/env bash
# The counter backend on the device machine: GPU tests for each formula on each example under
# ncu, then the README table (benchmarks/counters_gpu.py).  (device tool) carry: [".whl"]
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
ncu --version | tail -1 | tee -a "$OUT/device.txt"
python3 benchmarks/counters_gpu.py --out "$OUT/counters_h100.json" --keep /tmp/keep 2>&1 | tee "$OUT/table.log" | grep -v '^[a-z_]*: {'
tar czf "$OUT/keep.tgz" -C /tmp keep --exclude='*.ncu-rep'
timeout 270 python3 -m pytest -m gpu -q -p no:cacheprovider -s tests/gpu/test_gpu_counters.py 2>&1 | tee "$OUT/gpu-tests.log" | grep -E "passed|failed|FAILED|Error|present=" | head -40
