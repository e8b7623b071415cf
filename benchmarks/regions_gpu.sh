#!/usr/bin/env bash
# Region timers on a GPU, end to end: `intelliperf regions`, `diagnose --formula overlap` on the four
# overlap examples, `optimize` of the num_stages=1 GEMM with the search rewriter, then the overhead and
# accuracy figures (benchmarks/regions_accuracy.py), and small traces for the CPU tests' fixtures.
#     bash benchmarks/regions_gpu.sh OUT_DIR
set -u
out=${1:?usage: regions_gpu.sh OUT_DIR}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$out/device.txt"
intelliperf regions --out-dir "$out/regions_gemm" -- python examples/overlap/gemm.py
for ex in gemm gemm_pipelined attention attention_pipelined; do
  intelliperf diagnose --formula overlap --profile-dir "$out/diag_$ex" --markdown "$out/diag_$ex/report.md" \
    --output "$out/diag_$ex/report.json" -- python "examples/overlap/$ex.py" 2>&1 | grep -v "^│ " | tail -12
done
intelliperf optimize --formula overlap --rewriter search --max-attempts 3 --out-dir "$out/optimize_gemm" \
  -- python examples/overlap/gemm.py 2>&1 | tail -30
for ex in gemm gemm_pipelined; do  # fixtures: 4 CTAs, 16 iterations
  intelliperf regions --out-dir "$out/fixture_$ex" -- python "examples/overlap/$ex.py" --m 256 --n 256 --k 1024 \
    > /dev/null 2>&1
done
intelliperf regions --out-dir "$out/fixture_attention" -- python examples/overlap/attention.py --batch 1 --heads 1 \
  --seq 1024 > /dev/null 2>&1
python3 benchmarks/regions_accuracy.py "$out/accuracy_inner" inner 2>&1 | grep -v -i warning | tail -12
python3 benchmarks/regions_accuracy.py "$out/accuracy_outer" outer 2>&1 | grep -v -i warning | tail -12
