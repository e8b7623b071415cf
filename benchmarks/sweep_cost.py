"""Where a search sweep's seconds go: compiling its configs, timing each one, and the recorder.

    python benchmarks/sweep_cost.py [--threads 16]

The sweep (intelliperf/rewriters/search.py) puts the kernel of examples/bank_conflict/column_sums.py
under `triton.autotune` over num_warps x num_stages (20 configs). Each row runs in its own Python
with an empty Triton cache, as a candidate's run has:

- compile, one by one / together: every config compiled with `warmup`, in turn, or on a thread
  pool (Triton's AsyncCompileMode, as profiling.inside.window.compile_together does);
- bench: each compiled config through Triton's default autotuning benchmark (do_bench, 25 ms
  warm-up and 100 ms);
- program rows: column_sums.py with the sweep's kernel as it was before (default benchmark) and as
  search.sweep_kernel writes it now (SWEEP_BENCH), run plainly and under intelliperf's bootstrap
  (recorder, output capture, seeds: what a candidate's run has; there the bootstrap compiles the
  configs together, window.compile_together, unless the row undoes it). Wall seconds of the whole
  process and the autotuner's own (its bench_time: compiles and benchmarks).

Prints one JSON line per row (GPU only).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bank_conflict"
sys.path.insert(0, str(ROOT))

from intelliperf.rewriters.search import SWEEP_STAGES, SWEEP_WARPS, sweep_kernel  # noqa: E402

# The sweep's decorator before this benchmark's change, for the "before" rows.
BEFORE = (
    "@triton.autotune(configs=[triton.Config({}, num_warps=w, num_stages=s) "
    f"for w in {SWEEP_WARPS} for s in {SWEEP_STAGES}], key=[], restore_value=['out_ptr'])\n"
)
REPORT = """
    print("autotune", round(column_sums_kernel.bench_time, 2), column_sums_kernel.best_config, flush=True)
"""
# For the row that measures the bootstrap as it was: its configs compiled one by one again.
ONE_BY_ONE = """
import triton.runtime.autotuner as _tuner
_tuner.Autotuner.prune_configs = getattr(
    _tuner.Autotuner.prune_configs, "__intelliperf_original__", _tuner.Autotuner.prune_configs
)
"""


def _kernel_source(text: str) -> str:
    return re.search(r"@triton\.jit\ndef column_sums_kernel.*?\n(?=\n\n)", text, re.S).group(0)


def program(folder: Path, after: bool, one_by_one: bool) -> Path:
    """column_sums.py with the sweep's kernel (before or after), printing what its autotuner did."""
    text = (EXAMPLE / "column_sums.py").read_text()
    kernel = _kernel_source(text)
    swept = sweep_kernel(kernel, ["out_ptr"]) if after else BEFORE + kernel + "\n"
    text = text.replace(kernel, swept.rstrip("\n"))
    check = '    check_close("column_sums", out, x.double().sum(0))\n'
    text = text.replace(check, check + REPORT.strip("\n") + "\n")
    if one_by_one:
        text = text.replace("import triton.language as tl\n", "import triton.language as tl\n" + ONE_BY_ONE, 1)
    path = folder / "sweep.py"
    path.write_text(text)
    (folder / "_harness.py").write_text((EXAMPLE / "_harness.py").read_text())
    return path


def compile_phase(name: str, threads: int) -> dict:
    sys.path.insert(0, str(EXAMPLE))
    import column_sums
    import torch
    import triton

    torch.manual_seed(0)
    x = torch.rand(2048, 32768, device="cuda")
    out = torch.empty(32768, device="cuda")
    kernel = column_sums.column_sums_kernel
    configs = [(w, s) for w in SWEEP_WARPS for s in SWEEP_STAGES]

    def warm(w: int, s: int) -> None:
        kernel.warmup(x, out, *x.shape, BLOCK_M=64, BLOCK_N=64, num_warps=w, num_stages=s, grid=(1,))

    start = time.perf_counter()
    if name == "compile, one by one":
        for w, s in configs:
            warm(w, s)
    elif name == "compile, together":
        from concurrent.futures import ThreadPoolExecutor

        from triton.runtime._async_compile import AsyncCompileMode

        with ThreadPoolExecutor(threads) as pool, AsyncCompileMode(pool):
            for w, s in configs:
                warm(w, s)
    else:  # bench
        for w, s in configs:
            warm(w, s)
        torch.cuda.synchronize()
        start = time.perf_counter()
        grid = (triton.cdiv(x.shape[1], 64),)
        for w, s in configs:
            triton.testing.do_bench(
                lambda w=w, s=s: kernel[grid](x, out, *x.shape, BLOCK_M=64, BLOCK_N=64, num_warps=w, num_stages=s),
                quantiles=(0.5, 0.2, 0.8),
            )
    torch.cuda.synchronize()
    return {"row": name, "configs": len(configs), "s": round(time.perf_counter() - start, 2)}


def program_row(after: bool, recorded: bool, one_by_one: bool, folder: Path) -> dict:
    from intelliperf.workload.runner import bootstrap_env

    script = program(folder, after, one_by_one)
    env = {**os.environ, "TRITON_CACHE_DIR": str(folder / "cache")}
    if recorded:
        record, capture = folder / "record", folder / "capture"
        record.mkdir()
        capture.mkdir()
        env = bootstrap_env(False, env) | {
            "INTELLIPERF_RECORD_DIR": str(record),
            "INTELLIPERF_CAPTURE": "column_sums_kernel",
            "INTELLIPERF_CAPTURE_DIR": str(capture),
            "INTELLIPERF_SEED": "0",
        }
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, script.name], cwd=folder, env=env, capture_output=True, text=True, check=False
    )
    wall = round(time.perf_counter() - start, 2)
    tuned = re.search(r"autotune (\S+) (.*)", done.stdout)
    return {
        "row": f"program, sweep {'after' if after else 'before'}, "
        + ("recorded" if recorded else "plain")
        + (", configs compiled one by one" if one_by_one and recorded else ""),
        "process_s": wall,
        "autotune_s": float(tuned.group(1)) if tuned else None,
        "chosen": tuned.group(2) if tuned else None,
        "rc": done.returncode,
        **({"stderr": done.stderr[-1500:]} if done.returncode else {}),
    }


def main() -> int:
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 16
    if len(sys.argv) > 2 and sys.argv[1] == "--compile":
        print(json.dumps(compile_phase(sys.argv[2], threads)))
        return 0
    for name in ("compile, one by one", "compile, together", "bench"):
        with tempfile.TemporaryDirectory() as cache:
            args = [sys.executable, __file__, "--compile", name, "--threads", str(threads)]
            env = {**os.environ, "TRITON_CACHE_DIR": cache}
            done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
            print(done.stdout.strip() or json.dumps({"row": name, "error": done.stderr[-2000:]}), flush=True)
    rows = ((False, False, True), (False, True, True), (False, True, False), (True, False, True), (True, True, False))
    for after, recorded, one_by_one in rows:
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(program_row(after, recorded, one_by_one, Path(folder))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
