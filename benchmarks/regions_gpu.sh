#!/usr/bin/env bash
# Region timers on a GPU: `intelliperf regions` and `diagnose --formula overlap` on the overlap examples at
# a reduced size (one launch each; a 4096^3 GEMM's trace of 3 launches is 425 MB and takes a minute to
# parse), small traces for the CPU tests' fixtures, then overhead and accuracy (regions_accuracy.py).
#     bash benchmarks/regions_gpu.sh OUT_DIR
set -u
out=${1:?usage: regions_gpu.sh OUT_DIR}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$out/device.txt"
gemm="--m 1024 --n 1024 --k 4096 --repeat 1"
attn="--batch 1 --heads 4 --seq 4096 --repeat 1"
for ex in gemm gemm_pipelined attention attention_pipelined; do
  args=$gemm; [[ $ex == attention* ]] && args=$attn
  timeout 120 intelliperf diagnose --formula overlap --profile-dir "$out/diag_$ex" --markdown "$out/diag_$ex/report.md" \
    -- python "examples/overlap/$ex.py" $args 2>&1 | grep -v "^│ \|^┃\|^┏\|^┡\|^└" | tail -6
  rm -f "$out/diag_$ex/proton.chrome_trace"
done
for ex in gemm gemm_pipelined; do  # fixtures: 4 CTAs, 16 iterations
  timeout 120 intelliperf regions --out-dir "$out/fixture_$ex" -- python "examples/overlap/$ex.py" --m 256 --n 256 \
    --k 1024 --repeat 1 > /dev/null 2>&1
done
timeout 200 python3 benchmarks/regions_accuracy.py "$out/accuracy_inner" inner 2>&1 | grep -v -i warning | tail -8
timeout 200 python3 benchmarks/regions_accuracy.py "$out/accuracy_outer" outer 2>&1 | grep -v -i warning | tail -8
