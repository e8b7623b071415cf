"""What the recipe tile-strided-reduction (strided_reduction.py) reads from a kernel before editing it.

The checks that the kernel is a strided reduction the recipe rewrites (straight-line statements and
top-level range loops of 1-D blocks, elementwise operations, reductions and scans only), the
program index to tile and what depends on it, the loop-carried accumulators to widen, the tile's
width from the element size, and the block sizes the launcher must lower; plus the syntax helpers
the recipe's edits (strided_reduction_edits.py) read the kernel with.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from .base import RewriteRequest
from .kernel_syntax import flagged_elem_bytes, tl_name
from .source import launch_call
from .tiling import ELEMENTWISE

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


class NotStridedReduction(Exception):
    """The kernel is not the strided reduction the recipe rewrites (the message says why)."""


@dataclass
class StridedShape:
    """What the recipe learned about the kernel before editing it."""

    fn: ast.FunctionDef
    index: str  # the name bound to the tiled program index
    axis: int
    definition: ast.Assign
    dependent: set[str]  # names whose value depends on the program index
    widened: set[int] = field(default_factory=set)  # ids of accumulators' initial values to widen


def read_shape(request: RewriteRequest) -> tuple[StridedShape, int, dict[str, int]]:
    """The kernel's shape, the tile's width (columns a program) and {constexpr: its lowered value}
    for block sizes the launcher must cap (see strided_reduction.py's docstring)."""
    fn = parse_function(request.kernel.source)
    first = request.kernel.line
    _check_calls(fn)
    _check_statements(fn, first)
    shape = _tiled_index(fn, first)
    _check_loops(shape, first)
    _check_stores(shape, first)
    shape.widened = _widened_accumulators(shape, first)
    tile = max(TILE_BYTES // _elem_bytes(request, shape), 16)
    return shape, tile, _lowered_blocks(request, fn, tile)


def parse_function(source: str) -> ast.FunctionDef:
    """The kernel's (or launcher's) function, which must be a plain one."""
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotStridedReduction("the kernel or launcher is not a plain function")
    return fn


def tl_calls(node: ast.AST, name: str | None = None) -> list[ast.Call]:
    """The `tl.<name>` calls under `node` (all calls when `name` is None)."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and (name is None or tl_name(n) == name)]


def _loops(fn: ast.FunctionDef) -> list[ast.For]:
    return [s for s in fn.body if isinstance(s, ast.For)]


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def assigned_names(stmt: ast.stmt) -> set[str]:
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
    return isinstance(stmt, ast.Expr) and tl_name(stmt.value) == "store"


def _is_range_loop(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.For) or stmt.orelse or not isinstance(stmt.target, ast.Name):
        return False
    loop = stmt.iter
    return isinstance(loop, ast.Call) and (tl_name(loop) == "range" or ast.unparse(loop.func) == "range")


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
        name = tl_name(node)
        method = isinstance(node.func, ast.Attribute) and node.func.attr == "to" and name is None
        builtin = ast.unparse(node.func) in ("range", "float")
        if not (method or builtin or name in WIDENABLE):
            raise NotStridedReduction(
                f"`{ast.unparse(node.func)}` is not an elementwise operation, reduction or scan the recipe can widen"
            )
        if name in SHAPED and len(shape_items(node)) > 1:
            raise NotStridedReduction(f"the kernel already works on 2-D blocks (`{ast.unparse(node)}`)")
        if name in REDUCTIONS | SCANS:
            _check_axis(node)


def shape_items(call: ast.Call) -> list[ast.expr]:
    shape = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
    if not isinstance(shape, (ast.Tuple, ast.List)):
        raise NotStridedReduction(f"the shape of `{ast.unparse(call)}` is not written out as a tuple or a list")
    return shape.elts


def axis_argument(call: ast.Call) -> ast.expr | None:
    return call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)


def literal_value(node: ast.expr) -> object:
    """The value of a literal (`0`, `-1`, `None`), else a marker no literal equals."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return ast.unparse(node)


def _check_axis(call: ast.Call) -> None:
    extra = [k.arg for k in call.keywords if k.arg not in ("axis", "reverse")]
    if len(call.args) > 2 or extra:
        raise NotStridedReduction(f"`{ast.unparse(call)}` takes arguments beyond the value and the axis")
    axis = axis_argument(call)
    if axis is not None and literal_value(axis) not in (0, -1, None):
        raise NotStridedReduction(f"`{ast.unparse(call)}` does not reduce or scan its block's only axis")


# --- the program index, and what depends on it ---


def _program_axis(call: ast.AST) -> int | None:
    if tl_name(call) not in ("program_id", "num_programs"):
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
            if isinstance(stmt, (ast.Assign, ast.AugAssign)) and names_read(stmt.value) & dependent:
                new = assigned_names(stmt) - dependent
                dependent |= new
                changed = changed or bool(new)
    return dependent


def _address_terms(fn: ast.FunctionDef, address: ast.expr) -> list[ast.expr]:
    """The operands of the address's chain of additions, through names assigned once to a sum."""
    counts: dict[str, int] = {}
    sums: dict[str, ast.expr] = {}
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.stmt):
            for name in assigned_names(stmt):
                counts[name] = counts.get(name, 0) + 1
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
            sums |= {name: stmt.value for name in assigned_names(stmt)}

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
        for load in tl_calls(loop, "load"):
            address = load.args[0] if load.args else None
            if address is None or not names_read(address) & moving:
                continue
            if any(isinstance(t, ast.Name) and t.id == index for t in _address_terms(fn, address)):
                return True
    return False


def _tiled_index(fn: ast.FunctionDef, first: int) -> StridedShape:
    """The name bound to a bare `tl.program_id(AXIS)` that a loop's load adds with stride 1."""
    found = [
        (s, s.targets[0].id, _program_axis(s.value))
        for s in fn.body
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and tl_name(s.value) == "program_id"
    ]
    for definition, index, axis in found:
        if axis is None or axis < 0 or not _walks_a_column(fn, index):
            continue
        again = [c for c in tl_calls(fn) if _program_axis(c) == axis and c is not definition.value]
        if again:
            raise NotStridedReduction(
                f"`{ast.unparse(again[0])}` at line {first + again[0].lineno - 1} reads the program axis again, "
                "which would keep the untiled index"
            )
        return StridedShape(fn, index, axis, definition, _dependent_on(fn, {index}))
    if not found:
        raise NotStridedReduction("no `i = tl.program_id(AXIS)` names a program index the recipe could tile")
    raise NotStridedReduction(
        "the program index is not added with stride 1 to an address that a loop's loads walk along the strided axis"
    )


def _check_loops(shape: StridedShape, first: int) -> None:
    for loop in _loops(shape.fn):
        if names_read(loop.iter) & shape.dependent:
            raise NotStridedReduction(
                f"the bounds of the loop at line {first + loop.lineno - 1} depend on the program index, "
                "so the columns of a tile would need different trip counts"
            )


def _check_stores(shape: StridedShape, first: int) -> None:
    for store in tl_calls(shape.fn, "store"):
        if not (store.args and names_read(store.args[0]) & shape.dependent):
            raise NotStridedReduction(
                f"the store at line {first + store.lineno - 1} does not use the program index, "
                "so every program of a tile would write the same address"
            )


# --- loop-carried accumulators ---


def _widened_accumulators(shape: StridedShape, first: int) -> set[int]:
    """ids of the initial values of carried accumulators that start the same for every column but
    become one value per column in the loop: they must start as a tile."""
    widened: set[int] = set()
    for position, loop in enumerate(shape.fn.body):
        if not isinstance(loop, ast.For):
            continue
        before: dict[str, ast.expr | None] = {a.arg: None for a in shape.fn.args.args}
        for stmt in shape.fn.body[:position]:
            if isinstance(stmt, ast.Assign):
                before |= {name: stmt.value for name in assigned_names(stmt)}
        assigned = {name for stmt in loop.body for name in assigned_names(stmt)}
        for name in sorted(assigned & set(before) & shape.dependent):
            init = before[name]
            if init is not None and names_read(init) & shape.dependent:
                continue  # already one value per column
            if init is None or not _widenable(init):
                raise NotStridedReduction(
                    f"the loop at line {first + loop.lineno - 1} carries `{name}`, which is not a reduction "
                    "accumulator that starts as a tl.zeros or tl.full block or a constant"
                )
            widened.add(id(init))
    return widened


def constant_dtype(expr: ast.expr) -> str | None:
    """The dtype of a numeric constant (`0.0`, `-1`, `float("-inf")`), else None."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return constant_dtype(expr.operand)
    if isinstance(expr, ast.Constant) and not isinstance(expr.value, bool):
        if isinstance(expr.value, float):
            return "tl.float32"
        if isinstance(expr.value, int):
            return "tl.int32"
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "float":
        return "tl.float32"
    return None


def _widenable(init: ast.expr) -> bool:
    return tl_name(init) in SHAPED or constant_dtype(init) is not None


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
    inside = {id(c) for loop in stepped for c in tl_calls(loop, "arange")}
    allowed: set[int] = set()
    for call in tl_calls(fn):
        length = _arange_length(call) if tl_name(call) == "arange" else None
        if length is not None and ast.unparse(length) == name:
            if id(call) not in inside:
                return False
            allowed.add(id(length))
        if tl_name(call) in SHAPED:
            allowed |= {id(d) for d in shape_items(call) if ast.unparse(d) == name}
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
    for call in tl_calls(fn, "arange"):
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


def _elem_bytes(request: RewriteRequest, shape: StridedShape) -> int:
    """The element size of the buffers the strided loads read, from the recorded launch, else the traced sites."""
    args = request.profile.signatures[0].args if request.profile.signatures else []
    dtypes = {a.name: (a.dtype or "").removeprefix("torch.") for a in args if a.kind == "tensor"}
    sizes = []
    for load in tl_calls(shape.fn, "load"):
        terms = _address_terms(shape.fn, load.args[0]) if load.args else []
        names = {t.id for t in terms if isinstance(t, ast.Name)}
        if shape.index in names:
            sizes += [ELEMENT_BYTES[dtypes[n]] for n in names if dtypes.get(n) in ELEMENT_BYTES]
    return min(sizes) if sizes else flagged_elem_bytes(request)
