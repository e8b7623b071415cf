"""The text edits of the recipe tile-strided-reduction (strided_reduction.py): the launcher's grid
divided by the tile (the extent passed, block sizes lowered), and the kernel's program index, blocks,
reductions and masks widened to [BLOCK, TILE] tiles.
"""

from __future__ import annotations

import ast
import textwrap

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .kernel_syntax import append_item, fresh_name, passed_as, tl_name
from .source import grid_of, launch_call, lines_of, node_span, replace_spans
from .strided_reduction_shape import (
    REDUCTIONS,
    SCANS,
    SHAPED,
    NotStridedReduction,
    StridedShape,
    assigned_names,
    axis_argument,
    constant_dtype,
    literal_value,
    names_read,
    parse_function,
    shape_items,
    tl_calls,
)

Edit = tuple[int, int, int, str]  # (start, stop, rank, text) in the kernel's characters; rank orders equal starts


# --- the launcher: the grid divided by the tile, the extent passed, block sizes lowered ---


def _grid_size(launcher: ast.FunctionDef, call: ast.Call, axis: int) -> tuple[ast.expr, ast.stmt]:
    """The grid's element along `axis`, and the statement that holds it."""
    written = grid = grid_of(call)
    holder: ast.stmt | None = None
    if isinstance(grid, ast.Name):
        holder = next(
            (s for s in ast.walk(launcher) if isinstance(s, ast.Assign) and assigned_names(s) == {grid.id}),
            None,
        )
        grid = holder.value if isinstance(holder, ast.Assign) else grid
    meta: set[str] = set()
    if isinstance(grid, ast.Lambda):
        meta = {a.arg for a in grid.args.args}
        grid = grid.body
    if not isinstance(grid, ast.Tuple) or axis >= len(grid.elts) or names_read(grid.elts[axis]) & meta:
        raise NotStridedReduction(
            f"the grid `{ast.unparse(written)}` is not a tuple whose axis {axis} the recipe can divide by the tile"
        )
    statement = holder or next(
        s
        for s in ast.walk(launcher)
        if isinstance(s, ast.stmt) and not hasattr(s, "body") and s.lineno <= call.lineno <= last_line(s)
    )
    return grid.elts[axis], statement


def launcher_text(
    request: RewriteRequest, kernel: ast.FunctionDef, axis: int, tile: int, lowered: dict[str, int]
) -> tuple[str, str, str | None]:
    """The launcher's new text, the kernel parameter that holds the extent, and that parameter's name
    when the kernel gets it as a new one."""
    assert request.launcher is not None
    source = textwrap.dedent(request.launcher.source)
    launcher = parse_function(source)
    calls = [n for n in ast.walk(launcher) if isinstance(n, ast.Call) and launch_call(n, request.kernel.name) is n]
    if len(calls) != 1:
        raise NotStridedReduction(
            f"the launcher launches {request.kernel.name}[grid](...) {len(calls)} times; the recipe rewrites one launch"
        )
    call = calls[0]
    size, statement = _grid_size(launcher, call, axis)
    params = [a.arg for a in kernel.args.args]
    extent = passed_as(call, params, size)
    new_param = None
    lines = source.splitlines()
    if extent is None:
        if kernel.args.defaults or kernel.args.vararg or kernel.args.kwonlyargs or kernel.args.kwarg:
            raise NotStridedReduction(
                f"the grid size `{ast.unparse(size)}` is not passed to the kernel, and its signature takes no "
                "new parameter"
            )
        taken = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)} | set(params)
        extent = new_param = fresh_name(taken, size.id if isinstance(size, ast.Name) else "n_columns")
        items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
        if not items:
            raise NotStridedReduction("the launch passes no arguments to add the grid size to")
        append_item(lines, max(items, key=lambda n: (n.lineno, n.col_offset)), f"{new_param}={ast.unparse(size)}")
    edits: list[tuple[ast.expr, str]] = [(size, f"triton.cdiv({ast.unparse(size)}, {tile})")]
    for name, limit in sorted(lowered.items()):
        keyword = next((k for k in call.keywords if k.arg == name), None)
        if keyword is None:
            raise NotStridedReduction(
                f"`{name}` is not a keyword argument of the launch, so the launcher cannot cap the tile at {limit} rows"
            )
        edits.append((keyword.value, f"min({ast.unparse(keyword.value)}, {limit})"))
    text = replace_spans("\n".join(lines) + "\n", edits).splitlines()
    indent = indent_of(text[statement.lineno - 1])
    text.insert(statement.lineno - 1, f"{indent}# intelliperf recipe tile-strided-reduction: {tile} columns a program")
    return "\n".join(text) + "\n", extent, new_param


# --- the kernel's edits ---


def _span(source: str, node: ast.expr | ast.keyword) -> tuple[int, int]:
    return node_span(source, node)


def _after_last_item(source: str, call: ast.Call) -> int:
    """Where a new argument goes: just past the last argument or keyword."""
    items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    return _span(source, max(items, key=lambda n: (n.lineno, n.col_offset)))[1]


def _index_edits(source: str, shape: StridedShape, tile: int) -> list[Edit]:
    start, stop = _span(source, shape.definition.value)
    return [(start, start, 1, "("), (stop, stop, 1, f" * {tile} + tl.arange(0, {tile}))[None, :]")]


def _shape_edits(source: str, shape: StridedShape, tile: int) -> list[Edit]:
    """Each arange a column of the tile; each block shape with a column axis, a tile for widened accumulators."""
    edits: list[Edit] = []
    for call in tl_calls(shape.fn):
        name = tl_name(call)
        if name == "arange":
            stop = _span(source, call)[1]
            edits.append((stop, stop, 0, "[:, None]"))
        elif name in SHAPED:
            items = shape_items(call)
            rows = ast.unparse(items[0]) if items else "1"
            columns = tile if id(call) in shape.widened else 1
            if items or columns > 1:
                node = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "shape")
                edits.append((*_span(source, node), 0, f"({rows}, {columns})"))
    for stmt in ast.walk(shape.fn):
        if isinstance(stmt, ast.Assign) and id(stmt.value) in shape.widened and tl_name(stmt.value) is None:
            start, stop = _span(source, stmt.value)
            value = f"tl.full((1, {tile}), {source[start:stop]}, {constant_dtype(stmt.value)})"
            edits.append((start, stop, 0, value))
    return edits


def _reduction_edits(source: str, fn: ast.FunctionDef) -> list[Edit]:
    """Reductions and scans along axis 0, the strided axis; reductions keep it, one result per column."""
    edits: list[Edit] = []
    for call in tl_calls(fn):
        name = tl_name(call)
        if name not in REDUCTIONS | SCANS:
            continue
        axis = axis_argument(call)
        added = "" if name in SCANS else ", keep_dims=True"
        if axis is None:
            added = ", axis=0" + added
        elif literal_value(axis) != 0:
            edits.append((*_span(source, axis), 0, "0"))
        if added:
            where = _after_last_item(source, call)
            edits.append((where, where, 1, added))
    return edits


def _mask_edits(source: str, shape: StridedShape, bound: str) -> list[Edit]:
    """AND `bound` into the mask of each access the program index reaches (or give it one)."""
    edits: list[Edit] = []
    for call in tl_calls(shape.fn, "load") + tl_calls(shape.fn, "store"):
        if not (call.args and names_read(call.args[0]) & shape.dependent):
            continue
        position = 2 if tl_name(call) == "store" else 1
        mask = call.args[position] if len(call.args) > position else None
        mask = mask or next((k.value for k in call.keywords if k.arg == "mask"), None)
        if mask is None:
            where = _after_last_item(source, call)
            edits.append((where, where, 1, f", mask={bound}"))
        elif isinstance(mask, (ast.Name, ast.Call, ast.Attribute)):
            stop = _span(source, mask)[1]
            edits.append((stop, stop, 1, f" & ({bound})"))
        else:
            start, stop = _span(source, mask)
            edits += [(start, start, 1, "("), (stop, stop, 1, f") & ({bound})")]
    return edits


def kernel_text(source: str, shape: StridedShape, tile: int, extent: str, new_param: str | None) -> str:
    edits = _index_edits(source, shape, tile) + _shape_edits(source, shape, tile)
    edits += _reduction_edits(source, shape.fn) + _mask_edits(source, shape, f"{shape.index} < {extent}")
    # right to left; at one position a replacement goes before the insertions there, and of those
    # the inner node's text (rank 0) ends up first
    for start, stop, _, text in sorted(edits, key=lambda e: (e[0], e[1] > e[0], e[2]), reverse=True):
        source = source[:start] + text + source[stop:]
    lines = lines_of(source)
    indent = indent_of(lines[shape.definition.lineno - 1])
    lines.insert(
        shape.definition.lineno - 1,
        f"{indent}# intelliperf recipe tile-strided-reduction: {tile} consecutive `{shape.index}` a program, "
        f"[BLOCK, {tile}] tiles",
    )
    if new_param is not None:  # the signature's lines are above every edit
        append_item(lines, shape.fn.args.args[-1], new_param)
    return "\n".join(lines) + "\n"
