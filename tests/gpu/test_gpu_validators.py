"""GPU truth for the validators (marker `gpu`; run on the device machine with `pytest -m gpu`)."""

import re
import sys

import pytest
from conftest import EXAMPLES, PROGRAMS

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from intelliperf.validators import (  # noqa: E402
    CandidateLayout,
    Program,
    ValidationSettings,
    capture_reference,
    compare_buffer,
    copy_project,
    start_head_starts,
    validate,
)
from intelliperf.validators.compare import Reordering, Tolerances  # noqa: E402

AXPY = PROGRAMS / "validation"
AXPY_COMMAND = [sys.executable, "axpy.py", str(1 << 22)]
SUM_COMMAND = [sys.executable, "contended_sum.py", "--repeat", "3"]
ATOMIC = "tl.atomic_add(out_ptr + zeros, x, mask=mask)  # every lane hits out[0]"


def _copy(root, script, tmp_path, edits):
    text = (root / script).read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return copy_project(root, {script: text}, tmp_path / "copy")


@pytest.fixture(scope="module")
def axpy_reference(tmp_path_factory):
    return capture_reference(
        Program(AXPY, AXPY_COMMAND), "axpy_kernel", interpret=False, work_dir=tmp_path_factory.mktemp("ref")
    )


def test_side_stream_candidate_is_rejected(axpy_reference, tmp_path):
    launch = "    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)"
    side = (
        "    with torch.cuda.stream(torch.cuda.Stream()):  # returns before the work is done\n"
        "        axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)"
    )
    verdict = validate(
        axpy_reference,
        Program(_copy(AXPY, "axpy.py", tmp_path, [(launch, side)]), AXPY_COMMAND),
        work_dir=tmp_path / "v",
    )
    print("side stream:", verdict.reasons())
    assert not verdict.accepted and "side-stream" in [p.kind for p in verdict.problems]


AXPY_LAUNCHER = """def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float, block: int = 128) -> torch.Tensor:
    out = torch.empty_like(x)
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    return out
"""
# Timing lies that wait until the program's run and the replays are over (their calls are few), so only
# the timing can see them: each must be caught by the checksums of the timed calls or the parent's clock.
TIMING_LIES = {
    "answers repeated calls from a memo on the input's address": """_MEMO = {}
_CALLS = [0]


def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float, block: int = 128) -> torch.Tensor:
    _CALLS[0] += 1
    key = (x.data_ptr(), y.data_ptr())
    if _CALLS[0] > 30 and key in _MEMO:
        return _MEMO[key]
    out = torch.empty_like(x)
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    _MEMO[key] = out
    return out
""",
    "leaves the work on a side stream it never joins": """_SIDE = []
_CALLS = [0]


def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float, block: int = 128) -> torch.Tensor:
    _CALLS[0] += 1
    out = torch.empty_like(x)
    if _CALLS[0] <= 30:
        axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
        return out
    if not _SIDE:
        _SIDE.append(torch.cuda.Stream())
    with torch.cuda.stream(_SIDE[0]):
        axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    return out
""",
}


@pytest.mark.parametrize("lie", sorted(TIMING_LIES))
def test_a_timing_lie_is_caught_by_what_the_parent_checks(axpy_reference, tmp_path, lie):
    copy = _copy(AXPY, "axpy.py", tmp_path, [(AXPY_LAUNCHER, TIMING_LIES[lie])])
    verdict = validate(axpy_reference, Program(copy, AXPY_COMMAND), work_dir=tmp_path / "v")
    print(lie, verdict.speedup, verdict.reasons())
    assert not verdict.accepted
    assert "implausible-speed" in [p.kind for p in verdict.problems], verdict.reasons()


def test_identical_candidate_is_correct_and_not_faster(axpy_reference, tmp_path):
    copy = _copy(AXPY, "axpy.py", tmp_path, [])
    verdict = validate(axpy_reference, Program(copy, AXPY_COMMAND), work_dir=tmp_path / "v")
    print("identical:", verdict.speedup, verdict.seconds)
    assert verdict.correct and verdict.faster is False and not verdict.accepted
    assert any(c.startswith("compute-sanitizer") and c.endswith("clean") for c in verdict.checks)
    # 2^22 elements in blocks of 128: 32,768 CTAs; racecheck ran the first one per SM of them
    first = [n for n in verdict.notes if re.match(r"racecheck ran axpy_kernel on its first \d+ of 32,768 CTAs", n)]
    assert first and int(first[0].split()[6]) == torch.cuda.get_device_properties(0).multi_processor_count


@pytest.mark.parametrize("ahead", [False, True])
def test_a_write_past_the_end_that_no_output_shows_is_rejected_by_compute_sanitizer(tmp_path, ahead):
    """1000 floats: the store's 8 extra lanes land in the allocator's padding, so no output, in the
    program or in a replay, changes; only memcheck (each tensor its own allocation) sees them. Also with
    the program and the sanitizer workers in Pythons started before the candidate existed (start_head_starts)."""
    command = [sys.executable, "axpy.py", "1000"]
    ref = capture_reference(Program(AXPY, command), "axpy_kernel", interpret=False, work_dir=tmp_path / "ref")
    store = "tl.store(out_ptr + offs, alpha * x + y, mask=mask)"
    past = "tl.store(out_ptr + offs, alpha * x + y, mask=offs < n + 8)"
    work = tmp_path / "v"
    started = _ahead(ref, command, tmp_path / "copy", work) if ahead else None
    copy = _copy(AXPY, "axpy.py", tmp_path, [(store, past)])
    verdict = validate(ref, Program(copy, command), work_dir=work, ahead=started)
    print("write past the end:", verdict.reasons(), verdict.seconds, verdict.notes)
    assert not verdict.accepted and [p.kind for p in verdict.problems] == ["sanitizer"]
    assert "memcheck" in verdict.problems[0].message
    if ahead:
        assert any("its program, replay worker, memcheck, racecheck" in n for n in verdict.notes), verdict.notes


RACY_STORE = """    junk = tl.inline_asm_elementwise(
        "{ .shared .align 4 .b32 slot; st.shared.b32 [slot], $1; ld.shared.b32 $0, [slot]; }",
        "=r,r", [offs], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(out_ptr + offs, alpha * x + y + (junk * 0).to(tl.float32), mask=mask)"""


@pytest.mark.parametrize("ctas", [None, 0])
def test_a_shared_memory_race_that_no_output_shows_is_rejected_by_racecheck(tmp_path, ctas):
    """Inline assembly in which every thread of a CTA writes one shared word and reads it back with no
    barrier: every output is right, only racecheck sees the race. A kernel with inline assembly runs on
    every CTA under racecheck, whatever `racecheck_ctas` says (its race may be in any CTA)."""
    command = [sys.executable, "axpy.py", "100000"]  # 782 CTAs
    ref = capture_reference(Program(AXPY, command), "axpy_kernel", interpret=False, work_dir=tmp_path / "ref")
    copy = _copy(AXPY, "axpy.py", tmp_path, [("    tl.store(out_ptr + offs, alpha * x + y, mask=mask)", RACY_STORE)])
    settings = ValidationSettings(racecheck_ctas=ctas)
    verdict = validate(ref, Program(copy, command), work_dir=tmp_path / "v", settings=settings)
    print("shared-memory race:", verdict.reasons(), verdict.seconds, verdict.notes)
    assert not verdict.accepted and [p.kind for p in verdict.problems] == ["sanitizer"]
    assert "racecheck" in verdict.problems[0].message and "hazard" in verdict.problems[0].message.lower()
    said = [n for n in verdict.notes if n.startswith("racecheck ran ")]  # capping on: what it kept whole, and why
    assert said == (["racecheck ran axpy_kernel on every CTA (inline assembly)"] if ctas is None else [])


@pytest.mark.parametrize("ahead", [False, True])
def test_contended_sum_fix_is_accepted_and_faster(tmp_path, ahead):
    ref = capture_reference(
        Program(EXAMPLES, SUM_COMMAND), "contended_sum_kernel", interpret=False, work_dir=tmp_path / "ref"
    )
    started = _ahead(ref, SUM_COMMAND, tmp_path / "copy", tmp_path / "v") if ahead else None
    fix = _copy(EXAMPLES, "contended_sum.py", tmp_path, [(ATOMIC, "tl.atomic_add(out_ptr, tl.sum(x, 0))")])
    verdict = validate(ref, Program(fix, SUM_COMMAND), work_dir=tmp_path / "v", ahead=started)
    print("contended sum fix:", verdict.speedup, verdict.seconds, verdict.checks, verdict.notes)
    assert verdict.accepted, verdict.reasons()
    assert verdict.speedup.low > 10
    if ahead:  # every Python it started, the timing workers' too
        timing = "reference's timing worker, candidate's timing worker"
        assert any(f"its program, replay worker, memcheck, racecheck, {timing}" in n for n in verdict.notes)


def _ahead(ref, command, copy, work):
    """The Pythons `start_head_starts` starts for a candidate whose copy will be `copy`, validated in `work`."""
    started = start_head_starts(
        ref.sandbox,
        command[0],
        CandidateLayout(copy, work, ref.inputs, ref.program.root),
        interpret=False,
        settings=ValidationSettings(),
        env={},
    )
    assert set(started.workers) == {"replay", "memcheck", "racecheck"}
    assert set(started.timing) == {"reference", "candidate"}
    return started


def test_reordered_atomic_sum_of_16m_floats_passes_and_a_dropped_block_fails():
    import triton
    import triton.language as tl

    @triton.jit
    def per_lane(x_ptr, out_ptr, n, skip, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = (offs < n) & (pid != skip)
        tl.atomic_add(out_ptr + tl.zeros([BLOCK], tl.int32), tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)

    @triton.jit
    def pre_reduced(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), 0))

    n, block = 1 << 24, 1024
    x = torch.randn(n, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    outs = [torch.zeros(1, device="cuda") for _ in range(3)]
    grid = (triton.cdiv(n, block),)
    pre_reduced[grid](x, outs[0], n, BLOCK=block)
    per_lane[grid](x, outs[1], n, -1, BLOCK=block)
    sums = x.view(-1, block).sum(1).abs()
    typical = int(sums.argsort()[sums.numel() // 2])  # a block whose sum has the median size
    per_lane[grid](x, outs[2], n, typical, BLOCK=block)  # drops that block
    ref, reordered, dropped = (o.cpu() for o in outs)
    print("16M sums:", float(ref), float(reordered), float(dropped), float(x.double().sum()))
    tol = Tolerances()
    assert compare_buffer(ref, reordered, name="out", dispatch=0, tol=tol, terms=Reordering(atomic=n)) == []
    assert compare_buffer(ref, dropped, name="out", dispatch=0, tol=tol, terms=Reordering(atomic=n)) != []


def test_a_sandboxed_process_uses_the_gpu_and_sees_nothing_else(tmp_path):
    import os
    import subprocess

    from intelliperf.workload import sandbox

    box = sandbox.make(enabled=True, hide=(tmp_path,))
    probe = (
        "import os, torch; x = torch.ones(1 << 20, device='cuda'); "
        "print(float(x.sum()), len([p for p in os.listdir('/proc') if p.isdigit()]))"
    )
    done = subprocess.run(
        box.wrap([sys.executable, "-c", probe], cwd=tmp_path, writable=(tmp_path,)),
        env=box.env(dict(os.environ)) | {"HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    print("sandboxed GPU probe:", done.stdout.strip(), done.stderr[-500:])
    total, processes = done.stdout.split()
    assert float(total) == 1 << 20 and int(processes) <= 3


def test_a_program_that_fills_the_gpu_is_validated_with_nothing_beside_its_run(tmp_path):
    """The program holds 88 % of the device: the capture records that peak, so the workers stay away from
    the candidate's run (no trial and no CUDA context before it ends: five would need about 5 GiB more)
    and the candidate is still replayed, sanitized and timed after it."""
    import json

    seed = "    torch.manual_seed(0)\n"
    fill = "    held = torch.empty(int(0.88 * torch.cuda.mem_get_info()[1]), dtype=torch.uint8, device=device)\n" + seed
    project = _copy(AXPY, "axpy.py", tmp_path, [(seed, fill)])
    ref = capture_reference(Program(project, AXPY_COMMAND), "axpy_kernel", interpret=False, work_dir=tmp_path / "ref")
    memory = ref.manifest["gpu_memory"]
    print("recorded GPU memory:", memory)
    assert memory["peak_reserved"] >= 0.88 * memory["total"]
    candidate = copy_project(project, {}, tmp_path / "candidate")
    verdict = validate(ref, Program(candidate, AXPY_COMMAND), work_dir=tmp_path / "v")
    print("filled GPU:", verdict.reasons(), verdict.seconds)
    assert verdict.correct and verdict.speedup is not None, verdict.reasons()
    assert any(c.startswith("compute-sanitizer") and c.endswith("clean") for c in verdict.checks)
    assert "early" not in json.loads((tmp_path / "v" / "replay" / "replay.json").read_text())["phases"]
