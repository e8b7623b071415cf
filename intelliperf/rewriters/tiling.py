"""memoryAccess recipe `tile-program-axis`: give the strided accesses a contiguous axis to coalesce on.

The textbook uncoalesced kernel walks one matrix axis with its lanes (`tl.arange`) and the
other with a grid axis, one index per program (`col = tl.program_id(0)`). When that program
index is added to the address with stride 1 (`... + rows * n + col`), consecutive programs
touch neighbouring elements but no warp ever does. The recipe makes each program take TILE
consecutive values of that index: the index becomes a `[1, TILE]` vector, every `tl.arange`
a `[BLOCK, 1]` one, so each access is a `[BLOCK, TILE]` block that Triton's coalescing pass
lays out along whichever axis its addresses are contiguous on (and converts between the
loaded and the stored layout through shared memory, as a hand-tiled transpose does). The
launcher's grid along that axis shrinks to `triton.cdiv(extent, TILE)` and the new index is
masked against that extent, which the kernel must receive as an argument.

Applies to straight-line, elementwise kernels only (loads, stores, arithmetic, `tl.where`):
then every (program index, lane) pair computes what it computed before, in another program.
"""

from __future__ import annotations

import ast
import textwrap

from ..syntax import end, indent_of
from .base import RewriteRequest
from .kernel_syntax import flagged_elem_bytes, tl_name
from .source import CodeUnit, grid_of, launch_call

TILE_BYTES = 128  # one full cache line of the widened index per row of the block
MAX_BLOCK_ELEMENTS = 32768  # BLOCK x TILE; larger blocks spill registers and shared memory
ELEMENTWISE = {
    "load",
    "store",
    "where",
    "arange",
    "program_id",
    "cdiv",
    "maximum",
    "minimum",
    "abs",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "sin",
    "cos",
    "floor",
    "ceil",
    "fma",
    "clamp",
    "erf",
    "fdiv",
    "div_rn",
    "umulhi",
}


class NotTileable(Exception):
    """The kernel is not of the shape the recipe rewrites (the message says why)."""


def _function(source: str) -> ast.FunctionDef:
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotTileable("the kernel or launcher is not a plain function")
    return fn


def tile_program_axis(request: RewriteRequest) -> tuple[str, str]:
    """The kernel and launcher with one program axis tiled (see the module docstring)."""
    if request.launcher is None:
        raise NotTileable("the launch cannot be rewritten (it is outside the project), and the grid must shrink")
    fn = _function(request.kernel.source)
    _check_elementwise(fn)
    index, axis = _program_index(fn, request)
    accesses = [c for c in _calls(fn) if tl_name(c) in ("load", "store")]
    widened = [c for c in accesses if index in _depends(fn, c.args[0] if c.args else None)]
    tile = max(TILE_BYTES // flagged_elem_bytes(request), 16)
    launcher, extent = _shrink_grid(request, request.launcher, axis, tile)
    block = _block_elements(fn, request)
    if block * tile > MAX_BLOCK_ELEMENTS:
        raise NotTileable(
            f"a {block} x {tile} block per program is too large (at most {MAX_BLOCK_ELEMENTS} "
            "elements); lower the block size first"
        )
    edits: list[tuple[int, int, str]] = []  # (line, col, text to insert), applied right to left
    definition = next(s for s in fn.body if isinstance(s, ast.Assign) and _is_name(s.targets[0], index))
    call = definition.value
    edits += [
        (call.lineno, call.col_offset, "("),
        (*end(call), f" * {tile} + tl.arange(0, {tile}))[None, :]"),
    ]
    edits += [(*end(c), "[:, None]") for c in _calls(fn) if tl_name(c) == "arange"]
    for access in widened:
        edits += _masked(access, f"{index} < {extent}")
    lines = request.kernel.source.splitlines()
    for line, col, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[line - 1] = lines[line - 1][:col] + text + lines[line - 1][col:]
    first = lines[definition.lineno - 1]
    indent = indent_of(first)
    lines.insert(
        definition.lineno - 1,
        f"{indent}# intelliperf recipe tile-program-axis: {tile} consecutive "
        f"`{index}` per program, [BLOCK, {tile}] blocks",
    )
    return "\n".join(lines) + "\n", launcher


def _calls(fn: ast.FunctionDef) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call)]


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _check_elementwise(fn: ast.FunctionDef) -> None:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    for stmt in body:
        simple = (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        ) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and tl_name(stmt.value) == "store")
        if not simple:
            raise NotTileable(
                f"line {stmt.lineno} of the kernel is not `name = expression` or a tl.store (the recipe "
                "rewrites straight-line elementwise kernels only)"
            )
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript):
            raise NotTileable(f"the kernel indexes a block (`{ast.unparse(node)}`): it is already multi-dimensional")
        if isinstance(node, ast.Call):
            name = tl_name(node)
            method = isinstance(node.func, ast.Attribute) and node.func.attr == "to"
            if not method and name not in ELEMENTWISE:
                raise NotTileable(f"`{ast.unparse(node.func)}` is not an elementwise operation the recipe can widen")


def _program_index(fn: ast.FunctionDef, request: RewriteRequest) -> tuple[str, int]:
    """The name bound to a bare `tl.program_id(AXIS)` that a flagged access adds with stride 1."""
    flagged = {src.line - request.kernel.line + 1 for src in request.finding.lines}
    found = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and tl_name(stmt.value) == "program_id":
            given = stmt.value.args or [k.value for k in stmt.value.keywords if k.arg == "axis"]
            target, axis = stmt.targets[0], given[0] if given else None
            if isinstance(target, ast.Name) and isinstance(axis, ast.Constant) and isinstance(axis.value, int):
                found.append((target.id, axis.value))
    if not found:
        raise NotTileable(
            "no program axis indexes single elements (`i = tl.program_id(AXIS)`), so there is no "
            "axis to tile; a strided gather like this one needs another data layout"
        )
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and tl_name(n) in ("program_id", "num_programs")]
    for name, number in found:
        if sum(1 for c in uses if ast.unparse(c) in (f"tl.program_id({number})", f"tl.num_programs({number})")) > 1:
            continue  # the axis is read again elsewhere: tiling it would change that value too
        for call in _calls(fn):
            if (
                tl_name(call) in ("load", "store")
                and call.lineno in flagged
                and call.args
                and any(_is_name(term, name) for term in _terms(call.args[0]))
            ):
                return name, number
    names = ", ".join(f"`{n}`" for n, _ in found)
    raise NotTileable(
        f"no flagged access adds a program index ({names}) with stride 1, so tiling it would not "
        "give the access a contiguous axis"
    )


def _terms(expr: ast.expr) -> list[ast.expr]:
    """The operands of a chain of additions."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _depends(fn: ast.FunctionDef, expr: ast.expr | None) -> set[str]:
    """The names `expr` depends on, through the kernel's assignments."""
    assigned = {
        s.targets[0].id: s.value for s in fn.body if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
    }
    seen: set[str] = set()
    todo = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)] if expr is not None else []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in assigned:
            todo += [n.id for n in ast.walk(assigned[name]) if isinstance(n, ast.Name)]
    return seen


def _masked(call: ast.Call, bound: str) -> list[tuple[int, int, str]]:
    """Insertions that AND `bound` into the access's mask (or give it one)."""
    mask = (
        call.args[2]
        if tl_name(call) == "store" and len(call.args) > 2
        else call.args[1]
        if tl_name(call) == "load" and len(call.args) > 1
        else next((k.value for k in call.keywords if k.arg == "mask"), None)
    )
    if isinstance(mask, (ast.Name, ast.Call, ast.Attribute)):
        return [(*end(mask), f" & ({bound})")]
    if mask is not None:
        return [(mask.lineno, mask.col_offset, "("), (*end(mask), f") & ({bound})")]
    sep = ", " if call.args or call.keywords else ""
    line, column = end(call)
    return [(line, column - 1, f"{sep}mask={bound}")]


def _shrink_grid(request: RewriteRequest, launcher: CodeUnit, axis: int, tile: int) -> tuple[str, str]:
    """The launcher with grid[axis] divided by the tile, and the kernel argument that holds the extent."""
    source = textwrap.dedent(launcher.source)
    fn = _function(source)
    call = launch_call(fn, request.kernel.name)
    if call is None:
        raise NotTileable(f"the launcher does not launch {request.kernel.name}[grid](...) directly")
    written = grid = grid_of(call)
    if isinstance(grid, ast.Name):
        grid = next(
            (
                s.value
                for s in ast.walk(fn)
                if isinstance(s, ast.Assign) and any(_is_name(t, grid.id) for t in s.targets)
            ),
            grid,
        )
    if isinstance(grid, ast.Lambda):  # grid = lambda meta: (...): its tuple
        grid = grid.body
    if not isinstance(grid, ast.Tuple) or axis >= len(grid.elts):
        raise NotTileable(
            f"the grid `{ast.unparse(written)}` is not a tuple the recipe can read axis "
            f"{axis} of (a grid function is not rewritten)"
        )
    size = grid.elts[axis]
    params = [a.arg for a in _function(request.kernel.source).args.args]
    extent = next(
        (params[i] for i, a in enumerate(call.args) if i < len(params) and ast.unparse(a) == ast.unparse(size)), None
    ) or next((k.arg for k in call.keywords if ast.unparse(k.value) == ast.unparse(size)), None)
    if extent is None:
        raise NotTileable(
            f"the grid size along axis {axis} (`{ast.unparse(size)}`) is not passed to the kernel, "
            "so the kernel cannot mask the tiled index against it"
        )
    lines = source.splitlines()
    last, column = end(size)
    lines[last - 1] = lines[last - 1][:column] + f", {tile})" + lines[last - 1][column:]
    row = lines[size.lineno - 1]
    lines[size.lineno - 1] = row[: size.col_offset] + "triton.cdiv(" + row[size.col_offset :]
    return "\n".join(lines) + "\n", extent


def _block_elements(fn: ast.FunctionDef, request: RewriteRequest) -> int:
    """The longest `tl.arange` of the kernel, with its constexpr resolved."""
    constexprs = request.constexprs()
    longest = 1
    for call in _calls(fn):
        if tl_name(call) == "arange" and len(call.args) == 2:
            end = call.args[1]
            value = end.value if isinstance(end, ast.Constant) else constexprs.get(ast.unparse(end))
            if not isinstance(value, int):
                raise NotTileable(f"cannot tell the length of `{ast.unparse(call)}`")
            longest = max(longest, value)
    return longest
