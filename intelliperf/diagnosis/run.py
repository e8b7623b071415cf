"""The diagnosis run behind `diagnose`, `regions` and `optimize`: the program run with the launch
recorder, its kernels ranked, the profiler passes, and the formula's findings in a Report."""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..errors import IntelliPerfError, KernelFilterError, NoKernelsError
from ..formulas import Registry
from ..models import KernelDiagnosis, KernelProfile, Report, RunInfo
from ..profiling.aggregate import Recording, collect_evidence, load_recording
from ..profiling.trace_worker import LaterTraces
from ..settings import DiagnoseSettings
from ..workload.runner import TraceSettings, check_command, run_workload, uncompiled_note
from .checks import absolute_program, kernel_pattern, runs_interpreted
from .passes import Diagnosing, counter_backend, profiler_passes, trace_settings
from .priorities import launch_bound

LATER_TRACE_START_S = 60.0  # a deferred trace's worker: its start and imports, before each launch's budget


def profile_and_diagnose(
    command: list[str],
    the_formula,
    registry: Registry,
    s: DiagnoseSettings,
    *,
    progress: Callable[[str], None],
    timer_dir: str | Path | None = None,
) -> tuple[Report, Recording]:
    """Profile, rank and diagnose: the report without an optimization, and the recording."""
    kernel_pattern(s.kernel)  # a bad filter is said before anything runs (the settings' fields check the rest)
    check_command(command)
    command = absolute_program(command, s.cwd)
    interpret = runs_interpreted(s.device)
    trace = trace_settings(the_formula, registry, s.kernel, s.sample_programs, s.trace_launches, interpret)
    backend, counter_note = counter_backend(s.counters, the_formula, registry, interpret)
    trace.sass_lines = backend == "ncu" and trace.pattern is not None
    # On a GPU, where another pass follows, the trace runs after the program, beside that pass.
    later = LaterTraces() if trace_later(trace, interpret, backend, the_formula, registry) else None
    d = Diagnosing(command, the_formula, registry, s, interpret, backend, timer_dir, progress)
    try:
        if later is not None and Path(s.cwd or os.getcwd()).is_dir():  # else the program run says what is wrong
            later.warm(s.cwd or os.getcwd())  # its imports beside the profile run
        return _diagnosed(d, trace, counter_note, later)
    finally:
        if later is not None:
            later.discard()


def trace_later(trace: TraceSettings, interpret: bool, backend: str | None, the_formula, registry: Registry) -> bool:
    """Whether the interpreter trace runs after the program (trace_worker): on a GPU, where the ncu or
    region-timer pass follows for it to run beside (alone it would only add its worker's start-up)."""
    traced = trace.pattern is not None and trace.sample_programs > 0
    return not interpret and traced and (backend is not None or the_formula.wants_regions(registry))


def _diagnosis(
    rank: int, profile: KernelProfile, passes: list[dict], recording: Recording, the_formula, registry, interpret: bool
) -> KernelDiagnosis:
    """One kernel's findings on its evidence, best first: hardware counters, region timers (`passes`, by kernel
    id), then the interpreter model, then the static view."""
    evidence = [p[profile.id] for p in passes if profile.id in p] + recording.evidence_of(profile.id)
    findings = the_formula.evaluate(profile, evidence, registry)
    bound = launch_bound(profile, interpret, evidence)
    return KernelDiagnosis(kernel=profile.name, rank=rank, findings=findings, evidence=evidence, launch_bound=bound)


def _diagnosed(
    d: Diagnosing, trace: TraceSettings, counter_note: str | None, later: LaterTraces | None
) -> tuple[Report, Recording]:
    """profile_and_diagnose's work, with its trace deferred to `later` where it is given."""
    command, the_formula, registry, s = d.command, d.formula, d.registry, d.settings
    interpret, progress = d.interpret, d.progress
    pattern = kernel_pattern(s.kernel)
    trace.later_dir = str(later.folder) if later is not None else None
    stages: dict[str, float] = {}
    started = time.perf_counter()
    progress("profiling: running the command with the launch recorder")
    run, recording = _profiled(command, interpret, trace, s)
    stages["profile"] = time.perf_counter() - started
    if later is not None:
        later.start(run.cwd)

    progress("diagnosing the top kernels")
    started = time.perf_counter()
    _check_recording(recording, command)
    top = _select(recording.kernels, pattern, s.kernel, s.top_n)
    counter_notes = [counter_note] if counter_note else []
    passes_started = time.perf_counter()
    (measured, timed), notes = profiler_passes(d, top, recording, stages)
    counter_notes += notes
    started += time.perf_counter() - passes_started
    if later is not None:
        started_traces = time.perf_counter()
        traced, notes = later.finish(LATER_TRACE_START_S + trace.budget_s * later.jobs())
        recording.evidence = collect_evidence(recording.records + traced)
        counter_notes += notes
        stages["trace_wait"] = time.perf_counter() - started_traces
        started += stages["trace_wait"]
    diagnoses = [
        _diagnosis(rank, profile, [measured, timed], recording, the_formula, registry, interpret)
        for rank, profile in enumerate(top, start=1)
    ]
    stages["diagnose"] = time.perf_counter() - started

    selected = next((d.kernel for d in diagnoses if any(f.present for f in d.findings)), None)
    report = Report(
        tool_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        formula=the_formula.name,
        run=RunInfo(
            command=command,
            cwd=run.cwd,
            mode="interpreter" if interpret else "compiled",
            device=recording.first("device", "unknown"),
            time_source=recording.first("time_source", "unknown"),
            duration_s=run.duration_s,
            processes=len(recording.records),
            launches=recording.launches,
            versions={"intelliperf": __version__, **_merged_versions(recording)},
        ),
        kernels=recording.kernels,
        top=[p.name for p in top],
        diagnoses=diagnoses,
        selected=selected,
        stages=stages,
        notes=stopped_note(recording) + report_notes(registry, recording, interpret) + counter_notes,
    )
    return report, recording


def stopped_note(recording: Recording) -> list[str]:
    """A program stopped at its time limit is diagnosed on what it launched until then: the report says so."""
    if recording.stopped_at_s is None:
        return []
    return [
        f"the program was stopped at its time limit ({recording.stopped_at_s:g} s): the diagnosis is of the "
        f"{recording.launches:,} launch{'' if recording.launches == 1 else 'es'} it made until then"
    ]


def _profiled(command: list[str], interpret: bool, trace: TraceSettings, s: DiagnoseSettings):
    """The program's run with the recorder, and what it recorded (until its time limit, if it reached it)."""
    with tempfile.TemporaryDirectory(prefix="intelliperf-") as tmp:
        run = run_workload(command, Path(tmp), interpret=interpret, trace=trace, timeout_s=s.timeout_s, cwd=s.cwd)
        recording = load_recording(Path(tmp))
    recording.stopped_at_s = run.stopped_at_s
    return run, recording


def _check_recording(recording: Recording, command: list[str]) -> None:
    if recording.errors:
        raise IntelliPerfError("the launch recorder failed inside the program: " + "; ".join(recording.errors))
    if recording.processes_started == 0:
        raise NoKernelsError(
            f"the command ran, but no Python process of it started the recorder: {' '.join(command)}",
            hint="intelliperf records Python programs (python app.py, python -m pkg, pytest ...). A shell script "
            "works too if it runs Python without clearing PYTHONPATH.",
        )
    if not recording.kernels:
        raise NoKernelsError(
            f"the command ran, but launched no Triton kernel ({recording.processes_started} Python process(es) "
            "watched)",
            hint="Is the code path that launches the @triton.jit kernels taken with these arguments?",
        )


def _select(kernels: list[KernelProfile], pattern: re.Pattern | None, raw: str | None, top_n: int):
    chosen = [k for k in kernels if pattern is None or pattern.search(k.name)]
    if not chosen:
        raise KernelFilterError(raw or "", [k.name for k in kernels])
    return chosen[:top_n]


def _merged_versions(recording: Recording) -> dict[str, str]:
    versions: dict[str, str] = {}
    for record in recording.records:
        versions.update(record.get("versions", {}))
    return versions


def graph_note(records: list[dict], interpret: bool) -> str | None:
    """What the run did with CUDA graphs (profiling/inside/graphs.py), and so what its times are of."""
    tallies = [r["graphs"] for r in records if r.get("graphs")]
    if not tallies:
        return None
    count = {k: sum(t.get(k, 0) for t in tallies) for k in ("made", "refused", "captures", "replays")}
    inside = sum(t.get("launches_in_capture", 0) for t in tallies)
    sites = list(dict.fromkeys(s for t in tallies for s in t.get("sites", [])))
    where = f" ({', '.join(sites[:3])})" if sites else ""
    if count["captures"]:
        return (
            f"CUDA graphs: the program captured {count['captures']} graph(s) and replayed them {count['replays']} "
            f"time(s){where}. The {inside} Triton launch(es) made while capturing are counted once each and not "
            "timed; the replays never pass through Triton, so kernel times and launch counts here leave them out "
            "(they are of the launches made outside graphs). Run the workload without graphs (its eager or "
            "event-timed mode) to rank the replayed kernels."
        )
    if count["refused"] or interpret:
        tried = f" (torch refused the {count['refused']} it tried to make)" if count["refused"] else ""
        return (
            f"CUDA graphs: the program's source makes CUDA graphs{where}; it ran without one{tried}, as there "
            "are none without a GPU. Times here are of the launches it made "
            "eagerly (its fallback path), not of a graph's replay; a GPU run profiles the graphed workload's "
            "capture only (replays are not seen)."
        )
    return None


def report_notes(registry: Registry, recording: Recording, interpret: bool) -> list[str]:
    notes = [f"formula plug-in {name!r} could not be loaded: {why}" for name, why in registry.broken.items()]
    if interpret:
        notes.append(
            "No GPU was used: kernel times are wall times of Triton's interpreter, and the evidence is a "
            "model of the memory traffic, not hardware counters."
        )
    for k in recording.kernels:
        if k.timed_launches < k.launches:
            notes.append(
                f"{k.name}: {k.timed_launches} of {k.launches} launches were timed (the first ones and a "
                "random sample); its total time is scaled from them"
            )
    for record in recording.records:
        notes += [f"recorder, process {record['pid']}: {problem}" for problem in record.get("problems", [])]
    if graphs := graph_note(recording.records, interpret):
        notes.append(graphs)
    if uncompiled := uncompiled_note():
        notes.append(uncompiled)
    for items in recording.evidence.values():
        notes += [f"{ev.kernel}: {note}" for ev in items for note in ev.notes]
    return notes
