"""memoryLocality recipe grouped-order on real GEMM kernels: each rewritten kernel is spliced into its
program, passes the source policy and the scope check, compiles for a GPU target, and computes in
the interpreter what the original computed, at sizes where the last group of row tiles is partial."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_outputs import same_output
from recipe_request import applied, recipe_request

from intelliperf.rewriters import RewriteRequest
from intelliperf.rewriters.program_order import NotReorderable, grouped_order
from intelliperf.rewriters.source import code_unit
from intelliperf.validators.gate.policy import check

REPO = Path(__file__).resolve().parents[3]
PROGRAMS = REPO / "tests" / "programs" / "program_order"


def _request(file: Path, kernel: str, launcher: str, root: Path = REPO) -> RewriteRequest:
    unit = code_unit(file, kernel, root)
    assert unit is not None
    return recipe_request(unit, code_unit(file, launcher, root), "memoryLocality")


def _rewritten(request: RewriteRequest, tmp_path: Path) -> tuple[Path, str]:
    """The program with the recipe's kernel spliced in, checked as the optimize loop checks a candidate."""
    kernel, launcher = grouped_order(request)
    assert launcher is None
    return applied(request, tmp_path, kernel), kernel


@pytest.mark.slow
def test_grouped_order_on_the_tutorial_gemm(tmp_path):
    """5 x 3 tiles of 128: fewer row tiles than a group, so group_size_m is the remainder."""
    file = REPO / "benchmarks" / "fixes" / "triton_matmul_row_major_before.py"
    request = _request(file, "matmul_kernel", "matmul")
    path, kernel = _rewritten(request, tmp_path)
    assert "num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)" in kernel and "GROUP_M = 8" in kernel
    assert "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)" in kernel
    assert "pid_m = pid // num_pid_n" not in kernel
    inputs = "torch.randn(640, 96, dtype=torch.float16), torch.randn(96, 384, dtype=torch.float16)"
    same_output(file, path, request, inputs, exact=True)


@pytest.mark.slow
def test_grouped_order_on_a_tuple_split_with_the_program_id_inline(tmp_path):
    """`tm, tn = pid // tl.cdiv(N, BN), pid % tl.cdiv(N, BN)`: the program id and the column tile count
    get names of their own; M comes from the masks (`rm < M`); 11 x 3 tiles, a full and a partial group."""
    file = PROGRAMS / "tuple_split.py"
    request = _request(file, "gemm_kernel", "gemm")
    path, kernel = _rewritten(request, tmp_path)
    assert "pid = tl.program_id(axis=0)" in kernel and "num_pid_n = tl.cdiv(N, BN)" in kernel
    assert "num_pid_m = tl.cdiv(M, BM)" in kernel
    assert "tm = first_pid_m + pid % num_pid_in_group % group_size_m" in kernel.replace("(", "").replace(")", "")
    same_output(file, path, request, "torch.randn(170, 24), torch.randn(24, 40)", exact=True)


@pytest.mark.slow
def test_grouped_order_on_a_column_major_order(tmp_path):
    """`tile_n = pid // tiles_m`, `tile_m = pid - tile_n * tiles_m`: the column tile is the slow index,
    so the groups are of column tiles, their count from `offs_n < N`; 10 x 3 tiles."""
    file = PROGRAMS / "column_major.py"
    request = _request(file, "gemm_colmajor_kernel", "gemm_colmajor")
    path, kernel = _rewritten(request, tmp_path)
    assert "num_pid_m = tl.cdiv(N, BLOCK_N)" in kernel and "num_pid_in_group = GROUP_M * tiles_m" in kernel
    inputs = "torch.randn(40, 20, dtype=torch.float16), torch.randn(20, 150, dtype=torch.float16)"
    same_output(file, path, request, inputs, exact=True)


@pytest.mark.slow
def test_grouped_order_on_the_row_major_side_of_a_constexpr_switch(tmp_path):
    """`if GROUPED: <grouped order> else: pid_m = pid // num_pid_n ...`: the row-major side (the one that runs
    with GROUPED=False, the side memoryLocality flags) is rewritten and the grouped side kept, not declined as
    "already grouped". 5 x 3 tiles of 32 (the CPU's block): one partial group."""
    file = REPO / "tests" / "programs" / "bottlenecks" / "tiled_matmul.py"
    request = _request(file, "matmul_kernel", "matmul")
    path, kernel = _rewritten(request, tmp_path)
    assert "pid_m = pid // num_pid_n" not in kernel and "group = pid // (8 * num_pid_n)" in kernel
    assert "    else:\n        # intelliperf recipe grouped-order" in kernel
    assert "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)" in kernel
    inputs = "torch.randn(160, 16), torch.randn(16, 96), False"
    same_output(file, path, request, inputs, exact=True)


def test_new_names_do_not_collide_with_the_kernels(tmp_path):
    acc = "    acc = tl.zeros((BM, BN), dtype=tl.float32)\n"
    file = tmp_path / "collide.py"
    file.write_text((PROGRAMS / "tuple_split.py").read_text().replace(acc, "    group_id = 0\n    pid = 1\n" + acc))
    request = _request(file, "gemm_kernel", "gemm", root=tmp_path)
    kernel, _ = grouped_order(request)
    assert "pid_2 = tl.program_id(axis=0)" in kernel and "group_id_2 = pid_2 // num_pid_in_group" in kernel
    check(request.kernel.source, kernel, request.kernel.name, kernel=True)


@pytest.mark.parametrize(
    "file,kernel,launcher,reason",
    [
        (REPO / "benchmarks/corpus/triton_matmul_autotuned.py", "matmul_kernel", "matmul", "already grouped"),
        (REPO / "benchmarks/fixes/triton_matmul_row_major_after.py", "matmul_kernel", "matmul", "already grouped"),
        (PROGRAMS / "declines.py", "grid_2d_kernel", "grid_2d", "comes from a 2-D grid; swap to a 1-D grid first"),
        (PROGRAMS / "declines.py", "unbounded_kernel", "unbounded", "cannot derive the number of row tiles"),
        (REPO / "tests/programs/row_partials/column_sums.py", "scale_rows_kernel", "scale_rows", "no row-major"),
    ],
)
def test_grouped_order_declines_with_its_reason(file, kernel, launcher, reason):
    request = _request(file, kernel, launcher)
    with pytest.raises(NotReorderable, match=reason) as declined:
        grouped_order(request)
    assert str(declined.value).count(". ") == 0  # one sentence
