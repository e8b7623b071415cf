"""The reference's replay on what a GPU does differently from the CPU.

Integer outputs a launcher allocates empty and its kernel leaves partly unwritten on some trials (counts that
end before the output does): the reference's fresh integers start as a sentinel, as its floats start as NaN, so
that memory compares as unwritten on both sides instead of as whatever each process's allocator held (on a GPU
two processes differ there, and every candidate, an unchanged one too, was a mismatch).

A trial whose inputs make the reference fault on the device (a lost CUDA context fails every later call) is
skipped by a fresh worker, and the trials after it still run.

Real programs (tests/programs/windows/expand_tokens.py, faulting_scale.py) and real candidates through
`validate` in the Triton interpreter; the fill itself in a fresh process, as the replay workers patch it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import PROGRAMS

from intelliperf.validators import Program, capture_reference, copy_project, validate

WINDOWS = PROGRAMS / "windows"
COMMAND = [sys.executable, "expand_tokens.py"]
LAUNCH = "    expand_tokens_kernel[(ids.shape[0],)](out, ids, cu, MAX_TOKENS=16)\n"


def test_fresh_integers_start_as_the_sentinel_in_the_reference_and_never_in_a_candidate():
    probe = (
        "import torch\n"
        "from intelliperf.validators.workers.fresh_memory import poison_empty, fresh_as\n"
        "poison_empty(candidate={candidate})\n"
        "print(sorted({{int(v) for v in torch.empty(4096, dtype=torch.int64)}} & {{-0x5A5A5A5A}}),"
        " sorted({{int(v) for v in torch.empty(64, dtype=torch.int16)}} & {{-0x5A5A}}),"
        " bool(torch.empty(64, dtype=torch.uint8).numel()))\n"
    )

    def run(candidate: bool) -> str:
        done = subprocess.run([sys.executable, "-c", probe.format(candidate=candidate)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run(False) == "[-1515870810] [-23130] True"
    assert run(True) == "[] [] True"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return capture_reference(
        Program(WINDOWS, COMMAND), "expand_tokens_kernel", interpret=True, work_dir=tmp_path_factory.mktemp("ref")
    )


def _candidate(tmp_path, launch: str) -> Program:
    text = (WINDOWS / "expand_tokens.py").read_text()
    assert LAUNCH in text
    return Program(copy_project(WINDOWS, {"expand_tokens.py": text.replace(LAUNCH, launch)}, tmp_path), COMMAND)


@pytest.mark.slow
def test_an_unchanged_kernel_launched_with_other_warps_is_accepted(reference, tmp_path):
    launch = "    expand_tokens_kernel[(ids.shape[0],)](out, ids, cu, MAX_TOKENS=16, num_warps=2)\n"
    verdict = validate(reference, _candidate(tmp_path / "c", launch), work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()
    assert any(r.get("unwritten") for r in reference.replay["runs"]), "no trial left integers unwritten"


@pytest.mark.slow
def test_a_kernel_that_drops_the_last_request_is_refused(reference, tmp_path):
    launch = "    expand_tokens_kernel[(ids.shape[0] - 1,)](out, ids, cu, MAX_TOKENS=16)\n"
    verdict = validate(reference, _candidate(tmp_path / "c", launch), work_dir=tmp_path / "v")
    assert not verdict.correct, "accepted"


@pytest.mark.slow
def test_a_trial_that_makes_the_reference_fault_is_skipped_and_the_later_trials_still_run(tmp_path):
    """On a GPU an illegal address loses the process's context: every later call fails. The reference's replay
    worker says which trial faulted and ends; a fresh one goes on without that trial, so the trials after it
    still check a candidate (before, the whole replay was lost and every candidate `unverified`)."""
    command = [sys.executable, "faulting_scale.py"]
    reference = capture_reference(
        Program(WINDOWS, command), "faulting_scale_kernel", interpret=True, work_dir=tmp_path / "ref"
    )
    notes = " ".join(reference.notes)
    assert "made the reference fault on the device" in notes, notes
    regimes = [r.get("regime") for r in reference.replay["runs"] if r["mode"] == "launcher"]
    assert "nonfinite" not in regimes and "sparse" in regimes, str(regimes) + notes
    text = (WINDOWS / "faulting_scale.py").read_text()
    launch = "BLOCK=256)\n"
    candidate = copy_project(
        WINDOWS, {"faulting_scale.py": text.replace(launch, "BLOCK=256, num_warps=2)\n")}, tmp_path / "c"
    )
    verdict = validate(reference, Program(candidate, command), work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()
