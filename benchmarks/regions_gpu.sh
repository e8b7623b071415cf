#!/usr/bin/env bash
# Region timers on a GPU, in two parts that each fit one device call (every step has its own timeout and
# writes its log under OUT_DIR, so a step that hangs loses nothing else):
#   tool      diagnose --formula overlap on the four overlap examples (reduced size, one launch), optimize
#             --formula overlap --rewriter search on the two num_stages=1 examples, `intelliperf regions`
#             on a 3-launch GEMM (launch separation), small traces from the tool's own pass (CI fixtures)
#   accuracy  overhead and accuracy (regions_accuracy.py): the default Proton mode with inner and outer
#             regions, and inner regions without Proton's clock32/sched_stores optimizations
# Everything it wrote is packed into OUT_DIR.tgz at the end (traces over 4 MB left out).
#     bash benchmarks/regions_gpu.sh OUT_DIR tool|accuracy
set -u
out=${1:?usage: regions_gpu.sh OUT_DIR tool|accuracy}
part=${2:-tool}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$out/device.txt"
gemm="--m 1024 --n 1024 --k 4096 --repeat 1"
attn="--batch 1 --heads 4 --seq 4096 --repeat 1"
quiet() { grep -v "^│ \|^┃\|^┏\|^┡\|^└\|^╭\|^╰" | tail -"$1"; }

if [ "$part" = tool ]; then
  for ex in gemm gemm_pipelined attention attention_pipelined; do
    args=$gemm; [[ $ex == attention* ]] && args=$attn
    timeout 120 intelliperf diagnose --formula overlap --profile-dir "$out/diag_$ex" \
      --markdown "$out/diag_$ex/report.md" -- python "examples/overlap/$ex.py" $args > "$out/diag_$ex.log" 2>&1
    echo "== diagnose $ex (exit $?)"; quiet 6 < "$out/diag_$ex.log"
    rm -f "$out/diag_$ex/proton.chrome_trace"
  done
  for ex in gemm attention; do
    args=$gemm; [[ $ex == attention* ]] && args=$attn
    timeout 200 intelliperf optimize --formula overlap --rewriter search --max-attempts 3 --out-dir "$out/opt_$ex" \
      -- python "examples/overlap/$ex.py" $args > "$out/opt_$ex.log" 2>&1
    echo "== optimize $ex (exit $?)"; quiet 12 < "$out/opt_$ex.log"
    find "$out/opt_$ex" -name proton.chrome_trace -delete
  done
  timeout 150 intelliperf regions --out-dir "$out/regions_3launches" -- python examples/overlap/gemm.py \
    --m 1024 --n 1024 --k 4096 --repeat 3 > "$out/regions_3launches.log" 2>&1
  echo "== regions, 3 launches (exit $?)"; quiet 8 < "$out/regions_3launches.log"
  rm -f "$out/regions_3launches/proton.chrome_trace"
  for ex in gemm gemm_pipelined attention; do  # CI fixtures: a few CTAs, one launch
    args="--m 256 --n 256 --k 1024 --repeat 1"; [[ $ex == attention* ]] && args="--batch 1 --heads 1 --seq 512 --repeat 1"
    timeout 120 intelliperf regions --out-dir "$out/fixture_$ex" -- python "examples/overlap/$ex.py" $args \
      > "$out/fixture_$ex.log" 2>&1
    echo "== fixture $ex (exit $?): $(du -h "$out/fixture_$ex/proton.chrome_trace" 2>/dev/null | cut -f1)"
  done
else
  base=$(python3 -c "from intelliperf.profiling.region_timers import DEFAULT_MODE; print(DEFAULT_MODE)")
  plain="default:buffer_type=global:buffer_size=65536"  # the same without Proton's optimizations
  timeout 170 python3 benchmarks/regions_accuracy.py "$out/acc_inner" inner > "$out/acc_inner.log" 2>&1
  echo "== inner, $base (exit $?)"; grep -v -i warning "$out/acc_inner.log" | tail -8
  timeout 130 python3 benchmarks/regions_accuracy.py "$out/acc_outer" outer > "$out/acc_outer.log" 2>&1
  echo "== outer, $base (exit $?)"; grep -v -i warning "$out/acc_outer.log" | tail -8
  timeout 170 python3 benchmarks/regions_accuracy.py "$out/acc_plain" inner "$plain" > "$out/acc_plain.log" 2>&1
  echo "== inner, $plain (exit $?)"; grep -v -i warning "$out/acc_plain.log" | tail -8
fi
find "$out" -name "*.chrome_trace" -size +4M -delete
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
