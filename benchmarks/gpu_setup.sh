# Sourced by the GPU scripts on the device machine: $OUT, the carried wheels and the project
# installed, Python unbuffered, and the device and versions in $OUT/device.txt.
OUT=${OUT:-/tmp/intelliperf-gpu-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
# The device image ships torch and Triton without bytecode and sets PYTHONDONTWRITEBYTECODE, so every
# process compiled them again (about 3.6 s on the H100 machine; intelliperf's report says so). Compile
# them once, as pip does on an ordinary install (BYTECODE=0 measures the image as it is). The carried
# wheels (installed --no-compile) and intelliperf's own packages too: without bytecode, importing
# intelliperf.validators.inside.capture in each candidate's program took 0.63-0.89 s there, 0.45-0.51 s with it.
if [ "${BYTECODE:-1}" = 1 ]; then
  python3 -m compileall -q -j 0 /tmp/site intelliperf validators formulas \
    $(python3 -c "import importlib.util as u, os; print(' '.join(os.path.dirname(u.find_spec(m).origin) for m in ('torch', 'triton')))") >/dev/null 2>&1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
python3 -c "import sys, torch, triton, pydantic; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'pydantic', pydantic.__version__)" | tee -a "$OUT/device.txt"
