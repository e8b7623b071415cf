"""The processes a validation runs beside the candidate's program (replay, compute-sanitizer and timing
workers): how each is started, its limits, its summary, and whether they fit on the GPU beside the run.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from intelliperf import env as names
from intelliperf.files import read_regular
from intelliperf.redact import scrub
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.head_start import HeadStart
from intelliperf.workload.runner import Running, Tail, TraceSettings, find_tool, workload_env
from intelliperf.workload.workspace import confined_env

# Problems that already say what is wrong: no replay after them.
from .settings import WORKER, ValidationSettings
from .verdict import Problem

if TYPE_CHECKING:
    from .head_starts import _TimingHead
    from .reference import ReferenceRun


def _without_bootstrap(pythonpath: str) -> str:
    return os.pathsep.join(p for p in pythonpath.split(os.pathsep) if "bootstrap" not in p)


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
    """How long a candidate's program run may take: the user's limit, else `_limit` of the reference's run."""
    return settings.timeout_s or _limit(reference.duration_s, settings)


def _limit(reference_s: float, settings: ValidationSettings) -> float:
    """A candidate's limit where the user set none: what the reference took, with room, scaled by load."""
    return (4 * reference_s + 30) * load_factor() * settings.patience


def _worker_env(interpret: bool, out: Path, settings: ValidationSettings, extra: dict) -> dict:
    env = workload_env(out, interpret, TraceSettings(), secrets=tuple(settings.secrets)) | extra
    env["PYTHONPATH"] = _without_bootstrap(env["PYTHONPATH"])
    return env


def start_worker(
    box: sandboxing.Sandbox,
    mode: str,
    out: Path,
    *,
    cwd: Path,
    home: Path,
    seed: int,
    env: dict,
    writable: tuple[Path, ...],
    readable: tuple[Path, ...],
    early: dict | None = None,
    wrap: Sequence[str] = (),
    ahead: HeadStart | None = None,
) -> Running:
    """A replay worker started ahead of its job (the program it waits for still runs): it takes the
    start-up of Python, torch and Triton off the critical path, and runs `early` meanwhile. Its
    job's path goes to it with `send`; `stop` ends it when no job comes. `wrap` goes before Python
    (a tool that runs the worker as its child, e.g. compute-sanitizer). In `ahead`, a Python started for
    it before the candidate existed, where that fits (`HeadStart.fits`)."""
    out.mkdir(parents=True, exist_ok=True)
    command = [*wrap, *WORKER, "serve", mode]
    if early is not None:
        (out / "early.json").write_text(json.dumps(early))
        command.append(str(out / "early.json"))
    env = confined_env(box, env, home, seed)
    taken = ahead.take(box, command, cwd, env, (*writable, home), readable) if ahead is not None else None
    if taken is not None:
        return taken
    return Running(
        box.wrap(command, cwd=cwd, writable=(*writable, home), readable=readable),
        cwd=str(cwd),
        env=env,
        echo=Tail(),
        stdin=True,
    )


@dataclass
class _Warm:
    """The workers started before the candidate's program runs, each waiting for its job."""

    replay: Running
    early: dict | None  # the job whose `early_mode` trials the workers run while they wait
    sanitizers: dict[str, Running]  # compute-sanitizer check -> its worker; empty when none runs
    unsanitized: str | None = None  # why none runs where they were due
    timing: dict[str, Any] = field(default_factory=dict)  # side -> timing worker started ahead (GPU)
    timed: dict | None = None  # the job the candidate's timing worker was started with
    timed_mode: str | None = None  # what it times: the launcher, or the kernel's own launch
    timing_heads: dict[str, _TimingHead] = field(default_factory=dict)  # timing workers' Pythons started ahead
    timed_ahead: list[str] = field(default_factory=list)  # the timing workers handed their job in those
    quiet: Callable[[], str | None] | None = None  # before the timing: the caller's GPU work beside it stops

    def started_ahead(self) -> list[str]:
        """The workers that ran in a Python started before the candidate existed (`start_ahead`)."""
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


SANITIZER_CHECKS = ("memcheck", "racecheck")  # out-of-bounds and invalid accesses; shared-memory hazards


def _worker_folder(work_dir: Path, name: str) -> Path:
    """Where a candidate's worker writes: the replay's, or a compute-sanitizer check's."""
    return work_dir / "replay" if name == "replay" else work_dir / "sanitizer" / name


def _worker_kinds(
    interpret: bool, settings: ValidationSettings
) -> tuple[dict[str, tuple[list[str], dict]], str | None]:
    """The workers a candidate gets, each with the tool it runs under and its own variables: the replay's,
    and on a GPU each compute-sanitizer check's; and why those are not run where they were due."""
    kinds: dict[str, tuple[list[str], dict]] = {"replay": ([], {})}
    if not (settings.sanitizer if settings.sanitizer is not None else not interpret):
        return kinds, None
    tool = find_tool(names.COMPUTE_SANITIZER, "compute-sanitizer", "CUDA_HOME", "/usr/local/cuda")
    if tool is None:
        return kinds, "compute-sanitizer not run: it was not found (PATH, $CUDA_HOME/bin)"
    for check in SANITIZER_CHECKS:
        wrap = [tool, "--tool", check, "--error-exitcode", "86", "--print-limit", "8", "--show-backtrace", "device"]
        # Each tensor its own allocation: inside torch's cached blocks an access past a tensor's end is not one
        # past an allocation's, and memcheck would not see it.
        extra = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
        if check == "racecheck" and not interpret:  # (the interpreter's launches have no CTAs to cap)
            ctas = settings.racecheck_ctas
            extra[names.RACECHECK_CTAS] = "sm" if ctas is None else str(ctas)
        kinds[check] = (wrap, extra)
    return kinds, None


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


def _summary(out: Path, result, what: str, timeout: float | None) -> dict:
    failure = _process_problem(what, result, timeout or 0)
    summary_path = out / "replay.json"
    if failure or not summary_path.exists():
        return {
            "runs": [],
            "failures": [],
            "notes": [],
            "problem": failure
            or Problem(
                kind="crash", message=f"{what} wrote no result; output tail:\n" + scrub("\n".join(result.tail[-15:]))
            ),
        }
    try:
        return json.loads(read_regular(summary_path))
    except (ValueError, OSError) as exc:
        return {
            "runs": [],
            "failures": [],
            "notes": [],
            "problem": Problem(kind="replay-failed", message=f"{what} wrote an unreadable result: {exc}"),
        }


def _timing_env(box: sandboxing.Sandbox, interpret: bool, out: Path, settings: ValidationSettings, env: dict) -> dict:
    return confined_env(box, _worker_env(interpret, out, settings, env), out / "home", settings.seed)


def _process_problem(what: str, result, timeout: float) -> Problem | None:
    tail = scrub("\n".join(result.tail[-15:]))
    if result.timed_out:
        return Problem(
            kind="timeout", message=f"{what} ran past its {timeout:.0f} s timeout and was killed; output tail:\n{tail}"
        )
    if result.returncode != 0:
        how = f"exit code {result.returncode}"
        if result.returncode < 0:
            how = f"signal {signal.Signals(-result.returncode).name}"
        return Problem(kind="crash", message=f"{what} failed ({how}); output tail:\n{tail}")
    return None
