"""laneUtilization recipe `pack-rows`: R rows per program on a block fitted to the row's data.

For a lane bound `n` at most half of BLOCK and one program per row along a grid axis, the lanes
shrink to BLOCK_FIT = next_power_of_2(n) (capped at BLOCK) and each program takes R = BLOCK //
BLOCK_FIT consecutive rows as an [R, BLOCK_FIT] tile; per-row reductions keep their axis, accesses
that depend on the row are masked against the row count, and the grid along the axis becomes
`triton.cdiv(extent, R)` (lane_packing.py's docstring has the whole recipe).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .base import RewriteRequest
from .kernel_syntax import tl_name
from .lane_patterns import (
    ELEMENTWISE,
    REDUCTIONS,
    SCANS,
    Edit,
    Grid,
    Lanes,
    Launch,
    NotPackable,
    ParsedKernel,
    accesses,
    apply_edits,
    axis_of,
    calls_in,
    check_calls,
    check_not_autotuned,
    check_straight_line,
    find_lanes,
    find_launch,
    grid_edits,
    lines_before_edit,
    masked_edits,
    new_keywords_edit,
    new_params_edit,
    next_power_of_2,
    parse_kernel,
    read_grid,
    replace_edit,
)
from .source import node_span

ROWS_PARAM, FIT_PARAM, EXTENT_PARAM = "PACKED_ROWS", "BLOCK_FIT", "packed_extent"


@dataclass
class _Axis:
    number: int
    call: ast.Call  # the one `tl.program_id(number)` of the kernel
    statement: ast.Assign  # the top-level statement that reads it
    extent: str  # the grid's size along the axis, as an expression valid at the launch
    extent_param: str | None  # the kernel parameter that receives it, if any
    loads: int  # loads whose address depends on the index


def pack_rows(request: RewriteRequest) -> tuple[str, str]:
    """The kernel and launcher with R rows per program on a fitted block (see the module docstring)."""
    kernel = parse_kernel(request)
    check_not_autotuned(kernel)
    check_straight_line(kernel, kernel.fn.body)
    check_calls(kernel, ELEMENTWISE | REDUCTIONS | SCANS)
    lanes = find_lanes(kernel)
    if 2 * next_power_of_2(lanes.recorded_n) > lanes.recorded_block:
        raise NotPackable(
            f"the lane bound `{ast.unparse(lanes.bound)}` was {lanes.recorded_n} of {lanes.recorded_block} lanes, "
            "more than half, so fitting the block frees no power of two of rows"
        )
    launch = find_launch(kernel)
    block = launch.passed(lanes.block, "an autotuner or heuristic chooses it, so the launcher cannot fit it")
    axis = _packed_axis(kernel, launch)
    return _packed_kernel(kernel, lanes, axis), _packed_launcher(launch, lanes, block, axis)


def _packed_axis(kernel: ParsedKernel, launch: Launch) -> _Axis:
    grid = read_grid(launch)
    candidates, reasons = [], []
    for number in range(len(grid.sizes)):
        try:
            candidates.append(_axis(kernel, launch, grid, number))
        except NotPackable as exc:
            reasons.append(str(exc))
    if not candidates:
        raise NotPackable("; ".join(reasons) if reasons else "the grid has no axis")
    # Fewest loads that depend on the index: the others are then loaded once for the R rows.
    return min(candidates, key=lambda a: (a.loads, a.extent_param is None, -a.number))


def _axis(kernel: ParsedKernel, launch: Launch, grid: Grid, number: int) -> _Axis:
    reads = [c for c in kernel.calls() if tl_name(c) in ("program_id", "num_programs") and axis_of(c) == number]
    ids = [c for c in reads if tl_name(c) == "program_id"]
    if len(ids) != 1 or len(reads) != 1:
        raise NotPackable(f"axis {number} is not read once as `tl.program_id({number})`")
    statement = next(s for s in kernel.fn.body if any(c is ids[0] for c in calls_in(s)))
    if not isinstance(statement, ast.Assign):
        raise NotPackable(f"{kernel.where(statement)}: `tl.program_id({number})` is not read in a top-level assignment")
    written = grid.elements[number]
    if any(isinstance(n, ast.Name) and n.id not in _launcher_names(launch) for n in ast.walk(written)):
        raise NotPackable(f"the grid size along axis {number} (`{ast.unparse(written)}`) reads the grid's meta")
    param = next((p for p, a in launch.arguments.items() if ast.unparse(a) == ast.unparse(written)), None)
    names = {t.id for t in statement.targets if isinstance(t, ast.Name)}
    loads = [c for c in accesses(kernel) if tl_name(c) == "load" and kernel.depends(c, names)]
    return _Axis(number, ids[0], statement, grid.sizes[number], param, len(loads))


def _launcher_names(launch: Launch) -> set[str]:
    """Names a grid lambda does not bind (its meta argument is the one a size may not read)."""
    lambdas = [n for n in ast.walk(launch.tree) if isinstance(n, ast.Lambda)]
    bound = {a.arg for fn in lambdas for a in fn.args.args}
    return {n.id for n in ast.walk(launch.tree) if isinstance(n, ast.Name)} - bound


def _packed_kernel(kernel: ParsedKernel, lanes: Lanes, axis: _Axis) -> str:
    text = kernel.request.kernel.source
    extent = axis.extent_param or EXTENT_PARAM
    added = [ROWS_PARAM, FIT_PARAM] + ([] if axis.extent_param else [EXTENT_PARAM])
    edits = [
        new_params_edit(kernel, text, added),
        lines_before_edit(
            text,
            axis.statement,
            [
                f"# intelliperf recipe pack-rows: {ROWS_PARAM} rows of axis {axis.number} per program, "
                f"each on a block of {FIT_PARAM} lanes fitted to `{ast.unparse(lanes.bound)}`",
                f"_ip_row = tl.program_id({axis.number}) * {ROWS_PARAM} + tl.arange(0, {ROWS_PARAM})",
            ],
        ),
        replace_edit(text, axis.call, "_ip_row[:, None]"),
        replace_edit(text, lanes.arange, f"tl.arange(0, {FIT_PARAM})[None, :]"),
    ]
    names = {t.id for t in axis.statement.targets if isinstance(t, ast.Name)}
    for access in accesses(kernel):
        if kernel.depends(access, names):
            edits += masked_edits(text, access, f"_ip_row[:, None] < {extent}")
    for access in accesses(kernel):
        _check_store_has_row(kernel, access, names)
    edits += [e for c in kernel.calls() if tl_name(c) in REDUCTIONS | SCANS for e in _along_rows(text, c)]
    return apply_edits(text, edits)


def _check_store_has_row(kernel: ParsedKernel, access: ast.Call, rows: set[str]) -> None:
    if tl_name(access) != "store":
        return
    pointer = access.args[0] if access.args else None
    if not kernel.depends(pointer, rows) and kernel.depends(access, rows):
        raise NotPackable(
            f"{kernel.where(access)}: the store's address does not depend on the row but its value does, "
            "so the rows of one program would race for it"
        )


def _along_rows(text: str, call: ast.Call) -> list[Edit]:
    """A reduction or scan of a 1-D row, taken along axis 1 of the [R, BLOCK_FIT] tile (reductions
    keep the axis, so a per-row result broadcasts as the scalar did)."""
    if len(call.args) > 2:
        raise NotPackable(f"`{ast.unparse(call)}` passes more positional arguments than the input and the axis")
    axis = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    edits: list[Edit] = []
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value in (0, -1, None)):
        raise NotPackable(f"`{ast.unparse(call)}` reduces along `{ast.unparse(axis)}`, not the row's one axis")
    if axis is not None:
        edits.append(replace_edit(text, axis, "1"))
    extra = ([] if axis is not None else ["axis=1"]) + (["keep_dims=True"] if tl_name(call) in REDUCTIONS else [])
    keep = next((k for k in call.keywords if k.arg == "keep_dims"), None)
    if keep is not None:
        edits.append(replace_edit(text, keep.value, "True"))
        extra = [e for e in extra if not e.startswith("keep_dims")]
    if extra:
        stop = node_span(text, call)[1] - 1
        edits.append((stop, stop, "".join(f", {e}" for e in extra)))
    return edits


def _packed_launcher(launch: Launch, lanes: Lanes, block: ast.expr, axis: _Axis) -> str:
    text = launch.source
    n = launch.in_launcher(lanes.bound)
    keywords = {ROWS_PARAM: "_ip_rows", FIT_PARAM: "_ip_fit"}
    if axis.extent_param is None:
        keywords[EXTENT_PARAM] = axis.extent
    edits = [
        lines_before_edit(
            text,
            launch.statement,
            [
                f"# intelliperf recipe pack-rows: lanes fitted to `{n}`, the freed ones take more rows",
                f"_ip_fit = min(triton.next_power_of_2(max({n}, 1)), {ast.unparse(block)})",
                f"_ip_rows = {ast.unparse(block)} // _ip_fit",
            ],
        ),
        new_keywords_edit(launch, keywords),
        *grid_edits(launch, axis.number, f"triton.cdiv({axis.extent}, _ip_rows)"),
    ]
    return apply_edits(text, edits)
