"""The Python API. The CLI is a thin skin over these functions."""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from . import __version__
from .errors import IntelliPerfError, KernelFilterError, NoKernelsError, UsageError
from .formulas import Registry, default_registry
from .models import KernelDiagnosis, KernelProfile, Report, RunInfo
from .profiling.aggregate import Recording, load_recording
from .workload.runner import TraceSettings, check_command, run_workload

DEVICES = ("auto", "cpu", "gpu")
TRACE_BACKEND = "interpreter-trace"

Progress = Callable[[str], None]


def diagnose(
    command: Sequence[str],
    *,
    formula: str = "diagnoseOnly",
    formula_paths: Sequence[str | Path] = (),
    formula_options: dict | None = None,
    top_n: int = 10,
    kernel: str | None = None,
    device: str = "auto",
    sample_programs: int = 32,
    trace_launches: int = 1,
    timeout_s: float | None = None,
    cwd: str | None = None,
    output: str | Path | None = None,
    markdown: str | Path | None = None,
    progress: Progress | None = None,
) -> Report:
    """Run `command`, rank its Triton kernels and ask `formula` about the top ones.

    Returns the Report that `intelliperf diagnose` prints and writes (`output` for JSON,
    `markdown` for Markdown). Raises an IntelliPerfError subclass for anything the user can fix.
    """
    command = list(command)
    progress = progress or (lambda stage: None)
    registry = default_registry(formula_paths)
    the_formula = registry.create(formula, **(formula_options or {}))
    pattern = _kernel_pattern(kernel)
    if top_n < 1:
        raise UsageError(f"--top-n must be at least 1, got {top_n}")
    if sample_programs < 1:
        raise UsageError(f"--sample-programs must be at least 1, got {sample_programs}")
    check_command(command)
    interpret = _interpret(device)
    trace = TraceSettings(pattern=(kernel or ".") if TRACE_BACKEND in the_formula.needs(registry) else None,
                          sample_programs=sample_programs, launches=trace_launches)

    stages: dict[str, float] = {}
    started = time.perf_counter()
    progress("profiling: running the command with the launch recorder")
    with tempfile.TemporaryDirectory(prefix="intelliperf-") as tmp:
        run = run_workload(command, Path(tmp), interpret=interpret, trace=trace, timeout_s=timeout_s, cwd=cwd)
        recording = load_recording(Path(tmp))
    stages["profile"] = time.perf_counter() - started

    progress("diagnosing the top kernels")
    started = time.perf_counter()
    _check_recording(recording, command)
    top = _select(recording.kernels, pattern, kernel, top_n)
    diagnoses = []
    for rank, profile in enumerate(top, start=1):
        evidence = [recording.evidence[profile.id]] if profile.id in recording.evidence else []
        findings = the_formula.evaluate(profile, evidence, registry)
        diagnoses.append(KernelDiagnosis(kernel=profile.name, rank=rank, findings=findings, evidence=evidence))
    stages["diagnose"] = time.perf_counter() - started

    selected = next((d.kernel for d in diagnoses if any(f.present for f in d.findings)), None)
    report = Report(
        tool_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        formula=the_formula.name,
        run=RunInfo(
            command=command, cwd=run.cwd, mode="interpreter" if interpret else "compiled",
            device=recording.first("device", "unknown"), time_source=recording.first("time_source", "unknown"),
            duration_s=run.duration_s, processes=len(recording.records), launches=recording.launches,
            versions={"intelliperf": __version__, **_merged_versions(recording)}),
        kernels=recording.kernels, top=[p.name for p in top], diagnoses=diagnoses, selected=selected,
        stages=stages, notes=_notes(registry, recording, interpret))
    from .delivery.report import write_reports

    write_reports(report, output=output, markdown=markdown)
    return report


def _kernel_pattern(kernel: str | None) -> re.Pattern | None:
    if kernel is None:
        return None
    try:
        return re.compile(kernel)
    except re.error as exc:
        raise UsageError(f"--kernel {kernel!r} is not a valid regular expression: {exc}") from None


def _interpret(device: str) -> bool:
    """True when the kernels must run in Triton's interpreter (no GPU, or --device cpu)."""
    if device not in DEVICES:
        raise UsageError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cpu":
        return True
    import torch

    has_gpu = torch.cuda.is_available()
    if device == "gpu" and not has_gpu:
        raise UsageError("--device gpu was asked for, but torch sees no GPU on this machine",
                         hint="Use --device cpu (or auto) to run the kernels in Triton's interpreter.")
    return not has_gpu


def _check_recording(recording: Recording, command: list[str]) -> None:
    if recording.errors:
        raise IntelliPerfError("the launch recorder failed inside the program: " + "; ".join(recording.errors))
    if recording.processes_started == 0:
        raise NoKernelsError(
            f"the command ran, but no Python process of it started the recorder: {' '.join(command)}",
            hint="intelliperf records Python programs (python app.py, python -m pkg, pytest ...). A shell script "
                 "works too if it runs Python without clearing PYTHONPATH.")
    if not recording.kernels:
        raise NoKernelsError(
            f"the command ran, but launched no Triton kernel ({recording.processes_started} Python process(es) "
            "watched)", hint="Is the code path that launches the @triton.jit kernels taken with these arguments?")


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


def _notes(registry: Registry, recording: Recording, interpret: bool) -> list[str]:
    notes = [f"formula plug-in {name!r} could not be loaded: {why}" for name, why in registry.broken.items()]
    if interpret:
        notes.append("No GPU was used: kernel times are wall times of Triton's interpreter, and the evidence is a "
                     "model of the memory traffic, not hardware counters.")
    for k in recording.kernels:
        if k.timed_launches < k.launches:
            notes.append(f"{k.name}: {k.timed_launches} of {k.launches} launches were timed (the first ones and a "
                         "random sample); its total time is scaled from them")
    for record in recording.records:
        notes += [f"recorder, process {record['pid']}: {problem}" for problem in record.get("problems", [])]
    for ev in recording.evidence.values():
        notes += [f"{ev.kernel}: {note}" for note in ev.notes]
    return notes
