"""`python -m pytest` with no arguments is the unit tier; the README's test command (what CI runs)
passes its own -m, which decides instead, so the default never narrows CI."""

import re
import subprocess
import sys

import pytest
from conftest import REPO, UNIT_TIER

pytestmark = pytest.mark.slow  # collects the whole suite twice in subprocesses


def _collected(*args: str) -> tuple[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, [line for line in done.stdout.splitlines() if "::" in line]


def test_no_arguments_is_the_unit_tier_and_the_readmes_command_runs_everything():
    readme = (REPO / "README.md").read_text()
    command = readme.split("<!-- test-command -->", 1)[1].split("```bash\n", 1)[1].splitlines()[0]
    [marks] = re.findall(r'-m "([^"]*)"', command)  # what .ci/run executes passes its own -m
    assert marks == "not gpu"

    _, unit = _collected()
    _, everything = _collected("-m", marks)
    assert unit and not [node for node in unit if node.startswith("tests/e2e/")]
    assert set(unit) < set(everything)
    assert [node for node in everything if node.startswith("tests/e2e/")]
    assert "tests/unit/test_tiers.py::test_no_arguments_is_the_unit_tier_and_the_readmes_command_runs_everything" in (
        set(everything) - set(unit)
    )  # slow: left out of the tier, in CI's run
    assert UNIT_TIER == "not gpu and not slow"
