#!/usr/bin/env bash
# Device run for the recorder alone: GPU tests and the overhead table (carry: [".whl"]).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu.py 2>&1 | tail -12
python3 benchmarks/recorder_overhead.py --runs 3 --out "${OUT:-/tmp}/recorder_overhead.json"
