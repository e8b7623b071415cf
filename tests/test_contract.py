"""Nothing a candidate runs vouches for itself: what the parent reads and checks from outside the
candidate's processes. The files a sandboxed process wrote are read where they are (a link is
refused, not followed); the timed calls' outputs are checked call by call against the reference's;
the workers that import candidate code carry none of intelliperf's variables.

The timing itself needs a GPU (tests/test_gpu_validators.py times real lies); here the parent's
judgement of what the timing workers answer, and the worker's own checks, run on CPU tensors.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch
from conftest import PROGRAMS

from intelliperf.files import NotRegularFile, read_regular
from intelliperf.validators import Program, capture_reference, copy_project, validate
from intelliperf.validators.correctness import load_capture, load_tensors
from intelliperf.validators.performance import TimingError, _checksums, unchecked

AXPY = PROGRAMS / "validation"
COMMAND = [sys.executable, "axpy.py", "4096"]


def test_a_link_is_refused_where_a_written_file_was_expected(tmp_path):
    truth = tmp_path / "truth.pt"
    torch.save({"out": torch.ones(4)}, truth)
    out = tmp_path / "out"
    out.mkdir()
    (out / "trial.pt").symlink_to(truth)  # the candidate's output points at the reference's ground truth
    with pytest.raises(NotRegularFile, match="symbolic link"):
        load_tensors(out / "trial.pt")
    os.mkfifo(out / "fifo.pt")  # a reader that would block forever
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(out / "fifo.pt")
    torch.save({"out": torch.zeros(4)}, out / "own.pt")
    assert torch.equal(load_tensors(out / "own.pt")["out"], torch.zeros(4))  # a regular file is read


def test_a_linked_capture_manifest_is_refused(tmp_path):
    elsewhere = tmp_path / "capture-1.json"
    elsewhere.write_text('{"pid": 1, "dispatches": 1}')
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "capture-1.json").symlink_to(elsewhere)
    with pytest.raises(NotRegularFile):
        load_capture(folder)


def _sums(values):
    """One timed call's checksums as the worker answers them."""
    return _checksums(tuple(values), {}).tolist()


def _timing(ref_outputs, cand_outputs):
    return {"reference_sums": [_sums(v) for v in ref_outputs], "candidate_sums": [_sums(v) for v in cand_outputs]}


def test_timed_calls_that_did_not_compute_their_inputs_outputs_are_caught():
    g = torch.Generator().manual_seed(0)
    calls = [(torch.randn(4096, generator=g), torch.rand(64, generator=g)) for _ in range(40)]
    honest = [(a * (1 + 1e-6), b.half().float()) for a, b in calls]  # reordering and rounding
    assert unchecked(_timing(calls, honest)) is None
    memo = calls[:5] + [calls[4]] * 35  # answers every later call with the fifth call's result
    problem = unchecked(_timing(calls, memo))
    assert problem is not None and problem.kind == "implausible-speed" and "35 of 40" in problem.message
    # One small output wrong beside a large right one: judged per tensor, not diluted by the large one
    stale_small = [(a, calls[0][1]) for a, _ in calls]
    assert unchecked(_timing(calls, stale_small)) is not None
    one_off = [calls[i] if i != 7 else calls[8] for i in range(40)]  # one call in 40: noise allowance
    assert unchecked(_timing(calls, one_off)) is None


def test_a_tensor_subclass_that_could_defer_its_work_is_refused_by_the_timing_worker():
    class Deferred(torch.Tensor):
        pass

    with pytest.raises(TimingError, match="Deferred"):
        _checksums(torch.ones(4).as_subclass(Deferred), {})


def test_a_candidate_right_only_where_it_sees_our_variables_is_rejected(tmp_path):
    """The program's run carries the capture's variables; the workers that replay the candidate carry
    none of intelliperf's, so a candidate that behaves only when it sees them is wrong there."""
    ref = capture_reference(Program(AXPY, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path / "ref")
    text = (AXPY / "axpy.py").read_text()
    launch = "    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)\n"
    detecting = launch + (
        "    if not any(k.startswith('INTELLIPERF') for k in os.environ):\n"
        "        out.mul_(2)  # wrong when unobserved\n"
    )
    assert launch in text
    copy = copy_project(AXPY, {"axpy.py": text.replace(launch, detecting)}, tmp_path / "copy")
    verdict = validate(ref, Program(copy, COMMAND), work_dir=tmp_path / "v")
    assert not verdict.correct
    assert "mismatch" in [p.kind for p in verdict.problems], verdict.reasons()
