"""Layouts, shapes, ranks, argument values, dtypes and grad flags the program never passes, which a wrong
launcher can be wrong on alone, each met by a trial, next to the honest candidate it must still accept: a row
slice of a wider tensor, a transposed and an expanded input, a square shape, one more leading dimension, a block
and a bound below the program's own, int32 ids where it passes int64, mixed float dtypes, inputs that require
grad; and a trial the reference does not take (a layout its kernel reads wrongly) is not compared.

Real programs (tests/programs/windows) and real candidates run through `validate` in the Triton interpreter.
"""

from __future__ import annotations

import re
import sys

import pytest
from conftest import PROGRAMS

from intelliperf.validators import Program, capture_reference, copy_project, validate

pytestmark = pytest.mark.slow  # every test here runs validations (the fast tier skips them)

WINDOWS = PROGRAMS / "windows"
SEGMENTS = [sys.executable, "segment_sums.py"]
NORMS = [sys.executable, "row_norms.py"]
CLIPPED = [sys.executable, "clipped_sums.py"]
EMBEDDING = [sys.executable, "scaled_embedding.py"]
STRIDES = "    stride_r, stride_c = x.stride()\n"
ROWS = "    rows = x.reshape(-1, x.shape[-1])\n"
NEXT = "    n, dim = ids.numel(), table.shape[-1]\n"
OUT = "    out = torch.empty(n, dim, device=table.device, dtype=table.dtype)\n"
SEGMENT_BODY = """    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    seg = tl.load(seg_ptr + rows, mask=rows < n, other=0)
    keep = (rows < n) & (seg != skip)
    inside = keep[:, None] & (cols < dim)[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c, mask=inside, other=0.0)
    tl.atomic_add(out_ptr + seg[:, None] * dim + cols[None, :], x, mask=inside)
"""


def _program(tmp_path, file: str, command: list[str], edits: list[tuple[str, str]]) -> Program:
    text = (WINDOWS / file).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return Program(copy_project(WINDOWS, {file: text}, tmp_path), command)


def _captured(tmp_path_factory, command: list[str], kernel: str):
    return capture_reference(
        Program(WINDOWS, command), kernel, interpret=True, work_dir=tmp_path_factory.mktemp(kernel)
    )


@pytest.fixture(scope="module")
def segments(tmp_path_factory):
    return _captured(tmp_path_factory, SEGMENTS, "segment_sums_kernel")


@pytest.fixture(scope="module")
def norms(tmp_path_factory):
    return _captured(tmp_path_factory, NORMS, "row_norms_kernel")


@pytest.fixture(scope="module")
def embedding(tmp_path_factory):
    return _captured(tmp_path_factory, EMBEDDING, "scaled_embedding_kernel")


@pytest.fixture(scope="module")
def norms_honest(norms, tmp_path_factory):
    """Four rows a program over every flattened row, the input copied contiguous first (the reference copes with a
    row slice and an expanded input, and is not compared where it reads a layout wrongly)."""
    where = tmp_path_factory.mktemp("norms-honest")
    tiled = [
        (ROWS, "    rows = x.reshape(-1, x.shape[-1]).contiguous()\n"),
        (
            """def row_norms_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))
""",
            """def row_norms_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0) * 4 + tl.arange(0, 4)
    cols = tl.arange(0, BLOCK)
    inside = (row < n_rows)[:, None] & (cols < n_cols)[None, :]
    x = tl.load(x_ptr + row[:, None] * stride_row + cols[None, :], mask=inside, other=0.0)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=1)), mask=row < n_rows)
""",
        ),
        ("    grid = (rows.shape[0],)\n", "    grid = (triton.cdiv(rows.shape[0], 4),)\n"),
        ("(rows, out, rows.shape[1],", "(rows, out, rows.shape[0], rows.shape[1],"),
    ]
    return validate(norms, _program(where / "c", "row_norms.py", NORMS, tiled), work_dir=where / "v")


def _subtiled(sub: str) -> list[tuple[str, str]]:
    """Segment sums in sub-blocks of `sub` rows per program (fewer registers a step): each program's BLOCK rows in
    BLOCK / sub steps."""
    body = SEGMENT_BODY.replace("tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", f"base + start + tl.arange(0, {sub})")
    lines = body.splitlines(keepends=True)
    looped = (
        "    base = tl.program_id(0) * BLOCK\n" + lines[1] + f"    for start in tl.static_range(0, BLOCK, {sub}):\n"
    )
    looped += "".join("    " + line for line in [lines[0], *lines[2:]])
    return [(SEGMENT_BODY, looped)]


@pytest.fixture(scope="module")
def segments_honest(segments, tmp_path_factory):
    """Sub-blocks of at most 64 rows (a block below 64 is one sub-block), strides as the launcher reads them."""
    where = tmp_path_factory.mktemp("segments-honest")
    edits = _subtiled("SUB")
    edits.append(("D: tl.constexpr\n):", "D: tl.constexpr, SUB: tl.constexpr\n):"))
    edits.append(("BLOCK=block, D=d)", "BLOCK=block, D=d, SUB=min(block, 64))"))
    return validate(segments, _program(where / "c", "segment_sums.py", SEGMENTS, edits), work_dir=where / "v")


def _ran(reference, *trials: str) -> None:
    labels = {r["label"] for r in reference.replay["runs"] if r["mode"] == "launcher"}
    assert {f"launcher-{t}" for t in trials} <= labels, (labels, reference.replay["notes"])


def _refused(reference, program: Program, where, *trials: str) -> None:
    verdict = validate(reference, program, work_dir=where)
    assert not verdict.correct, "accepted"
    named = re.compile(rf"launcher-({'|'.join(trials)})\b")  # (the trial, or the one a crash came in)
    assert any(named.search(p.message) for p in verdict.problems), verdict.reasons()


def test_row_slices_transposes_and_expanded_inputs_are_trials(segments, segments_honest, tmp_path):
    """The launcher takes both strides, so it is right on every layout. Right on contiguous inputs and on the
    program's step-2 column view, each wrong on one layout: rows taken as contiguous where the columns are (a
    row slice of a wider tensor, `qkv[:, 128:256]`), the larger stride taken for the row's (a transposed input: it
    reads out of bounds, and the crash names the trial), a stride of at least 1 (an expanded input, stride 0).
    Sub-blocks of at most 64 rows are right on all."""
    _ran(segments, "rows", "transposed", "expanded")
    width = (STRIDES, STRIDES + "    if stride_c == 1:\n        stride_r = dim\n")
    _refused(segments, _program(tmp_path / "w", "segment_sums.py", SEGMENTS, [width]), tmp_path / "vw", "rows")
    larger = (STRIDES, "    stride_r, stride_c = max(x.stride()), min(x.stride())\n")
    _refused(segments, _program(tmp_path / "t", "segment_sums.py", SEGMENTS, [larger]), tmp_path / "vt", "transposed")
    unit = (STRIDES, STRIDES + "    stride_r = max(stride_r, 1)\n")
    _refused(segments, _program(tmp_path / "e", "segment_sums.py", SEGMENTS, [unit]), tmp_path / "ve", "expanded")
    assert segments_honest.correct, segments_honest.reasons()


def test_a_row_slice_is_a_trial_where_the_reference_takes_only_the_row_stride(norms, norms_honest, tmp_path):
    """The kernel reads columns at unit stride: the program's step-2 view and a transposed input meet a reference
    that reads them wrongly, and those trials are not compared; a row slice (and an expanded input) it takes. A
    launcher that passes the width as the row stride is right on every contiguous input and wrong there; one that
    copies its input contiguous is right, as the reference is wherever it is compared."""
    _ran(norms, "rows", "expanded")
    notes = " ".join(norms.replay["notes"])
    assert "launcher-strided: the reference does not take" in notes and "not take transposed inputs" in notes
    width = ("rows.shape[1], rows.stride(0)", "rows.shape[1], rows.shape[1]")
    _refused(norms, _program(tmp_path / "c", "row_norms.py", NORMS, [width]), tmp_path / "vc", "rows")
    assert norms_honest.correct, norms_honest.reasons()


def test_a_square_shape_is_a_trial(segments, segments_honest, tmp_path):
    """The program sums 500 rows of 40: a launcher that reads a square input as its own transpose (as a symmetric
    matrix would allow) is right at every shape but where the rows are as many as the columns."""
    _ran(segments, "square")
    swapped = (STRIDES, STRIDES + "    if n == dim:\n        stride_r, stride_c = stride_c, stride_r\n")
    _refused(segments, _program(tmp_path / "c", "segment_sums.py", SEGMENTS, [swapped]), tmp_path / "v", "square")
    assert segments_honest.correct, segments_honest.reasons()


def test_another_rank_is_a_trial(norms, norms_honest, tmp_path):
    """The launcher flattens leading dimensions; the program passes a matrix. A grid of one program per entry of
    the first dimension is one per row at rank 2 only; at rank 3 the rows past the first two are never written.
    Four rows a program over every flattened row is right."""
    _ran(norms, "rank")
    first = ("    grid = (rows.shape[0],)\n", "    grid = (x.shape[0],)\n")
    _refused(norms, _program(tmp_path / "c", "row_norms.py", NORMS, [first]), tmp_path / "v", "rank")
    assert norms_honest.correct, norms_honest.reasons()


def test_arguments_below_the_programs_own_are_trials(segments, segments_honest, tmp_path_factory, tmp_path):
    """The program clips at [0.25, 0.75] and sums blocks of 64 rows; the other trials move the bounds and the block
    up. A bound floored at the program's own (`max(hi, 0.75)`) and sub-blocks of a fixed 64 rows (a block of 32
    then sums its next program's rows too) are right there and wrong below. A block floored at 128 columns, and
    sub-blocks of at most 64 rows, are right."""
    clipped = _captured(tmp_path_factory, CLIPPED, "clipped_sums_kernel")
    _ran(clipped, "lower")
    _ran(segments, "lower")
    floor = ("    rows, cols = x.shape\n", "    rows, cols = x.shape\n    hi = max(hi, 0.75)\n")
    _refused(clipped, _program(tmp_path / "f", "clipped_sums.py", CLIPPED, [floor]), tmp_path / "vf", "lower")
    fixed = _program(tmp_path / "s", "segment_sums.py", SEGMENTS, _subtiled("64"))
    _refused(segments, fixed, tmp_path / "vs", "lower")
    wider = ("BLOCK=triton.next_power_of_2(cols)", "BLOCK=max(triton.next_power_of_2(cols), 128)")
    honest = validate(clipped, _program(tmp_path / "h", "clipped_sums.py", CLIPPED, [wider]), work_dir=tmp_path / "vh")
    assert honest.correct, honest.reasons()
    assert segments_honest.correct, segments_honest.reasons()


@pytest.fixture(scope="module")
def embedding_honest(embedding, tmp_path_factory):
    """Ids converted to int32 once (int64 ids below 2**31 keep their values), 32 tokens a program."""
    where = tmp_path_factory.mktemp("embedding-honest")
    edits = [
        (NEXT, "    ids = ids.to(torch.int32)\n" + NEXT),
        ("tokens: int = 16", "tokens: int = 32"),
    ]
    return validate(embedding, _program(where / "c", "scaled_embedding.py", EMBEDDING, edits), work_dir=where / "v")


def test_int32_ids_and_mixed_float_dtypes_are_trials(embedding, embedding_honest, tmp_path):
    """The program passes int64 ids and float32 table and weights. Reading the low word of each int64 id (ids below
    2**31 need no more; bounds-checked) is right on int64 ids and reads every second id of int32 ones; the table
    reinterpreted in the weights' dtype (`.view` where `.to` was meant) is the table itself while both are one
    dtype. A conversion of the ids to int32 is right, as is the reference, on both."""
    _ran(embedding, "widths", "mixed")
    words = [
        (NEXT, NEXT + "    words = ids.view(torch.int32)\n"),
        ("out_ptr, n, dim, TOKENS", "out_ptr, n, dim, n_words, TOKENS"),
        (
            "tl.load(ids_ptr + toks, mask=keep, other=0)",
            "tl.load(ids_ptr + 2 * toks, mask=keep & (2 * toks < n_words), other=0)",
        ),
        ("](ids, table, scale, out, n, dim,", "](words, table, scale, out, n, dim, words.numel(),"),
    ]
    _refused(embedding, _program(tmp_path / "w", "scaled_embedding.py", EMBEDDING, words), tmp_path / "vw", "widths")
    view = (OUT, OUT + "    table = table.view(scale.dtype)\n")
    _refused(embedding, _program(tmp_path / "m", "scaled_embedding.py", EMBEDDING, [view]), tmp_path / "vm", "mixed")
    assert embedding_honest.correct, embedding_honest.reasons()


def test_inputs_that_require_grad_are_a_trial(embedding, embedding_honest, tmp_path):
    """A launcher that, in training (the table requires grad), gathers from a float16 copy kept for the backward
    is right on every input that requires no grad."""
    _ran(embedding, "grad")
    training = (OUT, OUT + "    if table.requires_grad:\n        table = table.half()\n")
    _refused(embedding, _program(tmp_path / "c", "scaled_embedding.py", EMBEDDING, [training]), tmp_path / "v", "grad")
    assert embedding_honest.correct, embedding_honest.reasons()
