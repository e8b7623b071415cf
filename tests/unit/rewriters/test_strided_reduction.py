"""memoryAccess recipe tile-strided-reduction on real column kernels: each rewritten kernel and launcher
is spliced into its program, passes the source policy and the scope check, compiles for a GPU target,
and computes in the interpreter what the original computed, with a column count that is not a
multiple of the tile and a row count that is not a multiple of the chunk."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_outputs import same_output
from recipe_request import applied, recipe_request

from intelliperf.models import ArgInfo, LaunchSignature
from intelliperf.rewriters import RewriteRequest
from intelliperf.rewriters.source import code_unit
from intelliperf.rewriters.strided_reduction import NotStridedReduction, tile_strided_reduction

REPO = Path(__file__).resolve().parents[3]
PROGRAMS = REPO / "tests" / "programs" / "strided_reduction"


def _request(file: Path, kernel: str, launcher: str | None, dtypes: dict[str, str] | None = None) -> RewriteRequest:
    """A request as the optimize loop builds it; `dtypes` the recorded element types of the kernel's buffers."""
    unit = code_unit(file, kernel, REPO)
    assert unit is not None
    args = [ArgInfo(name=n, kind="tensor", dtype=d) for n, d in (dtypes or {}).items()]
    signature = LaunchSignature(grid=[1000], args=args, launches=1, total_time_s=1e-3) if dtypes else None
    launcher_unit = code_unit(file, launcher, REPO) if launcher else None
    return recipe_request(unit, launcher_unit, "memoryAccess", signature)


def _rewritten(request: RewriteRequest, tmp_path: Path) -> tuple[Path, str, str]:
    """The program with the recipe's kernel and launcher spliced in, checked as the loop checks a candidate."""
    assert request.launcher is not None
    kernel, launcher = tile_strided_reduction(request)
    assert launcher is not None
    return applied(request, tmp_path, kernel, launcher), kernel, launcher


@pytest.mark.slow
def test_column_sums_with_a_vector_accumulator(tmp_path):
    """A [BLOCK] accumulator becomes [BLOCK, 32]; BLOCK_ROWS=512 would make a 16384-element tile, so the
    launcher passes at most 256; 300 rows, 45 columns."""
    file = PROGRAMS / "column_sums.py"
    request = _request(file, "column_sums_kernel", "column_sums")
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "col = (tl.program_id(0) * 32 + tl.arange(0, 32))[None, :]" in kernel
    assert "acc = tl.zeros((BLOCK_ROWS, 32), dtype=tl.float32)" in kernel
    assert "rows = start + tl.arange(0, BLOCK_ROWS)[:, None]" in kernel
    assert "mask=(rows < n_rows) & (col < n_cols)" in kernel
    assert "tl.store(out_ptr + col, tl.sum(acc, axis=0, keep_dims=True), mask=col < n_cols)" in kernel
    assert "column_sums_kernel[(triton.cdiv(n_cols, 32),)](" in launcher and "BLOCK_ROWS=min(512, 256)" in launcher
    same_output(file, path, request, "(torch.randn(300, 45),)")


@pytest.mark.slow
def test_half_precision_columns_take_a_wider_tile(tmp_path):
    """float16 buffers: 64 columns make a row of the tile 128 bytes, and the block drops to 128 rows."""
    file = PROGRAMS / "column_sums.py"
    request = _request(file, "column_sums_kernel", "column_sums", {"x_ptr": "torch.float16", "out_ptr": "float32"})
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "tl.arange(0, 64))[None, :]" in kernel and "BLOCK_ROWS=min(512, 128)" in launcher
    same_output(file, path, request, "(torch.randn(300, 70, dtype=torch.float16),)")


@pytest.mark.slow
def test_column_max_with_a_scalar_accumulator_and_a_new_extent(tmp_path):
    """`best = -float("inf")` widens to a [1, 32] tile, `tl.max(vals)` reduces axis 0 per column; the
    column count reaches the kernel only through the lambda grid, so it becomes a keyword parameter;
    the column's base pointer is a name assigned once. Maxima are exact: 100 rows, 40 columns."""
    file = PROGRAMS / "column_max.py"
    request = _request(file, "column_max_kernel", "column_max")
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert 'best = tl.full((1, 32), -float("inf"), tl.float32)' in kernel
    assert "best = tl.maximum(best, tl.max(vals, axis=0, keep_dims=True))" in kernel
    assert "BLOCK: tl.constexpr, n_cols):" in kernel and "mask=c < n_cols)" in kernel
    assert "grid = lambda meta: (triton.cdiv(n_cols, 32),)" in launcher and "n_cols=n_cols)" in launcher
    same_output(file, path, request, "(torch.randn(100, 40),)", exact=True)


@pytest.mark.slow
def test_column_mean_and_variance_in_two_passes(tmp_path):
    """`pid = tl.program_id(0)` and `grid = (N,)`: a scalar sum of per-chunk tl.sum, then a second loop
    with a `[BLOCK_M]` accumulator around the mean; 150 rows, 50 columns."""
    file = PROGRAMS / "column_stats.py"
    request = _request(file, "column_mean_var_kernel", "column_mean_var")
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "total = tl.full((1, 32), 0.0, tl.float32)" in kernel
    assert "sq = tl.zeros((BLOCK_M, 32), dtype=tl.float32)" in kernel
    assert "tl.sum(sq, axis=0, keep_dims=True) / M" in kernel and "grid = (triton.cdiv(N, 32),)" in launcher
    same_output(file, path, request, "(torch.randn(150, 50),)")


@pytest.mark.slow
def test_column_running_sums_with_a_carried_total(tmp_path):
    """A chunked tl.cumsum along the column plus the total of the chunks before it; 100 rows, 37 columns."""
    file = PROGRAMS / "column_stats.py"
    request = _request(file, "column_cumsum_kernel", "column_cumsum")
    path, kernel, _ = _rewritten(request, tmp_path)
    assert "carry = tl.zeros((1, 32), dtype=tl.float32)" in kernel
    assert "tl.cumsum(x, axis=0) + carry, mask=inside & (col < n_cols))" in kernel
    same_output(file, path, request, "(torch.randn(100, 37),)")


@pytest.mark.slow
def test_a_scan_written_along_axis_minus_one_and_the_total_after_the_loop(tmp_path):
    """`running = 0.0` carried by `running = running + tl.sum(x)`, a scan along axis -1 of the 1-D
    block (axis 0 of the tile), the total stored after the loop; 20 rows, 35 columns."""
    file = PROGRAMS / "column_stats.py"
    request = _request(file, "column_prefix_and_total_kernel", "column_prefix_and_total")
    path, kernel, _ = _rewritten(request, tmp_path)
    assert "running = tl.full((1, 32), 0.0, tl.float32)" in kernel and "tl.cumsum(x, axis=0) + running" in kernel
    assert "running = running + tl.sum(x, axis=0, keep_dims=True)" in kernel
    assert "tl.store(Y + M * N + col, running, mask=col < N)" in kernel
    same_output(file, path, request, "(torch.randn(20, 35),)")


@pytest.mark.slow
def test_a_batch_of_matrices_tiles_the_second_grid_axis(tmp_path):
    """`n = tl.program_id(1)` of a `(B, N)` grid, added through `offs = b * stride_b + r * stride_m + n`;
    `tl.max(acc, 0)` with its axis positional; maxima are exact: 2 x 20 x 40."""
    file = PROGRAMS / "batched_abs_max.py"
    request = _request(file, "batched_abs_max_kernel", "batched_abs_max")
    path, kernel, launcher = _rewritten(request, tmp_path)
    assert "b = tl.program_id(0)" in kernel and "n = (tl.program_id(1) * 32 + tl.arange(0, 32))[None, :]" in kernel
    assert "tl.store(Y + b * N + n, tl.max(acc, 0, keep_dims=True), mask=n < N)" in kernel
    assert "batched_abs_max_kernel[(B, triton.cdiv(N, 32))](" in launcher
    same_output(file, path, request, "(torch.randn(2, 20, 40),)", exact=True)


@pytest.mark.parametrize(
    "kernel,launcher,reason",
    [
        ("column_major_sums_kernel", "column_major_sums", "the program index is not added with stride 1"),
        ("seeded_sums_kernel", "seeded_sums", "carries `acc`, which is not a reduction accumulator"),
        ("tiled_sums_kernel", "tiled_sums", "the kernel already works on 2-D blocks"),
        ("lower_triangle_sums_kernel", "lower_triangle_sums", "bounds of the loop at line .* depend on the program"),
        ("guarded_sums_kernel", "guarded_sums", "is not an assignment, a tl.store or a loop over range"),
        ("atomic_total_kernel", "atomic_total", "`tl.atomic_add` is not an elementwise operation, reduction or scan"),
        ("elementwise_scale_kernel", "elementwise_scale", "no loop along the strided axis"),
        ("row_major_sums_kernel", "sums_with_a_grid_function", r"the grid `_grid_of\(x.shape\[1\]\)` is not a tuple"),
        ("row_major_sums_kernel", "sums_with_a_computed_block", "`BLOCK` is not a keyword argument of the launch"),
        ("row_major_sums_kernel", None, "the launch cannot be rewritten"),
        ("stacked_column_sums_kernel", "stacked_column_sums", "may be more than 8192 elements, and `BLOCK` is not"),
    ],
)
def test_declines_with_its_reason(kernel, launcher, reason):
    with pytest.raises(NotStridedReduction, match=reason) as declined:
        tile_strided_reduction(_request(PROGRAMS / "declines.py", kernel, launcher))
    assert str(declined.value).count(". ") == 0  # one sentence
