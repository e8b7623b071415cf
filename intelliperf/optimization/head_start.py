"""Head starts: the next candidate's Pythons started while this one is validated, and a candidate's
region-timer run started beside its validation, with what the timing waits for before it starts."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..profiling.inside.window import tuned_configs
from ..validators import CandidateLayout, Program, ReferenceRun, start_head_starts
from ..validators.runs.beside import fits_beside
from ..workload.devices import pinned_env
from .measure import timer_run, times_regions
from .session import AttemptHeadStarts, Session, serial_device

if TYPE_CHECKING:
    from ..profiling.region_timers import TimerRun

# Head starts by default from this many cores: on the 2-core CPU machine the first one slowed the reference
# capture it overlaps by about what it saved the candidate's run (1.2 s against 1.0 s, README example).
HEAD_START_CPUS = 4


@dataclass
class TimersBeside:
    """A candidate's region-timer run started with its validation (`timers_beside`): its start-up, its
    program's work before its first launch and that launch's compilation run beside the validation; the
    GPU turn it then waits for is the loop's until the validation is over."""

    where: Path  # its `collect(where=...)`
    lock: int  # the turn, held: the file descriptor of its lock
    thread: threading.Thread
    out: list  # [its TimerRun] once the run is over

    def quiet(self) -> str | None:
        """Before the validation's timing: until the run waits for its turn (or has ended)."""
        from ..profiling import region_timers

        deadline = time.perf_counter() + PARK_WAIT_S
        while self.thread.is_alive() and not region_timers.parked(self.where):
            if time.perf_counter() > deadline:
                return (
                    f"the candidate's region-timer run, started beside its validation, had not reached its first "
                    f"launch after {PARK_WAIT_S:g} s: what it ran on the GPU before may have shared it with the timing"
                )
            time.sleep(0.02)
        return None

    def finish(self, timeout_s: float) -> TimerRun | None:
        """The turn given to the run (its launch runs now), and the run once it ends; None where it did not end
        in `timeout_s` (it ends with the sandbox when intelliperf does)."""
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1
        self.thread.join(timeout_s)
        return self.out[0] if self.out else None


PARK_WAIT_S = 60.0  # how long the timing waits for a region-timer run beside it to reach its first launch


def start_next(s: Session, work: Path, done: int, reference: ReferenceRun | None = None) -> None:
    """The Pythons for the next candidate's program run and workers (`start_head_starts`), in a folder of its own,
    after attempt `done` (0: while the reference is captured; beside it where it is a screen), where the
    settings want them (`ValidationSettings.head_start`); not after the budget's last attempt, not where
    candidates are spread over several GPUs, nor twice. Once the `reference` says its workers fit beside its
    run, they make their CUDA contexts now too."""
    wanted = s.validation.head_start
    if wanted is None:
        wanted = (os.cpu_count() or 1) >= HEAD_START_CPUS
    last = done >= s.budget.max_attempts  # attempt `done` was the budget's last
    if last or not wanted or s.ahead is not None or len(s.budget.devices) > 1 or s.sandbox is None:
        return
    where = Path(tempfile.mkdtemp(prefix="attempt-", dir=work))
    reference_dir = work / "reference"  # where `loop._reference` captures it (capture_reference's layout)
    layout = CandidateLayout(
        where / "project", where / "validation", reference_dir / "inputs", reference_dir / "project"
    )
    validation = start_head_starts(
        s.sandbox,
        s.report.run.command[0],
        layout,
        interpret=s.report.run.mode == "interpreter",
        settings=s.validation,
        env=pinned_env(serial_device(s)),
        cuda=reference is not None and fits_beside(reference),
    )
    timers = None
    if times_regions(s):
        from ..profiling import region_timers

        timers = region_timers.start_timer_head_start(
            s.sandbox, s.report.run.command[0], where / "timers", pinned_env(serial_device(s))
        )
    s.ahead = AttemptHeadStarts(where, validation, timers)


def timers_beside(
    s: Session, reference: ReferenceRun, changes: dict[str, str], where: Path, device: str | None
) -> TimersBeside | None:
    """The candidate's region-timer run, started now beside its validation (in a fresh Python: its start-up
    is off the critical path, and the one started ahead stays for a run after the validation where this one
    gave nothing), where the formula reads the timers on a GPU: it waits for its GPU turn at its first
    launch, and the loop holds the turn until the validation is over. Told the original's launches (the
    candidate's are known only after its run; its totals are read again with them): not for an autotuned
    kernel (which config to pin), nor where the program's recorded GPU memory would not fit twice beside the
    validation's workers."""
    if not times_regions(s) or tuned_configs([s.profile]) or not fits_beside(reference, programs=2):
        return None
    from ..profiling import region_timers

    timers = where / "timers-beside"  # (`where / "timers"` is the Python started ahead's)
    lock = region_timers.turn_file(timers)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    os.lockf(fd, os.F_LOCK, 0)
    out: list = []

    original = Program(s.root, s.report.run.command, Path(s.report.run.cwd), env=pinned_env(device))

    def run() -> None:
        try:
            out.append(timer_run(s, original, s.profile, changes=changes, where=timers, turn=str(lock)))
        except Exception:  # noqa: BLE001  (its folder gone with a retried validation: measured after it instead)
            pass

    thread = threading.Thread(target=run, name="region-timers-beside", daemon=True)
    thread.start()
    return TimersBeside(timers, fd, thread, out)


def before_timing(s: Session, beside: TimersBeside | None) -> Callable[[], str | None] | None:
    """What a correct candidate's timing waits for: the region-timer run beside it parked at its first launch,
    and the next candidate's Pythons started beside it done starting."""
    if beside is None and s.ahead is None:
        return None

    def quiet() -> str | None:
        said = [beside.quiet() if beside else None, s.ahead.started(PARK_WAIT_S) if s.ahead else None]
        return "; ".join(note for note in said if note) or None

    return quiet
