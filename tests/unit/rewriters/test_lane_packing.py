"""laneUtilization recipes (rewriters/lane_packing.py) on real kernels, run in the interpreter.

Each rewritten program is spliced into a copy of its file, checked against the scope and the source
policy, then its launcher and the original's run on the same inputs under TRITON_INTERPRET=1,
including row counts that are no multiple of the rows packed per program and extents the recording
did not see; the outputs must match at the dtype's tolerance. Where a recipe does not apply, its
one-sentence reason is asserted.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from conftest import PROGRAMS, REPO
from interpreted import same_outputs
from recipe_request import recipe_request

from intelliperf.models import ArgInfo, LaunchSignature
from intelliperf.rewriters.base import RewriteRequest
from intelliperf.rewriters.lane_packing import NotPackable, pack_rows, split_row
from intelliperf.rewriters.source import check_scope, code_unit, splice
from intelliperf.validators.gate.policy import check

FIXES = REPO / "benchmarks" / "fixes"
PACKING = PROGRAMS / "lane_packing"
_modules = itertools.count()


def _request(
    file: Path, kernel: str, launcher: str, scalars: dict, constexprs: dict, root: Path = REPO
) -> RewriteRequest:
    """A request as the recorder would give it: the first launch's scalar and constexpr arguments."""
    args = [ArgInfo(name=k, kind="scalar", value=v) for k, v in scalars.items()]
    args += [ArgInfo(name=k, kind="constexpr", value=v) for k, v in constexprs.items()]
    signature = LaunchSignature(grid=[1, 1, 1], num_warps=4, args=args, launches=1, total_time_s=1e-3)
    return recipe_request(code_unit(file, kernel, root), code_unit(file, launcher, root), "laneUtilization", signature)


def _rewritten(request: RewriteRequest, recipe) -> str:
    """The program's text with the recipe applied, checked for scope and source policy."""
    kernel, launcher = recipe(request)
    check(request.kernel.source, kernel, request.kernel.name, kernel=True)
    check(request.launcher.source, launcher, request.launcher.name, kernel=False)
    original = Path(request.kernel.file).read_text()
    text = splice(splice(original, request.kernel.qualname, kernel), request.launcher.qualname, launcher)
    check_scope(original, text, {request.kernel.name, request.launcher.name}, kernel=request.kernel.name)
    return text


def _load(text: str, tmp_path: Path) -> Path:
    path = tmp_path / f"program_{next(_modules)}.py"
    path.write_text(text)
    return path


def _same(original: Path, rewritten: Path, launcher: str, *inputs) -> None:
    """Both launchers on fresh copies of the inputs (some kernels write in place), each in a fresh
    interpreter process; outputs equal."""
    same_outputs(original, rewritten, launcher, *inputs)


@pytest.mark.slow
def test_pack_rows_rotates_two_heads_per_program_in_unsloth_rope(tmp_path):
    file = FIXES / "unsloth_rope_embedding_before.py"
    request = _request(
        file,
        "_rope_embedding",
        "rope_embedding_forward",
        {"seqlen": 16, "head_dim": 64},
        {"BACKWARD_PASS": False, "BLOCK_SIZE": 64},
    )
    text = _rewritten(request, pack_rows)
    # The head axis is packed (cos/sin do not depend on it, so they are loaded once for both heads),
    # and the launcher fits the block to head_dim // 2 at run time.
    assert "_ip_row = tl.program_id(1) * PACKED_ROWS + tl.arange(0, PACKED_ROWS)" in text
    assert "_ip_fit = min(triton.next_power_of_2(max(head_dim // 2, 1)), BLOCK_SIZE)" in text
    assert "triton.cdiv(n_heads, _ip_rows)" in text and "packed_extent=n_heads" in text
    original, rewritten = _load(file.read_text(), tmp_path), _load(text, tmp_path)
    for heads, head_dim in ((7, 64), (3, 48), (2, 128)):  # 48: a block of 64 over 24 lanes, 32 fitted
        q = torch.randn(1, 5, heads, head_dim)
        emb = torch.randn(5, head_dim)
        _same(original, rewritten, "rope_embedding_forward", q, emb.cos(), emb.sin())


@pytest.mark.slow
def test_pack_rows_on_a_per_head_norm_with_a_doubled_block(tmp_path):
    file = PACKING / "head_rms_norm.py"
    request = _request(
        file,
        "head_rms_norm_kernel",
        "head_rms_norm",
        {"n_heads": 5, "head_dim": 48, "token_stride": 240},
        {"BLOCK": 128},
    )
    text = _rewritten(request, pack_rows)
    # The per-head reduction is taken along the tile's rows; its per-head result is stored for each row.
    assert "tl.sum(q * q, axis=1, keep_dims=True)" in text
    assert "tl.store(rstd_ptr + token * n_heads + head, rstd, mask=_ip_row[:, None] < n_heads)" in text
    assert "packed_extent" not in text  # n_heads, the grid's size, is already an argument
    original, rewritten = _load(file.read_text(), tmp_path), _load(text, tmp_path)
    for tokens, heads, head_dim in ((3, 5, 48), (2, 3, 20), (2, 9, 100)):
        _same(original, rewritten, "head_rms_norm", torch.randn(tokens, heads, head_dim), torch.randn(head_dim))


# The rows past the end of the last program divide by a zero norm: masked off, but numpy warns.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
def test_pack_rows_on_a_row_kernel_with_a_fixed_block_and_a_grid_lambda(tmp_path):
    file = PACKING / "row_scale.py"
    request = _request(file, "row_scale_kernel", "row_scale", {"n_rows": 7, "n_cols": 96, "stride": 96}, {"BLOCK": 256})
    text = _rewritten(request, pack_rows)
    assert "grid = lambda meta: (triton.cdiv(n_rows, _ip_rows),)" in text
    assert "_ip_fit = min(triton.next_power_of_2(max(n_cols, 1)), 256)" in text
    assert "norm = tl.sum(tl.abs(x), axis=1, keep_dims=True)" in text
    original, rewritten = _load(file.read_text(), tmp_path), _load(text, tmp_path)
    for rows, cols in ((7, 96), (5, 33), (3, 200), (4, 256)):
        _same(original, rewritten, "row_scale", torch.randn(rows, cols), torch.randn(rows))


@pytest.mark.slow
def test_split_row_cuts_liger_dyt_rows_into_tiles(tmp_path):
    file = FIXES / "liger_dyt_forward_before.py"
    scalars = {"x_row_stride": 1536, "y_row_stride": 1536, "n_cols": 1536}
    request = _request(file, "_dyt_fwd_kernel", "liger_dyt_fwd", scalars, {"BLOCK_SIZE": 2048})
    with pytest.raises(NotPackable, match="1536 of 2048 lanes, more than half"):
        pack_rows(request)
    text = _rewritten(request, split_row)
    # 1536 columns fill three 512-lane tiles exactly (75% of the 2048-lane block before).
    assert "offsets = tl.program_id(1) * ROW_TILE + tl.arange(0, ROW_TILE)" in text
    assert "_ip_tile = min(512, BLOCK_SIZE)" in text and "num_warps=min(num_warps, 4)" in text
    original, rewritten = _load(file.read_text(), tmp_path), _load(text, tmp_path)
    for rows, cols in ((3, 1536), (2, 1000), (2, 100)):
        _same(original, rewritten, "liger_dyt_fwd", torch.randn(rows, cols), torch.full((1,), 0.5),
              torch.randn(cols), torch.randn(cols))  # fmt: skip


def test_split_row_picks_the_largest_tile_the_gpu_row_fills():
    # DyT as benchmarked on the GPU: 9216 columns in a 16384-lane block (56%) -> 2048-lane tiles (90%).
    file = FIXES / "liger_dyt_forward_before.py"
    scalars = {"x_row_stride": 9216, "y_row_stride": 9216, "n_cols": 9216}
    _, launcher = split_row(_request(file, "_dyt_fwd_kernel", "liger_dyt_fwd", scalars, {"BLOCK_SIZE": 16384}))
    assert "_ip_tile = min(2048, BLOCK_SIZE)" in launcher


@pytest.mark.parametrize(
    "file,kernel,launcher,scalars,constexprs,recipe,reason",
    [
        (FIXES / "liger_group_norm_forward_before.py", "_group_norm_forward_kernel", "group_norm_forward",
         {"hidden_size": 256, "channels_per_group": 4}, {"BLOCK_SIZE": 256}, pack_rows,
         r"is a loop \(`for i in tl.range\(0, hidden_size, BLOCK_SIZE\):`\)"),
        (FIXES / "tritonbench_mean_reduction_tiles_before.py", "mean_dim_kernel", "mean_dim",
         {"M": 256, "N": 96}, {"BLOCK_M": 8, "BLOCK_N": 8}, pack_rows, r"is a loop \(`for off in range\(0, N"),
        (FIXES / "unsloth_rope_embedding_before.py", "_rope_embedding", "rope_embedding_forward",
         {"seqlen": 16, "head_dim": 64}, {"BACKWARD_PASS": False, "BLOCK_SIZE": 64}, split_row,
         r"block of 64 lanes is no larger than the smallest tile"),
        (PACKING / "head_rms_norm.py", "head_rms_norm_kernel", "head_rms_norm",
         {"n_heads": 5, "head_dim": 48, "token_stride": 240}, {"BLOCK": 128}, split_row,
         r"`tl.sum` combines the lanes of a row"),
        (PACKING / "row_scale.py", "row_scale_kernel", "row_scale",
         {"n_rows": 7, "n_cols": 200, "stride": 200}, {"BLOCK": 256}, pack_rows,
         r"`n_cols` was 200 of 256 lanes, more than half"),
    ],
)  # fmt: skip
def test_the_recipes_say_why_they_decline(file, kernel, launcher, scalars, constexprs, recipe, reason):
    with pytest.raises(NotPackable, match=reason) as declined:
        recipe(_request(file, kernel, launcher, scalars, constexprs))
    assert str(declined.value).count(". ") == 0  # one sentence


UNMASKED = """import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs)
    tl.store(y_ptr + row * n + offs, x, mask=offs < n)


def copy(x, y):
    copy_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=128)
"""

MASKED = UNMASKED.replace("x = tl.load(x_ptr + row * n + offs)", "x = tl.load(x_ptr + row * n + offs, mask=offs < n)")
SHARED_STORE = MASKED.replace("tl.store(y_ptr + row * n + offs,", "tl.store(y_ptr + offs,")
BLOCK_NOT_PASSED = MASKED.replace(", BLOCK=128)", ")")  # as when triton.autotune or a heuristic chooses it


@pytest.mark.parametrize(
    "source,reason",
    [
        (UNMASKED, r"uses the lanes without an `offs < n` mask"),
        (SHARED_STORE, r"the store's address does not depend on the row but its value does"),
        (BLOCK_NOT_PASSED, r"the launch does not pass `BLOCK`"),
    ],
)
def test_pack_rows_declines_what_it_cannot_keep_correct(tmp_path, source, reason):
    file = tmp_path / "copy.py"
    file.write_text(source)
    request = _request(file, "copy_kernel", "copy", {"n": 40}, {"BLOCK": 128}, root=tmp_path)
    with pytest.raises(NotPackable, match=reason):
        pack_rows(request)
