#!/usr/bin/env bash
# The verdict on real fixes on a GPU machine: benchmarks/fixes_run.py in shards, one per GPU, and the
# GPU tests of the validators and of optimize (the examples' wins) on the last GPU.
#   (device tool) run: bash benchmarks/fixes_gpu.sh      carry: [".whl"]
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
gpus=$(nvidia-smi -L | wc -l)
shards=$(( gpus > 1 ? gpus - 1 : 1 ))
for i in $(seq 0 $((shards - 1))); do
  CUDA_VISIBLE_DEVICES=$i python3 benchmarks/fixes_run.py --shard "$i/$shards" --out "$OUT/fixes-$i.json" \
    >"$OUT/fixes-$i.log" 2>&1 &
done
if [ "${GPU_TESTS:-1}" = 1 ]; then
  CUDA_VISIBLE_DEVICES=$((gpus - 1)) python3 -m pytest -m gpu -q -p no:cacheprovider \
    ${TESTS:-tests/gpu/test_gpu_validators.py tests/gpu/test_gpu_optimize.py} >"$OUT/gpu-tests.log" 2>&1
  echo "gpu tests rc=$?" >>"$OUT/device.txt"
fi
wait
tail -n 3 "$OUT/gpu-tests.log" 2>/dev/null
cat "$OUT"/fixes-*.log
