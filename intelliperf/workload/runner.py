"""Run the user's command in a subprocess with the launch recorder installed.

The user changes nothing in their code: a `sitecustomize` on PYTHONPATH loads the recorder
into every Python process the command starts. The command's stdout passes through; its stderr
passes through and its tail is kept for the error message when it fails.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .. import env as names
from ..errors import CommandNotFoundError, EmptyCommandError, WorkloadFailedError, WorkloadTimeoutError, not_runnable
from ..redact import without_secrets

BOOTSTRAP_DIR = Path(__file__).parents[1] / "bootstrap"  # intelliperf/bootstrap, put on PYTHONPATH
# A program stopped at its time limit: seconds for its processes to write their records after the interrupt
# (the recorder waits for the launches in flight and writes a JSON file), before they are killed.
STOP_GRACE_S = 15.0
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


@dataclass
class TraceSettings:
    """Which kernels the interpreter address trace looks at, and how much of each."""

    pattern: str | None = None  # regex of kernel names; None: no trace
    sample_programs: int = 32
    launches: int = 1
    budget_s: float = 60.0
    static_targets: tuple[str, ...] = ()  # also compile the traced kernels for these (static view)
    sass_lines: bool = False  # keep the traced kernels' SASS line tables (the ncu backend's line mapping)
    later_dir: str | None = None  # save the traced launches' inputs here, traced after the run (trace_worker)


@dataclass(frozen=True)
class PassRun:
    """The program as a profiler pass runs it (ncu, rocprofv3, region timers): its command, its folder, its
    limit, the variables it adds (the GPU it runs on, its turn), whether it stops after the launches the pass
    needs (profiling/inside/window.py), and where the pass keeps its files (None: a temporary folder)."""

    command: list[str]
    cwd: str | Path | None
    timeout_s: float | None
    env: dict[str, str] | None = None
    stop_early: bool = True
    keep: Path | None = None


@dataclass
class WorkloadRun:
    command: list[str]
    cwd: str
    record_dir: Path
    returncode: int
    duration_s: float
    stderr_tail: str
    stopped_at_s: float | None = None  # stopped at its time limit; the record is what it launched until then


def find_tool(override_env: str, name: str, home_env: str, home_default: str) -> str | None:
    """An external tool: the path in $override_env, then PATH, then $home_env/bin (home_default)."""
    for candidate in (
        os.environ.get(override_env),
        shutil.which(name),
        os.path.join(os.environ.get(home_env, home_default), "bin", name),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def check_command(command: list[str]) -> None:
    if not command or not command[0].strip():
        raise EmptyCommandError()
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not os.path.isfile(program):
            raise CommandNotFoundError(program)
        if not os.access(program, os.X_OK):
            raise not_runnable(program)
    elif shutil.which(program) is None:
        raise CommandNotFoundError(program)


def bootstrap_env(interpret: bool, base: dict | None = None, secrets: tuple[str, ...] = ()) -> dict:
    """Ours minus secrets (by name and value, and any variable named in `secrets`: the sandbox passes the
    same), with the bootstrap on PYTHONPATH; what the bootstrap then does is chosen by the variables the
    caller adds."""
    env = without_secrets(dict(base if base is not None else os.environ), deny=secrets)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOTSTRAP_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env[names.HOME] = str(PACKAGE_PARENT)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:  # --device gpu must mean compiled kernels, whatever the calling shell has set
        env.pop("TRITON_INTERPRET", None)
    return env


def workload_env(
    record_dir: Path, interpret: bool, trace: TraceSettings, base: dict | None = None, secrets: tuple[str, ...] = ()
) -> dict:
    """The program's environment with the launch recorder on: `bootstrap_env` plus the recorder's settings."""
    env = bootstrap_env(interpret, base, secrets)
    env[names.RECORD_DIR] = str(record_dir)
    if trace.pattern is not None:
        env[names.TRACE] = trace.pattern
        env[names.SAMPLE_PROGRAMS] = str(trace.sample_programs)
        env[names.TRACE_LAUNCHES] = str(trace.launches)
        env[names.TRACE_BUDGET] = str(trace.budget_s)
    if trace.pattern is not None and trace.static_targets:
        env[names.STATIC_TARGETS] = ",".join(trace.static_targets)
    if trace.pattern is not None and trace.sass_lines:
        env[names.SASS_LINES] = "1"
    if trace.pattern is not None and trace.later_dir:
        env[names.TRACE_LATER] = trace.later_dir
    return env


def uncompiled_note(modules: tuple[str, ...] = ("torch", "triton")) -> str | None:
    """A note when a module the programs import has no compiled bytecode and Python may not write it
    (a read-only install, PYTHONDONTWRITEBYTECODE): every Python process a diagnosis or an optimize
    run starts then compiles that module again, seconds each, and nothing says why it is slow."""
    import importlib.util

    stale = []
    for name in modules:
        spec = importlib.util.find_spec(name)  # finds the file without importing it
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        cached = importlib.util.cache_from_source(spec.origin)  # honours PYTHONPYCACHEPREFIX
        folder = Path(cached).parent
        while not folder.exists():  # Python makes the missing folders where it may write the nearest one
            folder = folder.parent
        writable = os.access(folder, os.W_OK)
        may_write = writable and not (sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"))
        if not os.path.exists(cached) and not may_write:
            stale.append((name, str(Path(spec.origin).parent)))
    if not stale:
        return None
    return (
        f"{', '.join(n for n, _ in stale)} has no compiled bytecode here and Python may not write it, so every "
        "Python process intelliperf starts compiles it again (seconds each). Compile it once: python -m "
        f"compileall -q {' '.join(folder for _, folder in stale)}"
    )


class Tail:
    """Collects a child's output without printing it: candidates are not the user's program."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def _tee(stream, sink, tail: deque) -> None:
    """The child's lines to `sink` and `tail`. A traceback is held until its last line and not shown
    where that is `KeyboardInterrupt`: a terminal's Ctrl-C reaches the program too, and intelliperf
    says in one line that it was interrupted (the tail keeps the traceback)."""
    held: list[str] = []
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        tail.append(line.rstrip("\n"))
        if line.startswith("Traceback (most recent call last):") or (held and line[:1].isspace()):
            held.append(line)
            continue
        if held and line.rstrip("\n") == "KeyboardInterrupt":
            held = []
            continue
        sink.write("".join(held) + line)
        sink.flush()
        held = []
    if held:
        sink.write("".join(held))
        sink.flush()
    stream.close()


@dataclass
class ProcessResult:
    returncode: int | None  # None: killed at the timeout
    duration_s: float
    tail: list[str]
    ahead: bool = False  # run in a Python started ahead of it (head_start.HeadStart)

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class Running:
    """A started process: its output is being collected; `wait` ends it. With `stdin=True` it reads
    lines from us (`send`), and ends its input when we `close` it."""

    def __init__(
        self, command: list[str], *, cwd: str, env: dict, echo=None, stdin: bool = False, pass_fds: tuple[int, ...] = ()
    ):
        self.tail: deque[str] = deque(maxlen=40)
        self.start = time.perf_counter()
        self.ahead = False  # started before its run was known, and handed it later (head_start.HeadStart)
        merge = echo is not None and echo is not sys.stderr
        try:
            self.proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stderr=subprocess.PIPE,
                stdin=subprocess.PIPE if stdin else None,
                stdout=subprocess.PIPE if merge else None,
                pass_fds=pass_fds,
            )
        except OSError as exc:  # e.g. not executable, no #! line, a #! line naming a missing interpreter
            if exc.errno in (errno.ENOEXEC, errno.EACCES):
                raise not_runnable(command[0], exc.errno) from None
            raise CommandNotFoundError(f"{command[0]} ({exc.strerror})") from None
        self.readers = [
            threading.Thread(target=_tee, args=(stream, echo or sys.stderr, self.tail), daemon=True)
            for stream in (self.proc.stderr, self.proc.stdout)
            if stream is not None
        ]
        for reader in self.readers:
            reader.start()

    def send(self, line: str) -> None:
        """One line to the process; a process that already ended simply does not get it."""
        assert self.proc.stdin is not None, "started without a stdin pipe"
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def close(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def wait(self, timeout_s: float | None, grace_s: float = 0.0) -> ProcessResult:
        """To the end, or stopped after `timeout_s` more seconds: interrupted first where `grace_s` is
        given (its exit handlers, the recorder's included, then run), killed after that."""
        try:
            returncode = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            returncode = None
            if grace_s > 0:
                interrupt(self.proc, grace_s)
            self.stop()
        except KeyboardInterrupt:
            self.stop()
            raise
        for reader in self.readers:
            reader.join(timeout=5)
        self.close()
        return ProcessResult(returncode, time.perf_counter() - self.start, list(self.tail), self.ahead)

    def stop(self) -> None:
        kill(self.proc)
        self.proc.wait()
        self.close()


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL a process and its children, the process stopped first so that it starts none meanwhile.
    bubblewrap killed just after it cloned the sandbox's first process, before that process asked to
    die with its parent, left the sandbox running: an orphan that, as its namespace's init, ignores
    SIGTERM. Killing that first process from here ends the whole sandbox."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 1
        while process_stat(proc.pid)[0] not in ("T", "t", "Z", "") and time.monotonic() < deadline:
            time.sleep(0.001)
        for child in _children(proc.pid):
            os.kill(child, signal.SIGKILL)
    except OSError:  # gone meanwhile
        pass
    try:
        proc.kill()
    except OSError:
        pass


def interrupt(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGINT to a process and every process under it, as a terminal's Ctrl-C would send them, then
    up to `grace_s` for them to end: Python raises KeyboardInterrupt and runs its exit handlers."""
    for pid in [proc.pid, *_descendants(proc.pid)]:
        try:
            os.kill(pid, signal.SIGINT)
        except OSError:  # gone meanwhile
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and (proc.poll() is None or _descendants(proc.pid)):
        time.sleep(0.05)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def process_stat(pid: int | str) -> tuple[str, int]:
    """(state, parent) of a process from /proc; ("", 0) where it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state, parent = f.read().rsplit(")", 1)[1].split()[:2]
        return state, int(parent)
    except (OSError, IndexError, ValueError):
        return "", 0


def _children(pid: int) -> list[int]:
    entries = os.listdir("/proc") if os.path.isdir("/proc") else []
    return [int(e) for e in entries if e.isdigit() and process_stat(e)[1] == pid]


def spawn(command: list[str], *, cwd: str, env: dict, timeout_s: float | None, echo=None) -> ProcessResult:
    """Run a command to the end or to its timeout, passing its stderr through and keeping the
    tail (stdout too when `echo` is a sink for both). Raises only when it cannot start."""
    return Running(command, cwd=cwd, env=env, echo=echo).wait(timeout_s)


def run_workload(
    command: list[str],
    record_dir: Path,
    *,
    interpret: bool,
    trace: TraceSettings,
    timeout_s: float | None = None,
    cwd: str | None = None,
    echo=None,
) -> WorkloadRun:
    """Run the command to the end; raise a WorkloadError if it cannot run or fails. At `timeout_s` it is
    interrupted (Ctrl-C), so that each of its processes writes what it recorded until then: the run
    returns with `stopped_at_s` set where a record was written, and raises WorkloadTimeoutError where
    none was."""
    check_command(command)
    record_dir.mkdir(parents=True, exist_ok=True)
    env = workload_env(record_dir, interpret, trace)
    cwd = cwd or os.getcwd()
    result = Running(command, cwd=cwd, env=env, echo=echo).wait(timeout_s, grace_s=STOP_GRACE_S)
    tail = "\n".join(result.tail)
    if result.returncode is None:  # stopped at its time limit
        if not any(record_dir.glob("record-*.json")):
            raise WorkloadTimeoutError(command, timeout_s or 0.0)
        return WorkloadRun(command, cwd, record_dir, 0, result.duration_s, tail, stopped_at_s=timeout_s)
    if result.returncode != 0:
        raise WorkloadFailedError(command, result.returncode, "\n".join(result.tail[-12:]))
    return WorkloadRun(command, cwd, record_dir, result.returncode, result.duration_s, tail)
