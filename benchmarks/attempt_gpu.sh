#!/usr/bin/env bash
# Issue 19 on the device: where one optimize attempt's seconds go (compare_cost.py on a program), the
# stage times of diagnose and one attempt on the programs that missed the 10 s attempt, and (TESTS=1)
# the GPU tests. Prints a short table last.
#   (device tool) run: bash benchmarks/attempt_gpu.sh      carry: [".whl"]
#   PROGRAMS='regex' picks the stage-time programs; COST=0 / STAGES=0 / COLD=1 (the attempts again with
#   --no-head-start) / RACECHECK=1 (a GEMM's validation, racecheck capped and on every CTA) / TESTS=1 choose
#   the parts.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
PROGRAMS=${PROGRAMS:-'contended_sum.py|contended_histogram|column_copy|vllm_bincount'}

if [ "${COST:-1}" = 1 ]; then
  python3 benchmarks/compare_cost.py --program examples/memory_access/column_copy.py --kernel column_copy_kernel \
    >"$OUT/attempt_cost_column_copy.txt" 2>&1
  if [ "${COST_VLLM:-1}" = 1 ]; then
    python3 benchmarks/compare_cost.py --program benchmarks/corpus/vllm_bincount.py --kernel bincount_kernel \
      >"$OUT/attempt_cost_vllm_bincount.txt" 2>&1
  fi
fi
if [ "${RACECHECK:-0}" = 1 ]; then  # a 4096^3 GEMM: racecheck on one CTA per SM, then on every CTA
  python3 benchmarks/compare_cost.py --program examples/overlap/gemm.py --kernel gemm_kernel --racecheck-every-cta \
    >"$OUT/attempt_cost_gemm_racecheck.txt" 2>&1
fi
if [ "${STAGES:-1}" = 1 ]; then
  python3 benchmarks/stage_times.py --suite all --only "$PROGRAMS" --optimize --timeout 110 --out "$OUT/stage.json" \
    >"$OUT/stage.log" 2>&1
fi
if [ "${COLD:-0}" = 1 ]; then  # the same attempts with each candidate's Python started fresh (A/B)
  python3 benchmarks/stage_times.py --suite all --only "$PROGRAMS" --attempt-only --optimize-flag=--no-head-start \
    --timeout 110 --out "$OUT/stage_cold.json" >"$OUT/stage_cold.log" 2>&1
fi
if [ "${TESTS:-0}" = 1 ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider ${TEST_FILES:-tests/test_gpu_validators.py} >"$OUT/gpu_tests.log" 2>&1
fi

echo "===== summary ====="
cat "$OUT/device.txt"
for f in "$OUT"/attempt_cost_*.txt; do
  [ -f "$f" ] && { echo "--- $(basename "$f")"; grep -E "^(verdict seconds|verdict notes|a second validation|compare parts|replay worker|sanitizer/|problem)" "$f"; }
done
[ -f "$OUT/stage.json" ] && sed -n '1,20p' "$OUT/stage.md"
for f in "$OUT/stage.json" "$OUT/stage_cold.json"; do
  [ -f "$f" ] || continue
  echo "--- $(basename "$f")"
  python3 - "$f" <<'PY'
import json, sys
for name, r in json.load(open(sys.argv[1]))["programs"].items():
    o = r.get("optimize") or {}
    print(f"{name}: {o.get('status')} ahead={o.get('ahead')} {o.get('attempt')} {o.get('reasons', '')}"[:600])
PY
done
[ -f "$OUT/gpu_tests.log" ] && { grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -3; }
exit 0
