"""Shared helpers: real programs, real subprocesses, the Triton interpreter on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.fixture(autouse=True)
def _no_interpreter_leak(monkeypatch):
    # Each test decides the mode itself; a TRITON_INTERPRET from the shell must not decide it.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
