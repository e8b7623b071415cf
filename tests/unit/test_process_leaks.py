"""The suite's own guard (tests/conftest.py): a test that leaves any process running fails, and the
process is killed; one that waits for its processes passes. Run as a pytest session of its own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

LEAKY = """
import subprocess, sys

def test_leaves_a_sleeper():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)

def test_waits_for_its_child():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


@pytest.mark.slow
def test_a_test_that_leaves_a_process_running_fails_and_the_process_is_killed(tmp_path):
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "conftest",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_leaky.py"),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO / "tests")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    # both tests pass their own asserts; the leaky one errors at teardown, the other does not
    assert "2 passed, 1 error" in done.stdout and "ERROR test_leaky.py::test_leaves_a_sleeper" in done.stdout, (
        done.stdout[-2000:]
    )
    assert "the test left 1 process(es) running" in done.stdout and "time.sleep(120)" in done.stdout
    sleepers = subprocess.run(["pgrep", "-f", "time.sleep\\(120\\)"], capture_output=True, text=True)
    assert sleepers.stdout.strip() == ""  # killed, not left to run out its two minutes
