#!/usr/bin/env bash
# The sandbox and the hardened validators on a GPU: sandbox overhead, the validators' GPU tests
# (two-process timing, identical kernels not faster), optimize on the atomic examples (winner
# timed, then compute-sanitizer), the adversarial suite's sandbox checks. Summary last.
#   (device tool) run: bash benchmarks/sandbox_gpu.sh validators   then   ... optimize     carry: [".whl"]
# (two calls: each part takes 4-8 minutes, a device call at most 10)
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
which compute-sanitizer ncu | tee -a "$OUT/device.txt"

part=${1:-validators}
val_rc=skipped; opt_rc=skipped
touch "$OUT/overhead.txt" "$OUT/sandbox.log" "$OUT/validators.log" "$OUT/optimize.log"
if [ "$part" = validators ]; then
python3 benchmarks/sandbox_overhead.py --repeat 5 2>&1 | tee "$OUT/overhead.txt"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/unit/workload/test_sandbox.py 2>&1 | tee "$OUT/sandbox.log"
timeout 280 python3 -m pytest -m gpu -v -s -p no:cacheprovider tests/gpu/test_gpu_validators.py 2>&1 | tee "$OUT/validators.log"
val_rc=${PIPESTATUS[0]}
else
timeout 500 python3 -m pytest -m gpu -v -s -p no:cacheprovider tests/gpu/test_gpu_optimize.py -k "recipe_wins" 2>&1 | tee "$OUT/optimize.log"
opt_rc=${PIPESTATUS[0]}
fi

echo "===== summary ====="
cat "$OUT/device.txt"
tail -1 "$OUT/overhead.txt"
echo "validators+sandbox rc=$val_rc; optimize rc=$opt_rc"
grep -E "passed|failed" "$OUT/sandbox.log" "$OUT/validators.log" | tail -2
grep -E "passed|failed" "$OUT/optimize.log" | tail -1
grep -E "^(side stream|identical|contended sum fix|sandboxed GPU probe):" "$OUT/validators.log" | cut -c1-400
grep -E "winner seconds" "$OUT/optimize.log" | cut -c1-600
grep -E "^FAILED|Error" "$OUT/validators.log" "$OUT/optimize.log" | head -10
