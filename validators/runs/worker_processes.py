"""The processes a validation runs beside the candidate's program (replay, compute-sanitizer and timing
workers): which a candidate gets and under which tool, where each writes, its environment, how it is started
(ahead of its job), and what its run says (its summary, or the problem of its process).
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Sequence
from pathlib import Path

from intelliperf import env as names
from intelliperf.files import read_regular
from intelliperf.redact import scrub
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.head_start import HeadStart
from intelliperf.workload.runner import Running, Tail, TraceSettings, find_tool, workload_env
from intelliperf.workload.workspace import Confinement, confined_env

from ..settings import WORKER, ValidationSettings
from ..verdict import Problem
from ..workers.jobs import TRIAL_BEGUN, ReplayJob


def _without_bootstrap(pythonpath: str) -> str:
    return os.pathsep.join(p for p in pythonpath.split(os.pathsep) if "bootstrap" not in p)


def worker_env(interpret: bool, out: Path, settings: ValidationSettings, extra: dict) -> dict:
    env = workload_env(out, interpret, TraceSettings(), secrets=tuple(settings.secrets)) | extra
    env["PYTHONPATH"] = _without_bootstrap(env["PYTHONPATH"])
    return env


def start_worker(
    box: sandboxing.Sandbox,
    mode: str,
    out: Path,
    room: Confinement,
    *,
    env: dict,
    early: ReplayJob | None = None,
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
    env = room.env(box, env)
    writable, readable = room.binds()
    taken = ahead.take(box, command, room.cwd, env, writable, readable) if ahead is not None else None
    if taken is not None:
        return taken
    return Running(
        box.wrap(command, cwd=room.cwd, writable=writable, readable=readable),
        cwd=str(room.cwd),
        env=env,
        echo=Tail(),
        stdin=True,
    )


SANITIZER_CHECKS = ("memcheck", "racecheck")  # out-of-bounds and invalid accesses; shared-memory hazards


def worker_folder(work_dir: Path, name: str) -> Path:
    """Where a candidate's worker writes: the replay's, or a compute-sanitizer check's."""
    return work_dir / "replay" if name == "replay" else work_dir / "sanitizer" / name


def worker_kinds(interpret: bool, settings: ValidationSettings) -> tuple[dict[str, tuple[list[str], dict]], str | None]:
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


def worker_summary(out: Path, result, what: str, timeout: float | None) -> dict:
    failure = process_problem(_in_trial(what, out), result, timeout or 0)
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


def _in_trial(what: str, out: Path) -> str:
    """`what`, with the trial a candidate's replay worker began last where it wrote one (a crash then names it:
    a kernel that reads far out of bounds takes the process down, its answer unwritten)."""
    try:
        label = read_regular(out / TRIAL_BEGUN).decode()[:100]
    except (OSError, UnicodeDecodeError):
        return what
    return f"{what}, in {label}," if re.fullmatch(r"(launcher|kernel)-[\w-]+", label) else what


def timing_env(box: sandboxing.Sandbox, interpret: bool, out: Path, settings: ValidationSettings, env: dict) -> dict:
    return confined_env(box, worker_env(interpret, out, settings, env), out / "home", settings.seed)


def process_problem(what: str, result, timeout: float) -> Problem | None:
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
