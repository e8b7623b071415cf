"""atomicContention recipe rows-per-program on real row kernels: each rewritten kernel and launcher is
spliced into its program, passes the source policy and the scope check, compiles for a GPU target,
and computes in the interpreter what the original computed, with a row count that is not a multiple
of the rows per program."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_outputs import same_output
from recipe_request import applied, recipe_request

from intelliperf.models import ArgInfo, LaunchSignature
from intelliperf.rewriters import RewriteRequest
from intelliperf.rewriters.row_partials import NotRowPartial, rows_per_program
from intelliperf.rewriters.source import code_unit

REPO = Path(__file__).resolve().parents[3]
PROGRAMS = REPO / "tests" / "programs" / "row_partials"
LIGER = REPO / "benchmarks" / "fixes" / "liger_layer_norm_backward_before.py"


def _request(
    file: Path,
    kernel: str,
    launcher: str | None,
    rows: int | None = None,
    dtypes: dict[str, str] | None = None,
    sm_count: int | None = None,
) -> RewriteRequest:
    """A request as the optimize loop builds it; `rows` is the recorded grid, `dtypes` the recorded
    element types of the kernel's buffers."""
    unit = code_unit(file, kernel, REPO)
    assert unit is not None
    signature = None
    if rows is not None:
        args = [ArgInfo(name=n, kind="tensor", dtype=d) for n, d in (dtypes or {}).items()]
        signature = LaunchSignature(grid=[rows], args=args, launches=1, total_time_s=1e-3)
    launcher_unit = code_unit(file, launcher, REPO) if launcher else None
    return recipe_request(unit, launcher_unit, "atomicContention", signature, sm_count)


def _rewritten(request: RewriteRequest, tmp_path: Path) -> tuple[Path, str, str]:
    """The program with the recipe's kernel and launcher spliced in, checked as the loop checks a candidate."""
    assert request.launcher is not None
    kernel, launcher = rows_per_program(request)
    return applied(request, tmp_path, kernel, launcher), kernel, launcher


LAYER_NORM_INPUTS = (
    "(lambda X: (torch.randn(37, 96), X, torch.randn(96), torch.randn(96), X.mean(1), "
    "torch.rsqrt(X.var(1, unbiased=False) + 1e-6)))(torch.randn(37, 96))"
)


@pytest.mark.slow
def test_rows_per_program_on_liger_layer_norm_backward(tmp_path):
    """The real Liger kernel: the row count is not a kernel argument, so the kernel gets one; the
    weight row's load moves before the loop; dW and dB become two partial sums. 37 rows, 16 per program."""
    request = _request(LIGER, "_layer_norm_backward_kernel", "layer_norm_backward", 4096, {"DW_ptr": "float32"})
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "for row_step in range(0, tl.minimum(16, n_rows - first_row)):" in kernel
    assert "row_idx = row_index.to(tl.int64)" in kernel
    hoisted = kernel.split("for row_step")[0]
    assert "w = tl.load(W_ptr + cols, mask=mask, other=0.0)" in hoisted and "x = tl.load(" not in hoisted
    assert "partial_dw = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)" in kernel
    assert "partial_dw += tl.where(mask, dw.to(atomic_dtype), 0).to(tl.float32)" in kernel
    assert kernel.rstrip().endswith("tl.atomic_add(DB_ptr + cols, partial_db.to(DB_ptr.dtype.element_ty), mask=mask)")
    assert "grid = (triton.cdiv(n_rows, 16),)" in launcher and "n_rows=n_rows," in launcher
    same_output(LIGER, path, request, LAYER_NORM_INPUTS)


@pytest.mark.slow
def test_rows_per_program_with_a_grid_lambda_and_the_row_count_passed(tmp_path):
    """`grid = lambda meta: (n_rows,)`, n_rows already a kernel argument, a vector and a scalar atomic;
    no recorded launch: 16 rows per program; 45 rows."""
    file = PROGRAMS / "column_sums.py"
    request = _request(file, "scale_rows_kernel", "scale_rows")
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "grid = lambda meta: (triton.cdiv(n_rows, 16),)" in launcher
    assert "tl.minimum(16, n_rows - first_row)" in kernel and kernel.count("n_rows") == 2  # no new parameter
    assert "partial_colsum += tl.where(valid, y, 0).to(tl.float32)" in kernel
    # a scalar per program into one cell: a scalar partial sum
    assert "partial_total = tl.zeros((), dtype=tl.float32)" in kernel
    assert "partial_total += (tl.sum(y, axis=0)).to(tl.float32)" in kernel
    same_output(file, path, request, "torch.randn(45, 50), torch.randn(45)")


@pytest.mark.slow
def test_rows_per_program_on_int32_counts_with_a_row_owned_atomic(tmp_path):
    """Positional masks, an inline grid `(x.shape[0],)` not passed to the kernel, int32 cells (the
    partial count stays int32, exact), and a per-row atomic that stays in the loop. 600 recorded rows
    on 132 SMs keep 2 rows per program; 45 rows here."""
    file = PROGRAMS / "nonzero_counts.py"
    dtypes = {"col_counts": "int32", "row_counts": "int32"}
    request = _request(file, "nonzero_counts_kernel", "nonzero_counts", 600, dtypes, sm_count=132)
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "nonzero_counts_kernel[(triton.cdiv(x.shape[0], 2),)](" in launcher
    assert "n_rows=x.shape[0]" in launcher
    assert "partial_col_counts = tl.zeros((BLOCK_COLS,), dtype=tl.int32)" in kernel
    assert "        tl.atomic_add(row_counts + r, tl.sum(nonzero, axis=0))" in kernel  # in the loop
    assert "tl.atomic_add(col_counts + c, partial_col_counts.to(col_counts.dtype.element_ty), mask=inside)" in kernel
    same_output(file, path, request, "(torch.randint(-1, 2, (45, 30), dtype=torch.int32),)", exact=True)


@pytest.mark.parametrize(
    "rows,sm_count,expected",
    [(None, None, 16), (4096, None, 16), (65536, None, 64), (65536, 132, 64), (4096, 132, 8), (600, 132, 2)],
)
def test_rows_per_program_keeps_a_few_hundred_programs(rows, sm_count, expected):
    request = _request(PROGRAMS / "column_sums.py", "scale_rows_kernel", "scale_rows", rows, sm_count=sm_count)
    _, launcher = rows_per_program(request)
    assert f"triton.cdiv(n_rows, {expected})" in launcher


@pytest.mark.parametrize(
    "kernel,launcher,reason",
    [
        ("early_exit_kernel", "early_exit", "returns early, which would end the loop over the program's rows"),
        ("row_sums_kernel", "row_sums", "the atomic's address depends on the row, so programs do not share"),
        ("persistent_kernel", "persistent", r"reads the grid size \(tl.num_programs\)"),
        ("blocked_rows_kernel", "blocked_rows", "depends on the program id: the kernel already loops over rows"),
        ("column_max_kernel", "column_max", "atomic_max is not an atomic_add"),
        ("column_sums_kernel", "column_sums_padded_grid", r"the grid `\(x.shape\[0\], 1, 1\)` is not a one-element"),
        ("column_sums_kernel", None, "the launch cannot be rewritten"),
    ],
)
def test_rows_per_program_declines_with_its_reason(kernel, launcher, reason):
    with pytest.raises(NotRowPartial, match=reason) as declined:
        rows_per_program(_request(PROGRAMS / "declines.py", kernel, launcher))
    assert str(declined.value).count(". ") == 0  # one sentence


def test_rows_per_program_declines_a_kernel_without_atomics():
    file = REPO / "benchmarks" / "fixes" / "triton_matmul_row_major_before.py"
    with pytest.raises(NotRowPartial, match="no tl.atomic_add whose cells programs share"):
        rows_per_program(_request(file, "matmul_kernel", "matmul"))
