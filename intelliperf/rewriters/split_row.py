"""laneUtilization recipe `split-row-into-tiles`: a row the block fits poorly cut into tiles on a new grid axis.

For an elementwise kernel whose lane bound `n` is more than half of BLOCK but fills it poorly, the
lanes become `tl.program_id(NEW) * TILE + tl.arange(0, TILE)`, with TILE the power of two (256 to
2048) that the recorded `n` fills best, and the launcher caps num_warps at SPLIT_WARPS for the
smaller block (lane_packing.py's docstring has the whole recipe).
"""

from __future__ import annotations

import ast

from .base import RewriteRequest
from .kernel_syntax import tl_name
from .lane_patterns import (
    ELEMENTWISE,
    REDUCTIONS,
    SCANS,
    Lanes,
    Launch,
    NotPackable,
    apply_edits,
    axis_of,
    check_calls,
    check_not_autotuned,
    check_straight_line,
    find_lanes,
    find_launch,
    grid_edits,
    lines_before_edit,
    new_keywords_edit,
    new_params_edit,
    parse_kernel,
    read_grid,
    replace_edit,
)

TILES = (2048, 1024, 512, 256)  # split-row tile sizes, largest first; the experts' DyT uses 1024-2048
GOOD_FILL = 0.9  # a tile the recorded row fills this well is taken over a smaller one
SPLIT_WARPS = 4  # num_warps for a split-row tile (DyT's fix runs its 1024-2048 lane tiles at 4)
TILE_PARAM = "ROW_TILE"


def split_row(request: RewriteRequest) -> tuple[str, str]:
    """The kernel and launcher with each row cut into tiles along a new grid axis (see the module docstring)."""
    kernel = parse_kernel(request)
    check_not_autotuned(kernel)
    check_straight_line(kernel, kernel.fn.body)
    for call in kernel.calls():
        if tl_name(call) in REDUCTIONS | SCANS:
            raise NotPackable(
                f"{kernel.where(call)}: `tl.{tl_name(call)}` combines the lanes of a row, which tiles of the row "
                "in separate programs cannot"
            )
    check_calls(kernel, ELEMENTWISE)
    lanes = find_lanes(kernel)
    tile = _tile(lanes)
    launch = find_launch(kernel)
    block = launch.passed(lanes.block, "an autotuner or heuristic chooses it, so the launcher cannot fit it")
    new_axis = len(read_grid(launch).sizes)
    if new_axis > 2:
        raise NotPackable("the grid already has three axes, so there is none left for the row's tiles")
    if any(axis_of(c) == new_axis for c in kernel.calls() if tl_name(c) in ("program_id", "num_programs")):
        raise NotPackable(f"the kernel already reads grid axis {new_axis}")
    text = request.kernel.source
    kernel_text = apply_edits(
        text,
        [
            new_params_edit(kernel, text, [TILE_PARAM]),
            replace_edit(text, lanes.arange, f"tl.program_id({new_axis}) * {TILE_PARAM} + tl.arange(0, {TILE_PARAM})"),
        ],
    )
    return kernel_text, _split_launcher(launch, lanes, block, tile, new_axis)


def _fill(n: int, tile: int) -> float:
    return n / (-(-n // tile) * tile)


def _tile(lanes: Lanes) -> int:
    """The largest tile the recorded row fills well, else the one it fills best; it must beat the block."""
    n, block = lanes.recorded_n, lanes.recorded_block
    tiles = [t for t in TILES if t < block]
    if not tiles:
        raise NotPackable(f"the block of {block} lanes is no larger than the smallest tile ({TILES[-1]} lanes)")
    tile = next((t for t in tiles if _fill(n, t) >= GOOD_FILL), max(tiles, key=lambda t: _fill(n, t)))
    if _fill(n, tile) < _fill(n, block) + 0.1:
        raise NotPackable(
            f"the lane bound `{ast.unparse(lanes.bound)}` was {n}, which fills the {block}-lane block "
            f"{_fill(n, block):.0%}, and no tile of {TILES[-1]} to {TILES[0]} lanes fills its row much better"
        )
    return tile


def _split_launcher(launch: Launch, lanes: Lanes, block: ast.expr, tile: int, new_axis: int) -> str:
    text = launch.source
    n, size = launch.in_launcher(lanes.bound), ast.unparse(block)
    edits = [
        lines_before_edit(
            text,
            launch.statement,
            [
                f"# intelliperf recipe split-row-into-tiles: each row of `{n}` lanes in tiles of {tile}, "
                "one program per tile",
                f"_ip_tile = min({tile}, {size})",
            ],
        ),
        new_keywords_edit(launch, {TILE_PARAM: "_ip_tile"}),
        *grid_edits(launch, new_axis, f"max(triton.cdiv(min({n}, {size}), _ip_tile), 1)"),
    ]
    warps = next((k for k in launch.call.keywords if k.arg == "num_warps"), None)
    if warps is not None:
        edits.append(replace_edit(text, warps.value, f"min({ast.unparse(warps.value)}, {SPLIT_WARPS})"))
    return apply_edits(text, edits)
