#!/usr/bin/env bash
# Time to a verdict on the device: the GPU validator tests, stage times of diagnose and
# of one optimize attempt, and where the diagnose parent process spends its own time (cProfile).
#   (device tool) run: bash benchmarks/verdict_gpu.sh      carry: [".whl"]
#   ONLY=REGEX picks the programs (default: the README's example and one public kernel).
#   TESTS=... the GPU tests to run first (default: the validators' GPU tests); GPU_TESTS=0 skips them.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"

import_torch() {
  python3 -c "import time; t=time.perf_counter(); import torch; a=time.perf_counter(); torch.cuda.init(); \
print(f'import torch {a-t:.2f} s, cuda init {time.perf_counter()-a:.2f} s')" >>"$OUT/summary.txt"
}
: >"$OUT/summary.txt"
env | grep '^PYTHON' >>"$OUT/summary.txt"
if [ "${GPU_TESTS:-1}" = 1 ]; then
  python3 -m pytest -m gpu -q -s -p no:cacheprovider ${TESTS:-tests/gpu/test_gpu_validators.py} >"$OUT/gpu-validators.log" 2>&1
  echo "gpu validator tests rc=$?" >>"$OUT/summary.txt"
fi
python3 benchmarks/stage_times.py --suite all --only "${ONLY:-contended_sum.py|vllm_bincount}" --optimize \
  --timeout 110 --out "$OUT/stage.json" >"$OUT/stage.log" 2>&1
echo "stage times rc=$?" >>"$OUT/summary.txt"

# The parent's own seconds: cProfile sees the orchestrator, not the profiled program's processes.
# PROFILE=optimize profiles one optimize attempt instead of diagnose.
import_torch
if [ "${PROFILE:-diagnose}" = optimize ]; then
  PROFILED=(optimize -f atomicContention --max-attempts 1 --out-dir "$OUT/optimize")
else
  PROFILED=(diagnose -f diagnoseOnly)
fi
( cd examples/atomic_contention && python3 -m cProfile -o "$OUT/parent.prof" -m intelliperf "${PROFILED[@]}" \
  -o "$OUT/parent.json" -- python3 contended_sum.py >"$OUT/parent.txt" 2>&1 )
python3 - "$OUT" <<'PY' >"$OUT/profile.txt"
import json, pstats, sys
out = sys.argv[1]
report = json.load(open(f"{out}/parent.json"))
print("stages:", {k: round(v, 2) for k, v in report["stages"].items()})
for a in (report.get("optimization") or {}).get("attempts", []):
    print("attempt", a["number"], a["status"], {k: round(v, 2) for k, v in a["seconds"].items()})
print("bytecode notes:", [n for n in report["notes"] if "bytecode" in n])
stats = pstats.Stats(f"{out}/parent.prof")
print("parent total", round(stats.total_tt, 2), "s")
stats.sort_stats("cumulative").print_stats(45)
stats.sort_stats("tottime").print_stats(25)
PY

echo "===== summary ====="
cat "$OUT/device.txt" "$OUT/summary.txt"
tail -3 "$OUT/gpu-validators.log" 2>/dev/null
cat "$OUT/stage.md" 2>/dev/null
python3 - "$OUT/stage.json" <<'PY'
import json, sys
for name, r in json.load(open(sys.argv[1]))["programs"].items():
    a = (r.get("optimize") or {}).get("attempt")
    if a:
        print(name, {k: round(v, 1) for k, v in a.items()})
PY
head -90 "$OUT/profile.txt" | cut -c1-170
