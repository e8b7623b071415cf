"""Values and arguments the program never passes, which a wrong kernel can be wrong on alone, each met by a trial,
next to the honest candidate it must still accept: a launcher that looks at fresh memory to tell a validation
from the program (NaN there), an integer argument at 1 or a hundredfold, the launcher's own default, ids in
long runs, a strided view at a size that divides the block, zeros of either sign and subnormals, and float64.

Real programs (tests/programs/windows) and real candidates run through `validate` in the Triton interpreter.
"""

from __future__ import annotations

import sys

import pytest
from conftest import PROGRAMS

from intelliperf.validators import Program, capture_reference, copy_project, validate

pytestmark = pytest.mark.slow  # every test here runs validations (the fast tier skips them)

WINDOWS = PROGRAMS / "windows"
SEGMENTS = [sys.executable, "segment_sums.py"]
HISTOGRAM = [sys.executable, "ranged_histogram.py"]
GRID = "    grid = (triton.cdiv(n, block),)\n"
STRIDES = "    stride_r, stride_c = x.stride()\n"
INSIDE = "    inside = (offs < n) & (x >= lo) & (x <= hi)\n"


def _program(tmp_path, file: str, command: list[str], edits: list[tuple[str, str]]) -> Program:
    text = (WINDOWS / file).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return Program(copy_project(WINDOWS, {file: text}, tmp_path), command)


@pytest.fixture(scope="module")
def segments(tmp_path_factory):
    return capture_reference(
        Program(WINDOWS, SEGMENTS), "segment_sums_kernel", interpret=True, work_dir=tmp_path_factory.mktemp("seg")
    )


@pytest.fixture(scope="module")
def histogram(tmp_path_factory):
    return capture_reference(
        Program(WINDOWS, HISTOGRAM), "ranged_histogram_kernel", interpret=True, work_dir=tmp_path_factory.mktemp("h")
    )


def _refused(reference, program: Program, where, *trials: str) -> None:
    verdict = validate(reference, program, work_dir=where)
    assert not verdict.correct, "accepted"
    assert any(
        any(f"launcher-{t}" in p.message or f"{t} inputs" in p.message for t in trials) for p in verdict.problems
    ), verdict.reasons()


def test_a_launcher_that_probes_fresh_memory_for_nan_is_met_where_it_holds_none(segments, tmp_path):
    """In a replay, memory torch.empty hands the reference is NaN; a launcher that takes the right path only
    where a fresh tensor is all NaN (and drops `skip` for the program's own 3 elsewhere) is right in the program
    and in every trial that probe would see as one. A candidate's fresh memory is zeros or stale values, never
    NaN, so the trials that pass another `skip` meet the wrong path."""
    probe = (
        "    out = torch.zeros(",
        "    if not bool(torch.isnan(torch.empty(8, device=x.device)).all()):\n"
        "        skip = 3\n"
        "    out = torch.zeros(",
    )
    _refused(
        segments,
        _program(tmp_path / "c", "segment_sums.py", SEGMENTS, [probe]),
        tmp_path / "vc",
        "counts",
        "defaults",
        "many",
        "ones",
        "powers",
    )


def test_an_integer_argument_is_tried_at_one_and_a_hundredfold(segments, tmp_path):
    """The program always has 12 segments. A grid of one program where there is one segment ('one graph') sums
    only the first block of rows; a path for more than 1,024 segments that sums 32 columns of 40: each right at
    12 (and at 25 and 16), wrong at 1 or at 1,200. Blocks of 128 rows are right at every count."""
    one = (GRID, "    grid = (1,) if num_segments == 1 else (triton.cdiv(n, block),)\n")
    _refused(segments, _program(tmp_path / "one", "segment_sums.py", SEGMENTS, [one]), tmp_path / "v1", "at-one")
    narrow = ("(x, seg, out, n, dim, skip,", "(x, seg, out, n, min(dim, 32) if num_segments > 1024 else dim, skip,")
    many = _program(tmp_path / "many", "segment_sums.py", SEGMENTS, [narrow])
    _refused(segments, many, tmp_path / "vm", "hundredfold")
    wider = ("block: int = 64", "block: int = 128")
    honest = validate(
        segments, _program(tmp_path / "h", "segment_sums.py", SEGMENTS, [wider]), work_dir=tmp_path / "vh"
    )
    assert honest.correct, honest.reasons()


def test_the_launchers_default_is_a_trial(segments, tmp_path):
    """The program passes skip=3; the launcher's own default, -1, means no segment skipped. A launcher that
    'normalises' a negative skip as nn.Embedding does a padding index drops the last segment there."""
    normalised = (GRID, GRID + "    if skip < 0:\n        skip += num_segments\n")
    _refused(segments, _program(tmp_path / "c", "segment_sums.py", SEGMENTS, [normalised]), tmp_path / "v", "defaults")


def test_ids_in_runs_fill_whole_blocks_with_one_id(segments, tmp_path):
    """Uniform draws of 12 ids never give a block of 64 rows one id; sorted or bucketed ids do. A fast path for
    such a block (one sum, one atomic) that drops the block's last row is met by the repeated ids' runs."""
    uniform = (
        "    keep = (rows < n) & (seg != skip)\n",
        "    keep = (rows < n) & (seg != skip)\n"
        "    same = tl.min(tl.where(rows < n, seg, 1 << 30), 0) == tl.max(tl.where(rows < n, seg, -1), 0)\n"
        "    full = tl.sum((rows < n).to(tl.int32), 0) == BLOCK\n"
        "    keep = keep & tl.where(same & full, tl.arange(0, BLOCK) < BLOCK - 1, rows >= 0)\n",
    )
    _refused(segments, _program(tmp_path / "c", "segment_sums.py", SEGMENTS, [uniform]), tmp_path / "v", "repeated")


def test_a_view_at_a_size_that_divides_the_block_is_a_trial(segments, tmp_path):
    """A launcher that passes a unit column stride where the width is a power of two ('no gather needed') is
    right on every contiguous input and on views of the program's 40 columns; a view 32 wide meets it."""
    unit = (STRIDES, STRIDES + "    stride_c = 1 if dim == triton.next_power_of_2(dim) else stride_c\n")
    _refused(segments, _program(tmp_path / "c", "segment_sums.py", SEGMENTS, [unit]), tmp_path / "v", "aligned-strided")


def test_zeros_of_either_sign_subnormals_and_float64_are_trials(histogram, tmp_path):
    """The program's values are uniform in [0, 10): never -0.0, never subnormal, never float64. A sign-bit test
    for `x >= 0` drops -0.0 (torch.histc counts it in bin 0); a test against the smallest normal number drops
    subnormals; a float64 path that forgets the range test counts values outside [lo, hi] in the end bins. The
    kernel over a wider block is right on all of them."""
    sign = (
        INSIDE,
        "    inside = (offs < n) & (x.to(tl.float32).to(tl.int32, bitcast=True) >= 0) & (x >= lo) & (x <= hi)\n",
    )
    _refused(histogram, _program(tmp_path / "s", "ranged_histogram.py", HISTOGRAM, [sign]), tmp_path / "vs", "sparse")
    flush = (INSIDE, "    inside = (offs < n) & (x >= lo) & (x <= hi) & ((x == 0.0) | (x > 1.1754943508222875e-38))\n")
    _refused(histogram, _program(tmp_path / "f", "ranged_histogram.py", HISTOGRAM, [flush]), tmp_path / "vf", "sparse")
    wide = [
        (INSIDE, "    inside = (offs < n) & (((x >= lo) & (x <= hi)) | (x.dtype == tl.float64))\n"),
    ]
    _refused(histogram, _program(tmp_path / "d", "ranged_histogram.py", HISTOGRAM, wide), tmp_path / "vd", "double")
    wider = ("block: int = 256", "block: int = 1024")
    honest = validate(
        histogram, _program(tmp_path / "h", "ranged_histogram.py", HISTOGRAM, [wider]), work_dir=tmp_path / "vh"
    )
    assert honest.correct, honest.reasons()
