"""The formula's metric and the kernel time, measured the same way for the original (the baseline) and
for each candidate, from its own run's recording and, where the formula reads them, its region timers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import Evidence, Finding, KernelProfile, Measure
from ..profiling.aggregate import STATIC_BACKEND, Recording
from ..profiling.inside.window import tuned_configs
from ..validators import Program
from ..workload.head_start import HeadStart
from ..workload.runner import PassRun, TraceSettings
from .session import Session

if TYPE_CHECKING:
    from ..profiling.region_timers import TimerRun


def measure(finding: Finding | None, profile: KernelProfile | None, time_source: str) -> Measure:
    return Measure(
        metric=finding.metric.value if finding and finding.metric else None,
        metric_name=finding.metric.name if finding and finding.metric else None,
        metric_modelled=bool(finding and finding.modelled),
        kernel_time_s=profile.mean_time_s if profile else None,
        time_source=time_source,
        bottleneck_absent=bool(finding and not finding.present and not finding.metric and finding.evidence_backend),
        metric_unit=finding.metric.unit if finding and finding.metric else "",
        present=finding.present if finding and finding.evidence_backend else None,
        severity=finding.severity if finding and finding.evidence_backend else None,
    )


def measure_baseline(s: Session) -> Measure:
    """The original measured as each candidate will be, from its recording (no profiler pass), so
    before and after compare like with like when the diagnosis also read hardware counters."""
    return measure_in(s, s.recording, s.profile, s.report.run.time_source, timed_original(s))


def timed_original(s: Session) -> list[Evidence]:
    """The diagnosis's region timers of the original kernel."""
    return [ev for d in s.report.diagnoses if d.kernel == s.profile.name for ev in d.evidence if ev.regions]


def candidate_trace(s: Session, baseline: Measure) -> TraceSettings:
    """What each candidate's validation run records besides its launches: what the diagnosis recorded, less
    the static view where the baseline's metric is the same without it (on a GPU the region timers give
    overlap's), and traced: the kernel and any kernel the original does not launch (a new kernel beside it
    is measured too). The static view compiles the kernel for two more targets inside the candidate's program,
    which waits for it: 2-3 s of a pipelined GEMM's run on the H100, for nothing the verdict reads."""
    trace = s.trace
    if trace.pattern is not None:  # the kernel, and every kernel the original does not launch (new ones beside it)
        others = "|".join(re.escape(k.name) for k in s.recording.kernels if k.name != s.profile.name)
        new = f"|^(?!(?:{others})$)" if others else "|."
        trace = replace(trace, pattern=f"^(?:{re.escape(s.profile.name)})$" + new)
    timed = timed_original(s)
    if not trace.static_targets or baseline.metric is None or not timed:
        return trace
    rest = [ev for ev in s.recording.evidence_of(s.profile.id) if ev.backend != STATIC_BACKEND]
    findings = s.formula.evaluate(s.profile, [*timed, *rest], s.registry)
    without = measure(same_formula(s, findings), s.profile, s.report.run.time_source)
    if (without.metric, without.metric_name) != (baseline.metric, baseline.metric_name):
        return trace
    return replace(trace, static_targets=(), pattern=trace.pattern if trace.sample_programs else None)


def times_regions(s: Session) -> bool:
    """Whether each candidate gets a region-timer run: on a GPU, for a formula that reads the timers."""
    return s.report.run.mode == "compiled" and s.formula.wants_regions(s.registry)


def measure_candidate(
    s: Session,
    recording: Recording,
    program: Program,
    regions: bool = True,
    where: Path | None = None,
    ahead: HeadStart | None = None,
    early: TimerRun | None = None,
) -> Measure:
    """The formula's metric and the kernel time in the candidate's own (validation) run; region
    timers, when the formula reads them, in one more run of the candidate's copy (in `where`/timers, in the
    Python `ahead` started there), read as Proton's per-scope totals (not for a screen, `regions=False`: its
    choice is measured when it is tried). `early`: that run, made beside the validation (`TimerRun`); told the
    original's launches, its totals are read again with the grid and warps the candidate's own run recorded.
    Not for a candidate that autotunes: that run, told no config to pin, timed its configs and chose its own."""
    profile = next((k for k in recording.kernels if k.name == s.profile.name), None)
    if profile is None:
        return _measure_replacements(s, recording)
    from ..profiling import region_timers

    timed: list[Evidence] = []
    stands = regions and not tuned_configs([profile])
    beside = region_timers.reread(early, s.profile, profile) if stands and early is not None else None
    if beside is not None:
        timed = [beside]
    elif regions and times_regions(s):
        s.progress("region timers: the candidate once more, instrumented")
        run = timer_run(s, program, profile, where=where / "timers" if where else None, ahead=ahead)
        timed = list(run.evidence.values())
    own = measure_in(s, recording, profile, recording.first("time_source", "unknown"), timed)
    added = _measure_replacements(s, recording)  # a bottleneck moved into a new kernel is still there
    if added.metric is not None and own.metric is not None and _worst(s, [own, added]) is added:
        kept = ("metric", "metric_name", "metric_unit", "severity")
        own = own.model_copy(update={k: getattr(added, k) for k in kept})
    if added.present:  # the bottleneck in a new kernel beside it is still the program's
        own = own.model_copy(update={"present": True})
    return own


def _worst(s: Session, measures: list[Measure]) -> Measure:
    lower = s.finding.metric is None or s.finding.metric.better == "lower"
    return (max if lower else min)(measures, key=lambda m: m.metric or 0.0)


def _measure_replacements(s: Session, recording: Recording) -> Measure:
    """The kernels a candidate's run launches that the original's did not (a kernel split in two, renamed, or
    new kernels beside it): the formula asked of each, the worst metric of them, and their mean times added
    up (one launch of each). Stands for the kernel's where the kernel is gone; beside it, the worse of the two
    counts (a bottleneck moved into a new kernel is not removed)."""
    before = {k.name for k in s.recording.kernels}
    measures = [
        measure_in(s, recording, k, recording.first("time_source", "unknown"))
        for k in recording.kernels
        if k.name not in before
    ]
    measured = [m for m in measures if m.metric is not None]
    if not measured:
        return Measure()
    worst = _worst(s, measured)
    times = [m.kernel_time_s for m in measures if m.kernel_time_s is not None]
    present = True if any(m.present for m in measures) else worst.present
    return worst.model_copy(update={"kernel_time_s": sum(times) if times else None, "present": present})


def timer_run(
    s: Session,
    program: Program,
    profile: KernelProfile,
    *,
    changes: dict[str, str] | None = None,
    where: Path | None = None,
    ahead=None,
    turn: str | None = None,
):
    """One region-timer run of a candidate, sandboxed: `program` (with the candidate's `changes` where it is the
    original's), its kernel's loop instrumented, read as Proton's per-scope totals (the metric is a share, which
    they give without the trace); `where`, `ahead`, `turn`: as `region_timers.Sandboxed` says."""
    from ..profiling import region_timers

    return region_timers.collect(
        PassRun(program.command, program.workdir(), s.validation.timeout_s, program.env),
        [profile],
        root=program.root,
        changes=changes,
        timers=region_timers.TimerOptions(loops_only=True, data="tree"),
        confined=region_timers.Sandboxed(s.sandbox, where, ahead, turn),
    )


def measure_in(
    s: Session, recording: Recording, profile: KernelProfile, time_source: str, timed: Sequence[Evidence] = ()
) -> Measure:
    """The formula asked again on one run's recording (and its region timers): its metric there,
    and the kernel time."""
    findings = s.formula.evaluate(profile, [*timed, *recording.evidence_of(profile.id)], s.registry)
    return measure(same_formula(s, findings), profile, time_source)


def same_formula(s: Session, findings: list[Finding]) -> Finding | None:
    """The finding of the diagnosis's formula among a formula's findings (a composite gives several)."""
    return next((f for f in findings if f.formula == s.finding.formula), findings[0] if findings else None)
