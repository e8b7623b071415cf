"""What a diagnosis gathers besides the launch recording: the address trace and static view a formula
needs, and the profiler passes over the top kernels (hardware counters, region timers)."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import env
from ..formulas import Registry
from ..models import KernelProfile
from ..profiling.aggregate import STATIC_BACKEND, TRACE_BACKEND, Recording
from ..settings import DiagnoseSettings
from ..workload.runner import PassRun, TraceSettings

# Seconds the interpreter trace of one launch may take in a GPU run, where it is one pass among
# several: a 4096^3 GEMM's sampled programs take minutes in the interpreter (the atomics it looks for
# show in the first programs; the trace says how many it ran). On the CPU it is the evidence: 60 s.
GPU_TRACE_BUDGET_S = 10.0


def trace_settings(
    the_formula,
    registry: Registry,
    kernel: str | None,
    sample_programs: int = 32,
    launches: int = 1,
    interpret: bool = True,
) -> TraceSettings:
    """The address trace and static view a formula needs (none when it reads neither; no program traced
    where it reads the static view only: bankConflict, overlap). Beside a GPU run the trace is bounded
    like the other passes (GPU_TRACE_BUDGET_S)."""
    from ..profiling.static import DEFAULT_TARGETS

    needs = the_formula.needs(registry)
    wanted = bool(needs & {TRACE_BACKEND, STATIC_BACKEND})
    return TraceSettings(
        pattern=(kernel or ".") if wanted else None,
        sample_programs=sample_programs if TRACE_BACKEND in needs else 0,
        launches=launches,
        budget_s=TraceSettings.budget_s if interpret else GPU_TRACE_BUDGET_S,
        static_targets=DEFAULT_TARGETS if STATIC_BACKEND in needs else (),
    )


def counter_backend(requested: str, the_formula, registry: Registry, interpret: bool) -> tuple[str | None, str | None]:
    from ..profiling import counters

    wanted = any(the_formula.counter_metrics(registry, b) for b in ("ncu", "rocprofv3"))
    asks = requested not in ("off", "auto") or wanted
    return counters.choose(requested, interpret, counters.gpu_vendor() if asks and not interpret else None, wanted)


@dataclass
class Diagnosing:
    """One diagnosis run: the (absolute) command, the formula asked and the registry it asks, the settings,
    whether kernels run in the interpreter, the counter backend (None: no counter pass), where the region
    timers write (None: the profile dir, or nowhere), and where progress lines go."""

    command: list[str]
    formula: Any
    registry: Registry
    settings: DiagnoseSettings
    interpret: bool
    backend: str | None
    timer_dir: str | Path | None
    progress: Callable[[str], None]


def profiler_passes(
    d: Diagnosing, top: list[KernelProfile], recording: Recording, stages: dict[str, float]
) -> tuple[tuple[dict, dict], list[str]]:
    """The counter pass (ncu, rocprofv3) and the region-timer pass: (counter evidence, timer evidence)
    per kernel id, and notes; each pass's seconds in `stages`. Where both run on a GPU and stop the
    program early they run side by side, taking turns on the GPU (profiling/inside/window.py): one's start-up
    and trace writing beside the other's kernels, never two programs' kernels at once. Each then may
    wait for the other's turn, so its limit (--timeout) is the two passes' together."""
    from concurrent.futures import ThreadPoolExecutor

    s, backend = d.settings, d.backend
    wants_timers = d.formula.wants_regions(d.registry)
    side_by_side = backend is not None and wants_timers and not d.interpret and s.stop_early
    limit = s.timeout_s * 2 if side_by_side and s.timeout_s else s.timeout_s

    def timed_stage(name: str, run: Callable[[dict[str, str]], tuple[dict, list[str]]], turn: dict[str, str]):
        begin = time.perf_counter()
        try:
            return run(turn)
        finally:
            stages[name] = time.perf_counter() - begin

    def counter_pass(turn: dict[str, str]) -> tuple[dict, list[str]]:
        if backend is None:
            return {}, []
        d.progress(f"counters: running the command under {backend} for the top {len(top)} kernel(s)")
        keep = Path(s.profile_dir) if s.profile_dir else None
        return _counters(d, top, recording, PassRun(d.command, s.cwd, limit, turn, s.stop_early, keep))

    def timer_pass(turn: dict[str, str]) -> tuple[dict, list[str]]:
        if not wants_timers:
            return {}, []
        if not d.interpret:
            d.progress("region timers: running the command with the top kernels instrumented (Proton)")
        keep = d.timer_dir or s.profile_dir
        return _region_timers(
            d, top, PassRun(d.command, s.cwd, limit, turn, s.stop_early, Path(keep) if keep else None)
        )

    stages |= {"counters": 0.0, "region_timers": 0.0}  # in this order, whichever ends first
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="intelliperf-turns-") as folder:
        turn = {env.GPU_TURN: str(Path(folder) / "gpu.lock")} if side_by_side else {}
        with ThreadPoolExecutor(max_workers=2 if side_by_side else 1) as pool:
            counted = pool.submit(timed_stage, "counters", counter_pass, turn)
            timers = pool.submit(timed_stage, "region_timers", timer_pass, turn)
            (measured, notes), (timed, more) = counted.result(), timers.result()
    for name, ran in (("counters", backend is not None), ("region_timers", wants_timers)):
        if not ran:
            stages.pop(name, None)
    if side_by_side:
        notes.append(
            "the counter and region-timer passes ran side by side, taking turns on the GPU "
            f"({stages['counters']:.1f} s and {stages['region_timers']:.1f} s in {time.perf_counter() - began:.1f} s)"
        )
    return (measured, timed), notes + more


class RegionsOnly:
    """The formula slot of `intelliperf regions`: no verdict, the region timers and static view only."""

    name = "regions"
    metric = None

    def needs(self, registry: Registry) -> set[str]:
        return {STATIC_BACKEND}

    def wants_regions(self, registry: Registry) -> bool:
        return True

    def counter_metrics(self, registry: Registry, backend: str) -> list[str]:
        return []

    def evaluate(self, kernel: KernelProfile, evidence: list, registry: Registry) -> list:
        return []


def _counters(d: Diagnosing, top: list[KernelProfile], recording: Recording, run: PassRun):
    """One profiler pass over the top kernels: evidence per kernel id, and notes. `run.env`: the GPU turn it
    takes (profiler_passes)."""
    from ..profiling import counters
    from ..profiling.inside import window

    assert d.backend is not None  # (profiler_passes asks for a counter pass only with one)
    names = {p.id: p.id.split("@", 1)[0] for p in top}
    metrics = d.formula.counter_metrics(d.registry, d.backend)
    kernels = sorted(set(names.values()))
    configs = window.tuned_configs(top)
    evidence, notes = counters.collect(
        d.backend, run, kernels, metrics, sass_tables=recording.sass_tables(), configs=configs
    )
    return {pid: evidence[name] for pid, name in names.items() if name in evidence}, notes


def _region_timers(d: Diagnosing, top: list[KernelProfile], run: PassRun) -> tuple[dict, list[str]]:
    """One instrumented run over the top kernels (GPU only): evidence per kernel id, and notes. Only kernels
    whose timers could change the verdict (a loop with a dot), but for `intelliperf regions`."""
    from ..profiling import region_timers

    why = region_timers.available(d.interpret)
    if why:
        return {}, [why]
    root = Path(run.cwd or os.getcwd())
    s = d.settings
    loops_only = not isinstance(d.formula, RegionsOnly)
    timers = region_timers.TimerOptions(
        pictures=run.keep is not None, loops_only=loops_only, all_warps=s.all_warps, data=s.region_data
    )
    done = region_timers.collect(replace(run, cwd=root), top, root=root, timers=timers)
    if run.keep is None and done.evidence:
        done.notes.append("the timeline (Perfetto JSON, PNG) is kept with --profile-dir DIR")
    return done.evidence, done.notes
