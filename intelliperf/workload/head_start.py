"""A Python started ahead of its run, so that a candidate's validation is not mostly start-up.

Starting Python with torch and Triton takes seconds (2.9-3.0 s with a CUDA context on the H100
here), and each candidate's validation starts several: its program's, its replay worker's, a
compute-sanitizer worker's per check, two timing workers'. A `HeadStart` is started in the sandbox its run will have
(the same binds, $HOME, seeds, wrapper and environment, less the run's own INTELLIPERF_*
variables) before the candidate exists: while the reference is captured, or once the previous
candidate's verdict is in. Its folders are made empty then and filled later. When the run
comes it is handed over (intelliperf/bootstrap/intelliperf_head_start.py becomes the run); where the run does
not fit the head start (`fits`), it starts in a fresh Python as before.

Which runs: the program where it allows it, that is `python script.py ARGS` (no interpreter
options) whose script's statements before it imports torch or Triton are a docstring and imports
of the standard library or numpy: nothing it does first could change how torch starts (an
environment variable set, a path added, a local module's side effects); and intelliperf's own
workers (`python -m intelliperf.…`), which import torch first. No CUDA context is made ahead (it
would hold GPU memory beside the program whose room the memory rule counts).
"""

from __future__ import annotations

import ast
import json
import os
import re
import select
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..env import HEAD_START_READY as READY
from .runner import BOOTSTRAP_DIR, ProcessResult, Running, Tail
from .sandbox import Sandbox

STARTER = BOOTSTRAP_DIR / "intelliperf_head_start.py"
FAILED = 87  # the child's status when the run never started (intelliperf_head_start.FAILED)
REFUSED = "could not take its run"  # and what it printed then
PYTHON = re.compile(r"python(\d+(\.\d+)*)?")
STARTED_WITH = ("torch", "triton")  # what the head start imports
HARMLESS = ("numpy",)  # imported by torch anyway; nothing in it depends on what the program did first
OURS = "INTELLIPERF_"  # the run's own variables, read by the bootstrap only once the run comes


def is_python(program: str) -> bool:
    """Whether a command's first word names a Python interpreter (python, python3, python3.12, a path to one)."""
    return PYTHON.fullmatch(Path(program).name) is not None


def script_of(command: list[str], cwd: Path) -> Path | None:
    """The script of a `python script.py ARGS` command, where its start could have been made ahead."""
    if len(command) < 2 or not is_python(command[0]) or command[1].startswith("-"):
        return None
    script = Path(cwd) / command[1]
    if script.suffix != ".py" or not script.is_file():
        return None
    return script if torch_comes_first(script.read_text(errors="replace")) else None


def torch_comes_first(source: str) -> bool:
    """Whether a script imports torch or Triton before it does anything but import the standard library."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return False
    for i, stmt in enumerate(body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        roots = _imported(stmt)
        if roots is None or not all(r in sys.stdlib_module_names or r in (*HARMLESS, *STARTED_WITH) for r in roots):
            return False  # (`import helpers, torch` imports helpers first)
        if roots & set(STARTED_WITH):
            return True
    return False


def _imported(stmt: ast.stmt) -> set[str] | None:
    """The top-level modules an import statement imports; None for any other statement or a relative import."""
    if isinstance(stmt, ast.Import):
        return {alias.name.split(".")[0] for alias in stmt.names}
    if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
        return {stmt.module.split(".")[0]}
    return None


@dataclass
class HeadStart:
    """A started Python waiting for its run: a program's (`confined` calls `go`) or a worker's (`take`);
    stopped where its run does not fit it, or nothing takes it."""

    running: Running
    box: Sandbox
    python: str
    env: dict  # the confined environment it started with
    writable: tuple[Path, ...]
    readable: tuple[Path, ...]
    go_file: Path  # where the run's description is written (a folder the started Python can read)
    wrap: tuple[str, ...] = ()  # a tool the Python runs under (compute-sanitizer)
    ready: int = -1  # the read end of the pipe it writes to once started (`started`); -1 once seen or closed

    @classmethod
    def start(
        cls,
        box: Sandbox,
        python: str,
        *,
        env: dict,
        writable: tuple[Path, ...],
        readable: tuple[Path, ...] = (),
        go_file: Path,
        wrap: tuple[str, ...] = (),
        pass_fds: tuple[int, ...] = (),
    ) -> HeadStart:
        """`env` is the confined environment (`confined_env`); the `writable` and `readable` folders are
        made now (empty where new); `pass_fds` are inherited (a timing worker's pipes)."""
        for folder in (*writable, *readable):
            folder.mkdir(parents=True, exist_ok=True)
        command = box.wrap([*wrap, python, str(STARTER)], cwd=writable[0], writable=writable, readable=readable)
        ready, told = os.pipe()
        env = env | {READY: str(told)}
        try:
            running = Running(
                command, cwd=str(writable[0]), env=env, echo=Tail(), stdin=True, pass_fds=(*pass_fds, told)
            )
        except BaseException:
            os.close(ready)
            raise
        finally:
            os.close(told)
        return cls(running, box, python, env, writable, readable, go_file, wrap, ready)

    def started(self) -> bool:
        """Whether its start-up is over (torch and Triton imported, a CUDA context made where asked), or it ended."""
        if self.ready < 0:
            return True
        if not select.select([self.ready], [], [], 0)[0]:
            return False
        self._close_ready()
        return True

    def _close_ready(self) -> None:
        if self.ready >= 0:
            os.close(self.ready)
            self.ready = -1

    def fits(
        self, box: Sandbox, command: list[str], cwd: Path, env: dict, writable: tuple[Path, ...], readable
    ) -> str | None:
        """Why this run cannot be handed to it (None: it can): another sandbox, binds, wrapper or interpreter,
        an environment that differs in more than the run's INTELLIPERF_* variables, a program that does
        something before it imports torch, or the started Python no longer there."""
        if box != self.box or _paths(writable) != _paths(self.writable) or _paths(readable) != _paths(self.readable):
            return "its sandbox differs"
        head = [*self.wrap, self.python]
        if command[: len(head)] != head or not Path(cwd).is_dir():
            return "another interpreter or wrapper"
        rest = command[len(head) - 1 :]
        ours = len(rest) > 2 and rest[1] == "-m" and rest[2].startswith("intelliperf.")
        if not ours and script_of(rest, cwd) is None:
            return "the program is not `python script.py` importing torch first"
        if _theirs(env) != _theirs(self.env):
            return "its environment differs"
        if self.running.proc.poll() is not None:
            return "the started Python had ended"
        return None

    def hand_over(self, command: list[str], cwd: Path, env: dict) -> Running:
        """The run given to the started Python (`fits` said it can take it); its stdin stays open for a worker."""
        self._close_ready()  # (its run is handed over: nothing waits for its start-up any more)
        argv = command[len(self.wrap) :]
        self.go_file.write_text(json.dumps({"argv": argv, "cwd": str(cwd), "env": env, "given": self.env}))
        self.running.start, self.running.ahead = time.perf_counter(), True
        self.running.send(str(self.go_file))
        return self.running

    def take(
        self, box: Sandbox, command: list[str], cwd: Path, env: dict, writable: tuple[Path, ...], readable
    ) -> Running | None:
        """The run handed over where it `fits`; else None, and this Python stopped (the caller starts the run
        afresh)."""
        if self.fits(box, command, cwd, env, writable, readable) is None:
            return self.hand_over(command, cwd, env)
        self.stop()
        return None

    def go(
        self, box: Sandbox, command: list[str], cwd: Path, env: dict, writable: tuple[Path, ...], readable, timeout_s
    ) -> ProcessResult | None:
        """A program's run (`take`), to its end or its timeout; None where it did not fit or the started Python
        could not take it (run it afresh)."""
        running = self.take(box, command, cwd, env, writable, readable)
        if running is None:
            return None
        running.close()
        result = running.wait(timeout_s)
        refused = result.returncode == FAILED and any(REFUSED in line for line in running.tail)
        return None if refused else result

    def stop(self) -> None:
        self.running.stop()
        self._close_ready()


def _paths(paths) -> set[str]:
    return {str(Path(p).resolve()) for p in paths}


def _theirs(env: dict) -> dict:
    """The variables torch and Triton may read as they start: all but the run's own."""
    return {k: v for k, v in env.items() if not k.startswith(OURS)}
