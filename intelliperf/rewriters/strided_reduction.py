"""memoryAccess recipe `tile-strided-reduction`: reduce or scan a strided axis a tile of columns at a time.

The textbook case walks one column (or any axis whose elements are `stride` apart) with a loop
and reduces or scans along it: `col = tl.program_id(0)`, then `for start in range(0, M, BLOCK)`
loads `X + rows * stride + col` with `rows = start + tl.arange(0, BLOCK)`, accumulates it
(`acc += x`, `acc = tl.maximum(acc, x)`, `total += tl.sum(x)`) and stores `tl.sum(acc)` at
`Out + col`. Every lane of a warp reads another row, one element per 32-byte sector. The recipe
gives each program TILE consecutive columns: the program index becomes the `[1, TILE]` vector
`pid * TILE + tl.arange(0, TILE)`, every `tl.arange` a `[BLOCK, 1]` one, so each load along the
walk is a `[BLOCK, TILE]` block whose rows are contiguous and coalesce. Each column of the tile
computes what its program computed before:

* accumulators the loop carries (`tl.zeros`, `tl.full` or a constant before the loop) widen to
  `[BLOCK, TILE]` (a vector accumulator) or `[1, TILE]` (a scalar one);
* `tl.sum/max/min` reduce along axis 0 with `keep_dims=True`, one result per column;
* `tl.cumsum/cumprod` scan along axis 0, so a chunked scan with a carried running total works;
* loads and stores that use the program index are masked against its extent.

The launcher's grid along that axis becomes `triton.cdiv(extent, TILE)`; the extent is the
kernel argument the launch passes the grid size to, or a new keyword parameter when it passes
none. When a `[BLOCK, TILE]` tile would be too large the launcher passes a smaller BLOCK, which
only changes how many chunks the loop takes.

Declines, each in one sentence: no launcher to rewrite; statements other than assignments,
`tl.store` and top-level `range` loops (branches, early returns, nested loops); operations other
than elementwise ones, `tl.sum/max/min` and `tl.cumsum/cumprod` (atomics, dots, reshapes); 2-D
blocks already; no loop; no `i = tl.program_id(AXIS)` added with stride 1 to an address the loop
walks; loop bounds that depend on the program index; a carried value that is not an accumulator
the recipe can widen; a store that every program of the tile would write; a grid it cannot read;
a block too large for the tile that is not a loop's chunk size the launch passes by keyword.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .row_partials import _append_item, _fresh, _passed_as
from .source import grid_of, launch_call, lines_of, node_span, replace_spans
from .tiling import ELEMENTWISE
from .tiling import _elem_bytes as _flagged_elem_bytes

TILE_BYTES = 128  # a row of the tile is one full cache line: 32 float32 or 64 float16 columns
# A [BLOCK, TILE] tile spread over a program's 128 threads (4 warps) holds BLOCK * TILE / 128
# elements per thread for each tile-wide value; a loaded chunk and a vector accumulator are two
# such values, so 8192 elements keep them at 64 registers each, well inside the 255 per thread.
MAX_TILE_ELEMENTS = 8192
REDUCTIONS = {"sum", "max", "min"}
SCANS = {"cumsum", "cumprod"}
SHAPED = {"zeros", "full"}
WIDENABLE = ELEMENTWISE | REDUCTIONS | SCANS | SHAPED | {"range"}
ELEMENT_BYTES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2}
ELEMENT_BYTES |= {"int8": 1, "uint8": 1, "bool": 1}

Edit = tuple[int, int, int, str]  # (start, stop, rank, text) in the kernel's characters; rank orders equal starts


class NotStridedReduction(Exception):
    """The kernel is not the strided reduction the recipe rewrites (the message says why)."""


@dataclass
class _Shape:
    """What the recipe learned about the kernel before editing it."""

    fn: ast.FunctionDef
    index: str  # the name bound to the tiled program index
    axis: int
    definition: ast.Assign
    dependent: set[str]  # names whose value depends on the program index
    widened: set[int] = field(default_factory=set)  # ids of accumulators' initial values to widen


def tile_strided_reduction(request: RewriteRequest) -> tuple[str, str | None]:
    """The kernel and launcher with TILE columns per program (see the module docstring)."""
    if request.launcher is None:
        raise NotStridedReduction(
            "the launch cannot be rewritten (it is outside the project), and the grid must shrink"
        )
    fn = _function(request.kernel.source)
    first = request.kernel.line
    _check_calls(fn)
    _check_statements(fn, first)
    shape = _tiled_index(fn, first)
    _check_loops(shape, first)
    _check_stores(shape, first)
    shape.widened = _widened_accumulators(shape, first)
    tile = max(TILE_BYTES // _elem_bytes(request, shape), 16)
    lowered = _lowered_blocks(request, fn, tile)
    launcher, extent, new_param = _launcher_text(request, fn, shape.axis, tile, lowered)
    return _kernel_text(request.kernel.source, shape, tile, extent, new_param), launcher


def _function(source: str) -> ast.FunctionDef:
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotStridedReduction("the kernel or launcher is not a plain function")
    return fn


def _tl_name(node: ast.AST) -> str | None:
    """`x` of a `tl.x(...)` call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if ast.unparse(node.func.value) in ("tl", "triton.language"):
            return node.func.attr
    return None


def _calls(node: ast.AST, name: str | None = None) -> list[ast.Call]:
    """The `tl.<name>` calls under `node` (all calls when `name` is None)."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and (name is None or _tl_name(n) == name)]


def _loops(fn: ast.FunctionDef) -> list[ast.For]:
    return [s for s in fn.body if isinstance(s, ast.For)]


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _targets(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.Assign):
        return {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, (ast.AugAssign, ast.For)) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


# --- the shape of the kernel: straight-line statements and range loops of 1-D blocks ---


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _is_simple(stmt: ast.stmt) -> bool:
    """`name = expression`, `name op= expression` or a `tl.store(...)` statement."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    if isinstance(stmt, ast.AugAssign):
        return isinstance(stmt.target, ast.Name)
    return isinstance(stmt, ast.Expr) and _tl_name(stmt.value) == "store"


def _is_range_loop(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.For) or stmt.orelse or not isinstance(stmt.target, ast.Name):
        return False
    loop = stmt.iter
    return isinstance(loop, ast.Call) and (_tl_name(loop) == "range" or ast.unparse(loop.func) == "range")


def _check_statements(fn: ast.FunctionDef, first: int) -> None:
    for stmt in fn.body:
        if _is_docstring(stmt) or _is_simple(stmt):
            continue
        if not _is_range_loop(stmt):
            raise NotStridedReduction(
                f"line {first + stmt.lineno - 1} is not an assignment, a tl.store or a loop over range(...), "
                "the only statements the recipe rewrites"
            )
        assert isinstance(stmt, ast.For)
        for inner in stmt.body:
            if not _is_simple(inner):
                what = "a nested loop" if isinstance(inner, (ast.For, ast.While)) else "not an assignment or a tl.store"
                raise NotStridedReduction(f"line {first + inner.lineno - 1} inside the loop is {what}")
    if not _loops(fn):
        raise NotStridedReduction(
            "the kernel has no loop along the strided axis (tile-program-axis rewrites straight-line kernels)"
        )


def _check_calls(fn: ast.FunctionDef) -> None:
    """Only operations that act on each column of a tile as they acted on the program's one column."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript):
            raise NotStridedReduction(f"the kernel already works on 2-D blocks (`{ast.unparse(node)}`)")
        if not isinstance(node, ast.Call):
            continue
        name = _tl_name(node)
        method = isinstance(node.func, ast.Attribute) and node.func.attr == "to" and name is None
        builtin = ast.unparse(node.func) in ("range", "float")
        if not (method or builtin or name in WIDENABLE):
            raise NotStridedReduction(
                f"`{ast.unparse(node.func)}` is not an elementwise operation, reduction or scan the recipe can widen"
            )
        if name in SHAPED and len(_shape_items(node)) > 1:
            raise NotStridedReduction(f"the kernel already works on 2-D blocks (`{ast.unparse(node)}`)")
        if name in REDUCTIONS | SCANS:
            _check_axis(node)


def _shape_items(call: ast.Call) -> list[ast.expr]:
    shape = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
    if not isinstance(shape, (ast.Tuple, ast.List)):
        raise NotStridedReduction(f"the shape of `{ast.unparse(call)}` is not written out as a tuple or a list")
    return shape.elts


def _axis_of(call: ast.Call) -> ast.expr | None:
    return call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)


def _literal(node: ast.expr) -> object:
    """The value of a literal (`0`, `-1`, `None`), else a marker no literal equals."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return ast.unparse(node)


def _check_axis(call: ast.Call) -> None:
    extra = [k.arg for k in call.keywords if k.arg not in ("axis", "reverse")]
    if len(call.args) > 2 or extra:
        raise NotStridedReduction(f"`{ast.unparse(call)}` takes arguments beyond the value and the axis")
    axis = _axis_of(call)
    if axis is not None and _literal(axis) not in (0, -1, None):
        raise NotStridedReduction(f"`{ast.unparse(call)}` does not reduce or scan its block's only axis")


# --- the program index, and what depends on it ---


def _program_axis(call: ast.AST) -> int | None:
    if _tl_name(call) not in ("program_id", "num_programs"):
        return None
    assert isinstance(call, ast.Call)
    given = call.args or [k.value for k in call.keywords if k.arg == "axis"]
    value = given[0].value if given and isinstance(given[0], ast.Constant) else None
    return value if isinstance(value, int) else -1


def _dependent_on(fn: ast.FunctionDef, names: set[str]) -> set[str]:
    """`names` and every name whose value depends on them, through assignments in any order."""
    dependent = set(names)
    changed = True
    while changed:
        changed = False
        for stmt in ast.walk(fn):
            if isinstance(stmt, (ast.Assign, ast.AugAssign)) and _reads(stmt.value) & dependent:
                new = _targets(stmt) - dependent
                dependent |= new
                changed = changed or bool(new)
    return dependent


def _address_terms(fn: ast.FunctionDef, address: ast.expr) -> list[ast.expr]:
    """The operands of the address's chain of additions, through names assigned once to a sum."""
    counts: dict[str, int] = {}
    sums: dict[str, ast.expr] = {}
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.stmt):
            for name in _targets(stmt):
                counts[name] = counts.get(name, 0) + 1
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
            sums |= {name: stmt.value for name in _targets(stmt)}

    def terms(expr: ast.expr, seen: frozenset[str]) -> list[ast.expr]:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return terms(expr.left, seen) + terms(expr.right, seen)
        if isinstance(expr, ast.Name) and counts.get(expr.id) == 1 and expr.id in sums and expr.id not in seen:
            return terms(sums[expr.id], seen | {expr.id})
        return [expr]

    return terms(address, frozenset())


def _walks_a_column(fn: ast.FunctionDef, index: str) -> bool:
    """A load in a loop adds `index` with stride 1 to an address that moves with the loop."""
    for loop in _loops(fn):
        assert isinstance(loop.target, ast.Name)
        moving = _dependent_on(fn, {loop.target.id})
        for load in _calls(loop, "load"):
            address = load.args[0] if load.args else None
            if address is None or not _reads(address) & moving:
                continue
            if any(isinstance(t, ast.Name) and t.id == index for t in _address_terms(fn, address)):
                return True
    return False


def _tiled_index(fn: ast.FunctionDef, first: int) -> _Shape:
    """The name bound to a bare `tl.program_id(AXIS)` that a loop's load adds with stride 1."""
    found = [
        (s, s.targets[0].id, _program_axis(s.value))
        for s in fn.body
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and _tl_name(s.value) == "program_id"
    ]
    for definition, index, axis in found:
        if axis is None or axis < 0 or not _walks_a_column(fn, index):
            continue
        again = [c for c in _calls(fn) if _program_axis(c) == axis and c is not definition.value]
        if again:
            raise NotStridedReduction(
                f"`{ast.unparse(again[0])}` at line {first + again[0].lineno - 1} reads the program axis again, "
                "which would keep the untiled index"
            )
        return _Shape(fn, index, axis, definition, _dependent_on(fn, {index}))
    if not found:
        raise NotStridedReduction("no `i = tl.program_id(AXIS)` names a program index the recipe could tile")
    raise NotStridedReduction(
        "the program index is not added with stride 1 to an address that a loop's loads walk along the strided axis"
    )


def _check_loops(shape: _Shape, first: int) -> None:
    for loop in _loops(shape.fn):
        if _reads(loop.iter) & shape.dependent:
            raise NotStridedReduction(
                f"the bounds of the loop at line {first + loop.lineno - 1} depend on the program index, "
                "so the columns of a tile would need different trip counts"
            )


def _check_stores(shape: _Shape, first: int) -> None:
    for store in _calls(shape.fn, "store"):
        if not (store.args and _reads(store.args[0]) & shape.dependent):
            raise NotStridedReduction(
                f"the store at line {first + store.lineno - 1} does not use the program index, "
                "so every program of a tile would write the same address"
            )


# --- loop-carried accumulators ---


def _widened_accumulators(shape: _Shape, first: int) -> set[int]:
    """ids of the initial values of carried accumulators that start the same for every column but
    become one value per column in the loop: they must start as a tile."""
    widened: set[int] = set()
    for position, loop in enumerate(shape.fn.body):
        if not isinstance(loop, ast.For):
            continue
        before: dict[str, ast.expr | None] = {a.arg: None for a in shape.fn.args.args}
        for stmt in shape.fn.body[:position]:
            if isinstance(stmt, ast.Assign):
                before |= {name: stmt.value for name in _targets(stmt)}
        assigned = {name for stmt in loop.body for name in _targets(stmt)}
        for name in sorted(assigned & set(before) & shape.dependent):
            init = before[name]
            if init is not None and _reads(init) & shape.dependent:
                continue  # already one value per column
            if init is None or not _widenable(init):
                raise NotStridedReduction(
                    f"the loop at line {first + loop.lineno - 1} carries `{name}`, which is not a reduction "
                    "accumulator that starts as a tl.zeros or tl.full block or a constant"
                )
            widened.add(id(init))
    return widened


def _constant_text(expr: ast.expr) -> str | None:
    """The dtype of a numeric constant (`0.0`, `-1`, `float("-inf")`), else None."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _constant_text(expr.operand)
    if isinstance(expr, ast.Constant) and not isinstance(expr.value, bool):
        if isinstance(expr.value, float):
            return "tl.float32"
        if isinstance(expr.value, int):
            return "tl.int32"
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "float":
        return "tl.float32"
    return None


def _widenable(init: ast.expr) -> bool:
    return _tl_name(init) in SHAPED or _constant_text(init) is not None


# --- the block size: lowered in the launcher when the tile would be too large ---


def _arange_length(call: ast.Call) -> ast.expr | None:
    return call.args[1] if len(call.args) == 2 and ast.unparse(call.args[0]) == "0" else None


def _step(loop: ast.For) -> str | None:
    """The step of a `range(start, stop, step)` loop, as written."""
    bounds = loop.iter.args if isinstance(loop.iter, ast.Call) else []
    return ast.unparse(bounds[2]) if len(bounds) == 3 else None


def _only_chunks_the_loop(fn: ast.FunctionDef, name: str) -> bool:
    """`name` is only the loops' step, the aranges' length and the blocks' shape, each arange in a
    loop that steps by it: a smaller value takes more chunks and computes the same values."""
    stepped = [loop for loop in _loops(fn) if _step(loop) == name]
    inside = {id(c) for loop in stepped for c in _calls(loop, "arange")}
    allowed: set[int] = set()
    for call in _calls(fn):
        length = _arange_length(call) if _tl_name(call) == "arange" else None
        if length is not None and ast.unparse(length) == name:
            if id(call) not in inside:
                return False
            allowed.add(id(length))
        if _tl_name(call) in SHAPED:
            allowed |= {id(d) for d in _shape_items(call) if ast.unparse(d) == name}
    for loop in stepped:
        assert isinstance(loop.iter, ast.Call)
        allowed.add(id(loop.iter.args[2]))
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
    return all(id(n) in allowed for n in uses)


def _lowered_blocks(request: RewriteRequest, fn: ast.FunctionDef, tile: int) -> dict[str, int]:
    """{constexpr: its new largest value} for block sizes whose tile would pass MAX_TILE_ELEMENTS."""
    limit = MAX_TILE_ELEMENTS // tile
    known = request.constexprs() | _launch_literals(request)
    lowered: dict[str, int] = {}
    for call in _calls(fn, "arange"):
        length = _arange_length(call)
        if length is None:
            raise NotStridedReduction(f"`{ast.unparse(call)}` does not start at 0")
        value = length.value if isinstance(length, ast.Constant) else known.get(ast.unparse(length))
        if isinstance(value, int) and value <= limit:
            continue
        name = ast.unparse(length)
        if not (isinstance(length, ast.Name) and _only_chunks_the_loop(fn, name)):
            size = (
                f"is {value * tile} elements (more than {MAX_TILE_ELEMENTS})"
                if isinstance(value, int)
                else f"may be more than {MAX_TILE_ELEMENTS} elements"
            )
            raise NotStridedReduction(
                f"a [{name}, {tile}] tile {size}, and `{name}` is not a loop's chunk size the launcher could lower"
            )
        lowered[name] = limit
    return lowered


def _launch_literals(request: RewriteRequest) -> dict[str, object]:
    """The launch's keyword arguments written as integer literals (`BLOCK=512`)."""
    assert request.launcher is not None
    call = launch_call(ast.parse(textwrap.dedent(request.launcher.source)), request.kernel.name)
    if call is None:
        return {}
    return {k.arg: k.value.value for k in call.keywords if k.arg and isinstance(k.value, ast.Constant)}


def _elem_bytes(request: RewriteRequest, shape: _Shape) -> int:
    """The element size of the buffers the strided loads read, from the recorded launch, else the traced sites."""
    args = request.profile.signatures[0].args if request.profile.signatures else []
    dtypes = {a.name: (a.dtype or "").removeprefix("torch.") for a in args if a.kind == "tensor"}
    sizes = []
    for load in _calls(shape.fn, "load"):
        terms = _address_terms(shape.fn, load.args[0]) if load.args else []
        names = {t.id for t in terms if isinstance(t, ast.Name)}
        if shape.index in names:
            sizes += [ELEMENT_BYTES[dtypes[n]] for n in names if dtypes.get(n) in ELEMENT_BYTES]
    return min(sizes) if sizes else _flagged_elem_bytes(request)


# --- the launcher: the grid divided by the tile, the extent passed, block sizes lowered ---


def _grid_size(launcher: ast.FunctionDef, call: ast.Call, axis: int) -> tuple[ast.expr, ast.stmt]:
    """The grid's element along `axis`, and the statement that holds it."""
    written = grid = grid_of(call)
    holder: ast.stmt | None = None
    if isinstance(grid, ast.Name):
        holder = next(
            (s for s in ast.walk(launcher) if isinstance(s, ast.Assign) and _targets(s) == {grid.id}),
            None,
        )
        grid = holder.value if isinstance(holder, ast.Assign) else grid
    meta: set[str] = set()
    if isinstance(grid, ast.Lambda):
        meta = {a.arg for a in grid.args.args}
        grid = grid.body
    if not isinstance(grid, ast.Tuple) or axis >= len(grid.elts) or _reads(grid.elts[axis]) & meta:
        raise NotStridedReduction(
            f"the grid `{ast.unparse(written)}` is not a tuple whose axis {axis} the recipe can divide by the tile"
        )
    statement = holder or next(
        s
        for s in ast.walk(launcher)
        if isinstance(s, ast.stmt) and not hasattr(s, "body") and s.lineno <= call.lineno <= last_line(s)
    )
    return grid.elts[axis], statement


def _launcher_text(
    request: RewriteRequest, kernel: ast.FunctionDef, axis: int, tile: int, lowered: dict[str, int]
) -> tuple[str, str, str | None]:
    """The launcher's new text, the kernel parameter that holds the extent, and that parameter's name
    when the kernel gets it as a new one."""
    assert request.launcher is not None
    source = textwrap.dedent(request.launcher.source)
    launcher = _function(source)
    calls = [n for n in ast.walk(launcher) if isinstance(n, ast.Call) and launch_call(n, request.kernel.name) is n]
    if len(calls) != 1:
        raise NotStridedReduction(
            f"the launcher launches {request.kernel.name}[grid](...) {len(calls)} times; the recipe rewrites one launch"
        )
    call = calls[0]
    size, statement = _grid_size(launcher, call, axis)
    params = [a.arg for a in kernel.args.args]
    extent = _passed_as(call, params, size)
    new_param = None
    lines = source.splitlines()
    if extent is None:
        if kernel.args.defaults or kernel.args.vararg or kernel.args.kwonlyargs or kernel.args.kwarg:
            raise NotStridedReduction(
                f"the grid size `{ast.unparse(size)}` is not passed to the kernel, and its signature takes no "
                "new parameter"
            )
        taken = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)} | set(params)
        extent = new_param = _fresh(taken, size.id if isinstance(size, ast.Name) else "n_columns")
        items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
        if not items:
            raise NotStridedReduction("the launch passes no arguments to add the grid size to")
        _append_item(lines, max(items, key=lambda n: (n.lineno, n.col_offset)), f"{new_param}={ast.unparse(size)}")
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


def _index_edits(source: str, shape: _Shape, tile: int) -> list[Edit]:
    start, stop = _span(source, shape.definition.value)
    return [(start, start, 1, "("), (stop, stop, 1, f" * {tile} + tl.arange(0, {tile}))[None, :]")]


def _shape_edits(source: str, shape: _Shape, tile: int) -> list[Edit]:
    """Each arange a column of the tile; each block shape with a column axis, a tile for widened accumulators."""
    edits: list[Edit] = []
    for call in _calls(shape.fn):
        name = _tl_name(call)
        if name == "arange":
            stop = _span(source, call)[1]
            edits.append((stop, stop, 0, "[:, None]"))
        elif name in SHAPED:
            items = _shape_items(call)
            rows = ast.unparse(items[0]) if items else "1"
            columns = tile if id(call) in shape.widened else 1
            if items or columns > 1:
                node = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "shape")
                edits.append((*_span(source, node), 0, f"({rows}, {columns})"))
    for stmt in ast.walk(shape.fn):
        if isinstance(stmt, ast.Assign) and id(stmt.value) in shape.widened and _tl_name(stmt.value) is None:
            start, stop = _span(source, stmt.value)
            value = f"tl.full((1, {tile}), {source[start:stop]}, {_constant_text(stmt.value)})"
            edits.append((start, stop, 0, value))
    return edits


def _reduction_edits(source: str, fn: ast.FunctionDef) -> list[Edit]:
    """Reductions and scans along axis 0, the strided axis; reductions keep it, one result per column."""
    edits: list[Edit] = []
    for call in _calls(fn):
        name = _tl_name(call)
        if name not in REDUCTIONS | SCANS:
            continue
        axis = _axis_of(call)
        added = "" if name in SCANS else ", keep_dims=True"
        if axis is None:
            added = ", axis=0" + added
        elif _literal(axis) != 0:
            edits.append((*_span(source, axis), 0, "0"))
        if added:
            where = _after_last_item(source, call)
            edits.append((where, where, 1, added))
    return edits


def _mask_edits(source: str, shape: _Shape, bound: str) -> list[Edit]:
    """AND `bound` into the mask of each access the program index reaches (or give it one)."""
    edits: list[Edit] = []
    for call in _calls(shape.fn, "load") + _calls(shape.fn, "store"):
        if not (call.args and _reads(call.args[0]) & shape.dependent):
            continue
        position = 2 if _tl_name(call) == "store" else 1
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


def _kernel_text(source: str, shape: _Shape, tile: int, extent: str, new_param: str | None) -> str:
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
        _append_item(lines, shape.fn.args.args[-1], new_param)
    return "\n".join(lines) + "\n"
