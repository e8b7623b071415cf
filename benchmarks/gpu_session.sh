#!/usr/bin/env bash
# One full GPU session on the device machine: install, GPU tests, the CPU suite on Triton 3.6,
# the examples end to end, and the recorder overhead. Prints a short summary last.
#   (device tool) run: bash benchmarks/gpu_session.sh      carry: [".whl"]
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"

python3 -m pytest -m gpu -v -s -p no:cacheprovider tests/gpu/test_gpu_diagnose.py 2>&1 | tee "$OUT/gpu-tests.log"
gpu_rc=${PIPESTATUS[0]}
cpu_rc=skipped
if [ "${CPU_SUITE:-0}" = 1 ]; then  # the CPU suite against this machine's Triton (about 2 minutes)
  python3 -m pytest -m "not gpu" -q -p no:cacheprovider 2>&1 | tee "$OUT/cpu-suite.log" | tail -15
  cpu_rc=${PIPESTATUS[0]}
fi

for ex in contended_sum contended_histogram reduced_sum privatized_histogram; do
  python3 -m intelliperf diagnose -f atomicContention -o "$OUT/$ex.json" -- python3 "examples/atomic_contention/$ex.py" \
    >"$OUT/$ex.txt" 2>&1
  echo "$ex rc=$?" >>"$OUT/examples.txt"
done
cat "$OUT/contended_sum.txt"

if [ "${OVERHEAD:-1}" = 1 ]; then  # the recorder overhead table (about 2 minutes)
  python3 benchmarks/recorder_overhead.py --runs 3 --out "$OUT/recorder_overhead.json" 2>&1 | tee "$OUT/overhead.txt"
fi

echo "===== summary ====="
cat "$OUT/device.txt"
echo "gpu tests rc=$gpu_rc; cpu suite rc=$cpu_rc"
grep -E "passed|failed" "$OUT/gpu-tests.log" | tail -1
grep -E "recorder mean|us$" "$OUT/gpu-tests.log"
[ -f "$OUT/cpu-suite.log" ] && tail -1 "$OUT/cpu-suite.log"
cat "$OUT/examples.txt"
python3 - "$OUT" <<'PY'
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*_*.json")):
    if p.name == "recorder_overhead.json":
        continue
    r = json.loads(p.read_text()); k = r["kernels"][0]; f = r["diagnoses"][0]["findings"][0]
    print(f"{p.stem:22s} {k['name']:30s} launches={k['launches']} mean={k['mean_time_s']*1e3:.3f} ms "
          f"flagged={f['present']} depth={f['metric']['value'] if f['metric'] else None} "
          f"line={f['lines'][0]['line'] if f['lines'] else '-'}")
PY
[ -f "$OUT/overhead.txt" ] && cat "$OUT/overhead.txt"
exit "$gpu_rc"
