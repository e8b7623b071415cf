"""What one optimize run carries from attempt to attempt: the diagnosis, the settings, the budget,
and the Pythons started ahead for the next candidate."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..formulas import Formula, Registry
from ..models import Finding, KernelProfile, Optimization, Report
from ..profiling.aggregate import Recording
from ..rewriters import CodeUnit
from ..validators import HeadStarts, ReferenceRun, ValidationSettings
from ..workload.head_start import HeadStart
from ..workload.runner import TraceSettings
from ..workload.sandbox import Sandbox


@dataclass
class Budget:
    """The loop's budget, from OptimizeSettings (whose fields hold the defaults and the checks)."""

    max_attempts: int
    time_budget_s: float | None
    max_tokens: int | None
    candidates: int  # per round (best-of-N)
    devices: list[str] = field(default_factory=list)  # GPUs to validate a round's candidates on, one worker each


@dataclass(frozen=True)
class Target:
    """What every attempt of a run is checked against and spliced into: the captured reference run, and the
    kernel and its launcher as the project had them (None: the launch cannot be rewritten)."""

    reference: ReferenceRun
    kernel: CodeUnit
    launcher: CodeUnit | None


@dataclass
class Session:
    """What the loop needs from the diagnosis, and where it writes."""

    report: Report
    profile: KernelProfile
    finding: Finding
    recording: Recording
    formula: Formula
    registry: Registry
    root: Path
    out_dir: Path
    trace: TraceSettings  # what the diagnosis recorded besides the launches (address trace, static view)
    validation: ValidationSettings
    budget: Budget
    write: Callable[[], None]
    progress: Callable[[str], None]
    started: float = field(default_factory=time.perf_counter)
    originals: dict[str, str] = field(default_factory=dict)  # the files a candidate may change, as the run began
    sandbox: Sandbox | None = None  # every program run of the loop goes through it
    ahead: AttemptHeadStarts | None = None  # the next attempt's folder, and the Pythons started for it
    candidate_trace: TraceSettings | None = None  # what a candidate's validation run records (`candidate_trace`)


@dataclass
class AttemptHeadStarts:
    """The next attempt's folder and the Pythons started for it (`start_next`): its validation's, and its
    region-timer run's where the formula reads region timers."""

    where: Path
    validation: HeadStarts
    timers: HeadStart | None = None  # for a `region_timers.collect` in `where / "timers"` (`measure.timer_run`)

    def stop(self) -> None:
        self.validation.stop()
        if self.timers is not None:
            self.timers.stop()

    def started(self, timeout_s: float) -> str | None:
        """Once every one of them has its start-up over (it then takes no CPU until its run comes); what
        kept them, where `timeout_s` passed first."""
        heads = [*self.validation.heads(), *([self.timers] if self.timers else [])]
        deadline = time.perf_counter() + timeout_s
        while not all(head.started() for head in heads):
            if time.perf_counter() > deadline:
                return (
                    f"the next candidate's Pythons, started beside this validation, were still starting after "
                    f"{timeout_s:g} s: their start-up may have taken CPU from the timing"
                )
            time.sleep(0.02)
        return None


def budget_spent(s: Session, opt: Optimization) -> str | None:
    b = s.budget
    if len(opt.attempts) >= b.max_attempts:
        return f"stopped after {len(opt.attempts)} attempts (--max-attempts)"
    if b.time_budget_s is not None and time.perf_counter() - s.started > b.time_budget_s:
        return f"stopped: the time budget of {b.time_budget_s:g} s is spent"
    if b.max_tokens is not None and opt.tokens >= b.max_tokens:
        return f"stopped: {opt.tokens} tokens used, budget {b.max_tokens}"
    return None


def serial_device(s: Session) -> str | None:
    """The GPU candidates are validated on one after another (`loop._round`)."""
    return s.budget.devices[0] if s.budget.devices else None
