#!/usr/bin/env bash
# The counter backend on the device machine: GPU tests for each formula on each example under
# ncu, then the README table (benchmarks/counters_gpu.py).  (device tool) carry: [".whl"]
set -uo pipefail
OUT=${OUT:-/tmp/intelliperf-gpu-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
ncu --version | tail -1 | tee -a "$OUT/device.txt"
python3 benchmarks/counters_gpu.py --out "$OUT/counters_h100.json" --keep /tmp/keep 2>&1 | tee "$OUT/table.log" | grep -v '^[a-z_]*: {'
tar czf "$OUT/keep.tgz" -C /tmp keep --exclude='*.ncu-rep'
timeout 270 python3 -m pytest -m gpu -q -p no:cacheprovider -s tests/test_gpu_counters.py 2>&1 | tee "$OUT/gpu-tests.log" | grep -E "passed|failed|FAILED|Error|present=" | head -40
