"""Replay harness: the reference and a candidate run on the same fresh inputs, in separate processes.

    python -m intelliperf.validators.workers.replay prepare JOB.json   # the reference side, once per session
    python -m intelliperf.validators.workers.replay run JOB.json       # one candidate, in its sandbox
    python -m intelliperf.validators.workers.replay time JOB.json CMD_FD OUT_FD   # one side of the timing (GPU)
    python -m intelliperf.validators.workers.replay serve prepare|run [EARLY.json]  # warm: the job's path on stdin

The two sides never share a process: a candidate cannot read the reference's results from the
worker's memory or patch the worker to overwrite its own. `prepare` draws the inputs of every
trial (a new seed per trial, recorded), saves them where candidates can read them, runs the
pristine reference on them and saves its outputs where no candidate can see them (the ground
truth, checksummed by the parent). `run` loads the same inputs, runs the candidate and saves its
outputs; the parent compares. The trials:

* the kernel itself, with its recorded grid and options, when the candidate kept the kernel's
  name and parameters; write-only outputs are poisoned first (NaN, or a sentinel for integers),
  so an element the candidate never writes shows; outputs that are also read (atomics,
  in-place updates) start from the same random values on both sides. Where the launcher's
  trials below ran, one such trial; else as many as the launcher would have had, and the
  inputs beyond the captured range;
* the launcher (the Python function that called `kernel[grid](...)`), when it is a module-level
  function whose arguments are tensors and scalars. The recorded-shape trials refill the same
  input tensors, so a result cached on pointers goes stale; then inputs beyond the captured range
  (all negative, wide and mixed-sign, NaN and Inf sprinkled in; not for inputs whose values the
  kernel turns into addresses, which would write out of bounds) and two unseen shapes, about 3/4
  and a little over twice (bounded in bytes, never under 3/2), every dimension of 2 or more changed
  to a size that is no multiple of any block size (except sizes the kernel is compiled for, its
  constexpr values, and sizes an integer input indexes). No call may return memory that another
  call's result or its own arguments overlap unless the reference's does (aliasing, over every
  call, at least ALIAS_CALLS on distinct inputs). On the reference's side the kernel's launches are
  watched, so each result is known as the kernel argument it is (how its values were made). Trials
  the reference itself rejects are not compared.

This module is the worker's entry point. The trials' inputs and unseen shapes are `replay_inputs.py`'s, the
calls of the kernel and the launcher `replay_calls.py`'s, what a call produced and what it aliases
`replay_outputs.py`'s; `replay_reference.py` runs `prepare`, `replay_candidate.py` runs `run`, and
`timing_worker.py` serves `time`.

Imports only torch, triton, numpy (and pydantic through the package).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

from intelliperf import env as names
from intelliperf.profiling.inside.untouched import replaced_in_process, watch_imported
from intelliperf.workload.definitions import load_module

from . import racecheck
from .fresh_memory import poison_empty
from .jobs import ReplayJob
from .replay_calls import top_name
from .replay_candidate import early_mode, other_modes, run_candidate
from .replay_reference import prepare

IMPORTED_AT = time.time()  # (wall clock, for a benchmark's timeline: the worker's start of its run)


def _looked_up(job: ReplayJob) -> tuple[str, ...]:
    """The names a replay looks up in the kernel's file: the kernel, and the launcher where it lives there."""
    side = job.get("launcher") or {}
    here = top_name(side) if side.get("file") == job["kernel"]["file"] else None
    return (job["kernel"]["name"], here) if here else (job["kernel"]["name"],)


# --- the worker --------------------------------------------------------------------------------


def main(mode: str, *args: str) -> int:
    """`prepare JOB`, `run JOB`, `time JOB CMD_FD OUT_FD`, or `serve prepare|run [EARLY_JOB]`."""
    # Under the interpreter, as in the program's processes: no timer to tune with. Under compute-sanitizer
    # each config runs once, untimed.
    sanitized = _under_cuda_tool()
    if os.environ.get("TRITON_INTERPRET") == "1" or sanitized:
        from triton.runtime import autotuner

        from intelliperf.profiling.inside.window import untimed_autotune

        untimed_autotune(autotuner, run_each=sanitized, rotate=os.environ.get("TRITON_INTERPRET") == "1")
    if os.environ.get("TRITON_INTERPRET") == "1":  # (on a GPU, compute-sanitizer's memcheck sees these)
        from triton.runtime import interpreter

        from intelliperf.profiling.inside.helper_calls import patch_once_per_launch
        from intelliperf.profiling.static import remember_language

        remember_language()  # before any kernel runs: the float64 trial compiles the reference's for its TTIR

        from .store_bounds import guard_stores

        guard_stores(interpreter)
        patch_once_per_launch(interpreter)
    racecheck_ctas = os.environ.get(names.RACECHECK_CTAS, "0")
    if racecheck_ctas != "0":
        racecheck.cap_grids(None if racecheck_ctas == "sm" else int(racecheck_ctas))
    late = os.environ.get(names.CUDA_LATE) == "1"
    for name in [n for n in os.environ if n.startswith(names.PREFIX)]:
        del os.environ[name]  # read by now: the candidate's code finds none of ours
    if mode != "time":  # (the timed calls take the program's memory as it comes)
        poison_empty(candidate="run" in (mode, *args[:1]))
    _watch_before_any_candidate()
    if mode == "time":
        from .timing_worker import bind_clock

        bind_clock()  # before the candidate's module is imported
    if mode == "serve":
        return _serve(args[0], args[1] if len(args) > 1 else None, late)
    _work(mode, json.loads(Path(args[0]).read_text()), fds=tuple(int(fd) for fd in args[1:]))
    return 0


def _watch_before_any_candidate() -> None:
    """Snapshot torch's, Triton's and numpy's namespaces before a side's module is imported: whatever it
    replaces of them is named in its answer (`replaced`), and the parent refuses the candidate for it."""
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401

    watch_imported()


def _new_summary() -> dict:
    """What a worker's replay.json holds: the runs done, the trials that failed, notes, phase times, and when
    (wall clock, for a benchmark's timeline: `at`) its early trials, its job and its end came."""
    return {"runs": [], "failures": [], "notes": [], "phases": {}, "at": {"imported": IMPORTED_AT}}


def _serve(mode: str, early_path: str | None, late: bool = False) -> int:
    """A warm worker: started while the program still runs, it imports torch and Triton (and sets up
    the GPU) at once, then waits for its job's path on stdin (end of input: nothing to do). With an
    early job (its `early_mode` trials), those run while it waits; the job then says whether they stand
    (`early_done`: the mode whose early trials ran what the candidate's own run called)."""
    import torch
    import triton  # noqa: F401  (the import is the start-up this worker takes off the critical path)

    if torch.cuda.is_available() and not late:  # (late: no room beside the program)
        torch.cuda.init()
    early = None
    if early_path:
        job = json.loads(Path(early_path).read_text())
        summary = _new_summary()
        summary["at"]["early"] = time.time()
        mark = time.perf_counter()
        try:
            module = load_module(job["kernel"]["file"], "_intelliperf_side", needs=_looked_up(job))
            first = early_mode(job["plan"])
            run_candidate(job, module, summary, modes=(first,) if first else ())
            summary["phases"]["early"] = round(time.perf_counter() - mark, 3)
            early = (module, summary)
        except (Exception, SystemExit):  # the job proper runs it all again and reports what goes wrong
            sys.modules.pop("_intelliperf_side", None)
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    job = json.loads(Path(line).read_text())
    os.chdir(Path(job["kernel"]["file"]).parent)  # where a one-shot worker would have started
    if early:
        early[1]["at"]["job"] = time.time()
    if early and job.get("early_done"):
        _work(mode, job, *early)
    else:
        _work(mode, {**job, "early_done": None})
    return 0


def _work(mode: str, job: ReplayJob, module=None, summary: dict | None = None, fds: tuple[int, ...] = ()) -> None:
    """One job of `prepare`, `run` or `time`; replay.json in its out_dir says what ran, or why it
    could not (`time` answers on its pipes instead, and writes replay.json only when it fails)."""
    out = Path(job["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    summary = summary or _new_summary()
    mark = time.perf_counter()
    try:
        if module is None:
            module = load_module(job["kernel"]["file"], "_intelliperf_side", needs=_looked_up(job))
        summary["phases"]["load"] = round(time.perf_counter() - mark, 3)
        if mode == "time":
            from .timing_worker import serve_timing

            serve_timing(job, module, *fds)
            return
        if mode == "prepare":
            prepare(job, module, summary)
        else:
            run_candidate(job, module, summary, modes=other_modes(job.get("early_done")))
        summary["phases"][mode] = round(time.perf_counter() - mark - summary["phases"]["load"], 3)
    except (Exception, SystemExit) as exc:  # the parent makes it a reason; the traceback helps the rewriter
        summary["error"] = f"{type(exc).__name__}: {str(exc)[:1000]}"
        summary["traceback"] = traceback.format_exc()[-3000:]
    summary["notes"] += racecheck.notes()
    summary["replaced"] = replaced_in_process()
    summary.setdefault("at", {})["done"] = time.time()
    (out / "replay.json").write_text(json.dumps(summary))


def _under_cuda_tool() -> bool:
    """A CUDA tool injected into this process: compute-sanitizer sets NV_SANITIZER_INJECTION_*, Nsight tools
    CUDA_INJECTION64_PATH."""
    return any(name == "CUDA_INJECTION64_PATH" or name.startswith("NV_SANITIZER_INJECTION") for name in os.environ)


def _exit(code: int) -> None:
    """The answer is written: the parent waits for this exit, and Python's and torch's teardown (about a
    second with a CUDA context; 1.1 s under racecheck, on the critical path of a GEMM's attempt, H100) is no
    part of it. Under compute-sanitizer too: with its options here (memcheck, racecheck; no leak check) it
    reports a finding as the kernel ends, before the answer is written after a synchronize, and its front end
    (this worker's parent) turns a finding into the exit code (`--error-exitcode`) whatever this exit is. An
    Nsight tool (CUDA_INJECTION64_PATH) writes its report at the exit it sees, so there the exit is a full one."""
    if "CUDA_INJECTION64_PATH" in os.environ:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main(*sys.argv[1:]))
