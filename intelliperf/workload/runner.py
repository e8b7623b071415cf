"""Run the user's command in a subprocess with the launch recorder installed.

The user changes nothing in their code: a `sitecustomize` on PYTHONPATH loads the recorder
into every Python process the command starts. The command's stdout passes through; its stderr
passes through and its tail is kept for the error message when it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ..errors import CommandNotFoundError, EmptyCommandError, WorkloadFailedError, WorkloadTimeoutError
from ..profiling.recorder import ENV_DIR, ENV_SAMPLE, ENV_TRACE, ENV_TRACE_BUDGET, ENV_TRACE_LAUNCHES

BOOTSTRAP_DIR = Path(__file__).parent / "bootstrap"
PACKAGE_PARENT = Path(__file__).resolve().parents[2]

# Never handed to the user's program: it has no need for our credentials.
SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
                    "INTELLIPERF_API_KEY")


@dataclass
class TraceSettings:
    """Which kernels the interpreter address trace looks at, and how much of each."""

    pattern: str | None = None  # regex of kernel names; None: no trace
    sample_programs: int = 32
    launches: int = 1
    budget_s: float = 60.0


@dataclass
class WorkloadRun:
    command: list[str]
    cwd: str
    record_dir: Path
    returncode: int
    duration_s: float
    stderr_tail: str


def check_command(command: list[str]) -> None:
    if not command or not command[0].strip():
        raise EmptyCommandError()
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise CommandNotFoundError(program)
    elif shutil.which(program) is None:
        raise CommandNotFoundError(program)


def workload_env(record_dir: Path, interpret: bool, trace: TraceSettings, base: dict | None = None) -> dict:
    env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in SECRET_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join([str(BOOTSTRAP_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env[ENV_DIR] = str(record_dir)
    env["INTELLIPERF_HOME"] = str(PACKAGE_PARENT)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:  # --device gpu must mean compiled kernels, whatever the calling shell has set
        env.pop("TRITON_INTERPRET", None)
    if trace.pattern is not None:
        env[ENV_TRACE] = trace.pattern
        env[ENV_SAMPLE] = str(trace.sample_programs)
        env[ENV_TRACE_LAUNCHES] = str(trace.launches)
        env[ENV_TRACE_BUDGET] = str(trace.budget_s)
    return env


def _tee(stream, sink, tail: deque) -> None:
    for raw in iter(stream.readline, b""):
        sink.write(raw.decode(errors="replace"))
        sink.flush()
        tail.append(raw.decode(errors="replace").rstrip("\n"))
    stream.close()


def run_workload(command: list[str], record_dir: Path, *, interpret: bool, trace: TraceSettings,
                 timeout_s: float | None = None, cwd: str | None = None, echo=None) -> WorkloadRun:
    """Run the command to the end; raise a WorkloadError if it cannot run or fails."""
    check_command(command)
    record_dir.mkdir(parents=True, exist_ok=True)
    env = workload_env(record_dir, interpret, trace)
    cwd = cwd or os.getcwd()
    tail: deque[str] = deque(maxlen=30)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stderr=subprocess.PIPE)
    except OSError as exc:  # e.g. not executable, bad interpreter line
        raise CommandNotFoundError(f"{command[0]} ({exc.strerror})") from None
    reader = threading.Thread(target=_tee, args=(proc.stderr, echo or sys.stderr, tail), daemon=True)
    reader.start()
    try:
        returncode = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise WorkloadTimeoutError(command, timeout_s) from None
    except KeyboardInterrupt:
        proc.kill()
        proc.wait()
        raise
    reader.join(timeout=5)
    duration = time.perf_counter() - start
    if returncode != 0:
        raise WorkloadFailedError(command, returncode, "\n".join(list(tail)[-12:]))
    return WorkloadRun(command, cwd, record_dir, returncode, duration, "\n".join(tail))
