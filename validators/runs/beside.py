"""How the workers beside a candidate's program (replay, compute-sanitizer and timing; started by
`worker_processes.py`) fit the machine: how long a run may take (scaled by the machine's load), whether the
workers fit on the GPU beside the program run, and the set of workers started before it runs (`WorkersBeside`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from intelliperf.workload.runner import Running

from ..settings import ValidationSettings
from ..workers.jobs import ReplayJob

if TYPE_CHECKING:
    from .head_starts import TimingHeadStart
    from .reference import ReferenceRun


def load_factor() -> float:
    """How much slower than when idle this machine runs now: runnable processes per core, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # no load average on this platform
        return 1.0


def busy() -> bool:
    """More runnable processes than three quarters of the cores: a timeout may be the machine's, not the
    candidate's."""
    try:
        return os.getloadavg()[0] > 0.75 * (os.cpu_count() or 1)
    except OSError:
        return False


def run_limit(reference: ReferenceRun, settings: ValidationSettings) -> float:
    """How long a candidate's program run may take: the user's limit, else `default_limit` of the reference's run."""
    return settings.timeout_s or default_limit(reference.duration_s, settings)


def default_limit(reference_s: float, settings: ValidationSettings) -> float:
    """A candidate's limit where the user set none: what the reference took, with room, scaled by load."""
    return (4 * reference_s + 30) * load_factor() * settings.patience


@dataclass
class WorkersBeside:
    """The workers started before the candidate's program runs, each waiting for its job."""

    replay: Running
    early: ReplayJob | None  # the job whose `early_mode` trials the workers run while they wait
    sanitizers: dict[str, Running]  # compute-sanitizer check -> its worker; empty when none runs
    unsanitized: str | None = None  # why none runs where they were due
    timing: dict[str, Any] = field(default_factory=dict)  # side -> timing worker started ahead (GPU)
    timed: ReplayJob | None = None  # the job the candidate's timing worker was started with
    timed_mode: str | None = None  # what it times: the launcher, or the kernel's own launch
    timing_heads: dict[str, TimingHeadStart] = field(default_factory=dict)  # timing workers' Pythons started ahead
    timed_ahead: list[str] = field(default_factory=list)  # the timing workers handed their job in those
    quiet: Callable[[], str | None] | None = None  # before the timing: the caller's GPU work beside it stops

    def started_ahead(self) -> list[str]:
        """The workers that ran in a Python started before the candidate existed (`start_head_starts`)."""
        workers = {"replay worker": self.replay, **self.sanitizers}
        return [name for name, running in workers.items() if running.ahead] + self.timed_ahead

    def stop(self) -> None:
        for worker in (self.replay, *self.sanitizers.values(), *self.timing.values()):
            worker.stop()
        for timer in self.timing_heads.values():
            timer.side.stop()

    def take_timing(self) -> dict[str, Any]:
        """The timing workers started ahead, now the caller's to time or stop."""
        sides, self.timing = self.timing, {}
        return sides

    def unsanitize(self, why: str) -> None:
        for worker in self.sanitizers.values():
            worker.stop()
        self.sanitizers, self.unsanitized = {}, why


# Inputs a worker places on the GPU above this: on a GPU no trial and no timing worker starts ahead of the
# program run, and the replay, the sanitizers and the timing take turns instead of running side by side.
AHEAD_INPUTS_BYTES = 1 << 30


# Beside a candidate's program run: the replay worker, two sanitizer workers and two timing workers, each
# holding a CUDA context with torch and Triton loaded besides its trial's inputs.
BESIDE_WORKERS = 5


# A worker's own: 549 MiB measured on the H100 (torch, Triton, one kernel launched), 783 MiB under
# compute-sanitizer memcheck, 659 MiB under racecheck (benchmarks/worker_memory.py); rounded up.
WORKER_CONTEXT_BYTES = 1 << 30


def fits_beside(reference: ReferenceRun, programs: int = 1) -> bool:
    """Whether the first trial's inputs (about what each replay, sanitizer or timing worker places on the
    GPU) are small enough for those workers to hold them side by side, and beside the program run; and,
    where the reference's run said how much GPU memory it held at most, whether the program and those
    workers fit on the device together (a candidate run out of memory because of intelliperf's own workers
    would be rejected for nothing)."""
    placed = [reference.inputs / f"{mode}-0.pt" for mode in ("launcher", "kernel")]
    largest = max((path.stat().st_size for path in placed if path.exists()), default=0)
    memory = reference.manifest.get("gpu_memory")
    beside = BESIDE_WORKERS * (largest + WORKER_CONTEXT_BYTES)
    held = programs * memory["peak_reserved"] if memory else 0  # (`programs`: runs of the program at once)
    return largest <= AHEAD_INPUTS_BYTES and (not memory or held + beside <= 0.9 * memory["total"])
