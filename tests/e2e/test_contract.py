"""Nothing a candidate runs vouches for itself: what the parent reads and checks from outside the
candidate's processes. The files a sandboxed process wrote are read where they are (a link is
refused, not followed); the timed calls' outputs are checked call by call against the reference's;
the workers that import candidate code carry none of intelliperf's variables.

The timing itself needs a GPU (tests/gpu/test_gpu_validators.py times real lies); here the parent's
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
from intelliperf.validators.runs.performance import unchecked
from intelliperf.validators.workers.timing_worker import TimingError, checksums

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
    return checksums(tuple(values), {}).tolist()


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
        checksums(torch.ones(4).as_subclass(Deferred), {})


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


SCALED = """import os

import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    torch.manual_seed(0)
    total = 0.0
    for _ in range(3):
        x = torch.randn(3000, device=device)
        out = torch.empty_like(x)
        scale[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
        total += float(out.sum())
    print(total)
"""


def test_a_module_level_launch_turned_into_a_block_is_validated_end_to_end(tmp_path):
    """The honest fix for a launch at module level that needs a computed block: the statement becomes a
    block of statements (spliced by the loop's own path, held to the policy), validated like any other;
    the same block with a wrong grid is rejected."""
    from intelliperf.optimization.apply import apply_candidate
    from intelliperf.rewriters import Candidate
    from intelliperf.rewriters.source import code_unit, launch_unit

    project = tmp_path / "project"
    project.mkdir()
    (project / "prog.py").write_text(SCALED)
    command = [sys.executable, "prog.py"]
    ref = capture_reference(Program(project, command), "scale", interpret=True, work_dir=tmp_path / "ref")
    line = SCALED.splitlines().index("        scale[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)") + 1
    kernel, statement = (
        code_unit(project / "prog.py", "scale", project),
        launch_unit(project / "prog.py", "scale", line, project),
    )
    block = (
        "block = min(triton.next_power_of_2(x.numel()), 1024)\n"
        "scale[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)\n"
    )
    for grid, correct in (("triton.cdiv(x.numel(), block)", True), ("x.numel() // block", False)):
        cand = Candidate(rewriter="replay", title="t", launcher=block.replace("triton.cdiv(x.numel(), block)", grid))
        text = apply_candidate({"prog.py": SCALED}, kernel, statement, cand)["prog.py"]
        copy = copy_project(project, {"prog.py": text}, tmp_path / f"copy-{correct}")
        verdict = validate(ref, Program(copy, command), work_dir=tmp_path / f"v-{correct}")
        assert verdict.correct is correct, verdict.reasons()
