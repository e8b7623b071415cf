"""Shared helpers: real programs, real subprocesses, the Triton interpreter on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from intelliperf.workload.runner import process_stat

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "atomic_contention"
PROGRAMS = Path(__file__).parent / "programs"
# Triton 3.9 warns on every compile while this is unset; the tests compile for GPU targets.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

SMALL = ["--n", "65536", "--repeat", "1"]  # keeps interpreter runs to a second or two


def py(script: Path, *args: str) -> list[str]:
    return [sys.executable, str(script), *args]


def doc_block(page: str, marker: str) -> str:
    """The fenced Python block that follows `<!-- marker -->` in a documentation page (relative to
    the repository): the docs' examples are the code the tests run."""
    text = (REPO / page).read_text()
    return text[text.index(f"<!-- {marker} -->") :].split("```python\n", 1)[1].split("```", 1)[0]


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600):
    """`intelliperf ARGS` in a real subprocess, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "intelliperf", *args],
        cwd=cwd or REPO,
        env=env or os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def sum_report():
    import intelliperf

    return intelliperf.diagnose(py(EXAMPLES / "contended_sum.py", *SMALL), formula="atomicContention", device="cpu")


@pytest.fixture(scope="session")
def multi_report():
    import intelliperf

    return intelliperf.diagnose(py(PROGRAMS / "multi_kernel.py"), device="cpu")


UNIT_TIER = "not gpu and not slow"
# Session fixtures that diagnose a real program: a test that asks for one runs that program.
RUNS_A_PROGRAM = {"sum_report", "multi_report"}


def pytest_configure(config):
    """`python -m pytest` with no paths and no -m runs the unit tier; name paths or pass -m (CI passes
    -m "not gpu") and that decides instead."""
    if not config.option.markexpr and config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.option.markexpr = UNIT_TIER


def pytest_report_header(config):
    if config.option.markexpr == UNIT_TIER:
        return f'unit tier: -m "{UNIT_TIER}" (the whole suite: python -m pytest -m "not gpu" -n auto --dist loadfile)'
    return None


def pytest_collection_modifyitems(items):
    """Every scenario under tests/e2e is slow, and so is a test that runs a program through a session
    fixture: the unit tier (-m "not gpu and not slow") leaves them out."""
    for item in items:
        if "e2e" in item.path.parts or RUNS_A_PROGRAM & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_interpreter_leak(monkeypatch):
    # Each test decides the mode itself; a TRITON_INTERPRET from the shell must not decide it.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)


def _adopt_orphans() -> None:
    """Make this process the child subreaper of everything it starts: a process whose parent exits
    is adopted here instead of by init, so a leaked sandbox stays one of this session's."""
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_adopt_orphans()


def running_descendants(command: str | None = None) -> set[int]:
    """Live processes this test session started, orphans included (this process is their subreaper),
    optionally only those whose command name is `command`: what a run leaves behind if it leaks."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if command is not None:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() != command:
                        continue
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            pid = int(entry)
            state, parent = process_stat(pid)
            if state == "Z":  # exited; only its parent (or an init that reaps) can remove the entry
                continue
            while parent not in (0, 1, os.getpid()):
                parent = process_stat(parent)[1]
            if parent == os.getpid():
                found.add(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def running_sandboxes() -> set[int]:
    """Running bubblewrap processes this test session started."""
    return running_descendants("bwrap")


@pytest.fixture(autouse=True)
def _no_process_left_behind():
    """A test that leaves a process running (a sandbox, a worker, a program) fails, and the process is
    killed: a user's run must not leave one either."""
    import signal
    import time

    before = running_descendants()
    yield
    deadline = time.monotonic() + 10  # a process being torn down as the test returns gets its time
    while (left := running_descendants() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    described = [_described(pid) for pid in sorted(left)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"the test left {len(left)} process(es) running: {described}"


def _described(pid: int) -> str:
    try:
        state, parent = process_stat(pid)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
        return f"{pid} (state {state}, parent {parent}): ... {b' '.join(words[-4:]).decode(errors='replace')[:200]}"
    except OSError:
        return str(pid)
