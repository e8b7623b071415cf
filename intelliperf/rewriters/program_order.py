"""memoryLocality recipe `grouped-order`: launch the tiles of a 2-D tile kernel in groups of rows.

A GEMM-like kernel on a 1-D grid takes its tile from the program id in row-major order
(`pid_m = pid // num_pid_n`, `pid_n = pid % num_pid_n`): the programs that run at the same time
cover one or two rows of tiles, so each reads one row block of A but every column block of B,
and B is read again from DRAM for every row. The recipe rewrites that mapping to the grouped
("super-grouping") order of the Triton matmul tutorial: GROUP_M consecutive row tiles are
walked column by column, so the programs in flight share row blocks of A and column blocks of
B in the L2 cache. The mapping is a permutation of the same tiles, so every program computes
what one program computed before; the launcher is unchanged.

Matched on the syntax tree, not on names, in the kernel's body or in one branch of an `if` (a constexpr
switch between a grouped and a row-major order, whose row-major side is the one the formula saw running:
that side is rewritten, the grouped one kept): the dividend is a name bound to
`tl.program_id(0)` / `tl.program_id(axis=0)` (or that call itself), the divisor any expression
(a name, `tl.cdiv(N, BLOCK_N)`, ...), the pair written as two statements or as one tuple
assignment, and the column index also as `pid - pid_m * n`. The number of row tiles comes from
an existing `tl.cdiv(M, BLOCK)` / `(M + BLOCK - 1) // BLOCK` over the row tile's block, or from
the bound the kernel puts on its row offsets (`offs < M` or `offs % M`, where `offs` is built
from `pid_m * BLOCK`). GROUP_M is the literal 8 (the tutorial's value; a candidate for a knob).

Declines when the order is already grouped (`tl.swizzle2d`, `pid // (GROUP * n)`), when the tile
comes from a 2-D grid (`tl.program_id(1)`; flattening the grid is left to another rewrite), when
no row-major `pid // n`, `pid % n` pair is found, and when the number of row tiles cannot be
derived from the kernel.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .kernel_syntax import fresh_name, tl_name

GROUP_M = 8  # row tiles per group, the tutorial's choice; the best value depends on the tile and the cache


class NotReorderable(Exception):
    """The kernel's tile order is not the row-major one the recipe rewrites (the message says why)."""


@dataclass
class _Mapping:
    """The row-major pid -> (slow, fast) tile statements of a kernel."""

    pid: ast.expr  # the program id: a name or the tl.program_id call
    slow: str  # the tile index that changes every `divisor` programs (pid_m)
    fast: str  # the tile index that changes every program (pid_n)
    divisor: ast.expr  # the number of fast tiles (num_pid_n)
    statements: list[ast.stmt]  # the statements that compute slow and fast, in order


def grouped_order(request: RewriteRequest) -> tuple[str, None]:
    """The kernel with its row-major tile order replaced by the grouped one (see the module docstring)."""
    fn = _function(request.kernel.source)
    mapping = _row_major_mapping(fn)
    first = mapping.statements[0]
    count = _slow_tile_count(fn, mapping, first.lineno)
    block = _grouped_statements(fn, mapping, count)
    lines = request.kernel.source.splitlines()
    indent = indent_of(lines[first.lineno - 1])
    for stmt in reversed(mapping.statements):
        new = [indent + line for line in block] if stmt is first else []
        lines[stmt.lineno - 1 : last_line(stmt)] = new
    return "\n".join(lines) + "\n", None


def _function(source: str) -> ast.FunctionDef:
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotReorderable("the kernel is not a plain function")
    return fn


def _program_axis(node: ast.AST) -> int | None:
    """AXIS of a `tl.program_id(AXIS)` / `tl.program_id(axis=AXIS)` call, else None."""
    if tl_name(node) != "program_id":
        return None
    assert isinstance(node, ast.Call)
    given = node.args or [k.value for k in node.keywords if k.arg == "axis"]
    if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, int):
        return given[0].value
    return None


def _assignments(fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """Every expression assigned to each name anywhere in the kernel (augmented ones included)."""
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for name, value in zip(target.elts, node.value.elts, strict=False):
                        if isinstance(name, ast.Name):
                            out.setdefault(name.id, []).append(value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            if node.value is not None:
                out.setdefault(node.target.id, []).append(node.value)
    return out


def _depends(assigned: dict[str, list[ast.expr]], expr: ast.AST) -> set[str]:
    """The names `expr` depends on, through the kernel's assignments."""
    seen: set[str] = set()
    todo = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [n.id for value in assigned.get(name, []) for n in ast.walk(value) if isinstance(n, ast.Name)]
    return seen


def _program_ids(fn: ast.FunctionDef) -> set[str]:
    """Names bound to a bare `tl.program_id(0)`."""
    return {
        s.targets[0].id
        for s in fn.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and _program_axis(s.value) == 0
    }


def _is_pid(node: ast.expr, pids: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in pids) or _program_axis(node) == 0


def _index_pairs(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value) of a `name = value` or `a, b = x, y` statement."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return []
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return [(target.id, stmt.value)]
    if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) and len(target.elts) == len(stmt.value.elts):
        return [(t.id, v) for t, v in zip(target.elts, stmt.value.elts, strict=True) if isinstance(t, ast.Name)]
    return []


def _row_major_mapping(fn: ast.FunctionDef) -> _Mapping:
    pids = _program_ids(fn)
    for block in _blocks(fn):
        found = _mapping_in(block, pids)
        if found is not None:
            return found
    raise NotReorderable(_why_no_mapping(fn, pids))


def _blocks(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    """The kernel's statement lists, its body first, then those of its branches (`if SWITCH: grouped order
    else: row-major`, a constexpr switch whose row-major side is the one that runs) in source order."""
    nested = [block for node in ast.walk(fn) if isinstance(node, ast.If) for block in (node.body, node.orelse) if block]
    return [fn.body, *sorted(nested, key=lambda b: b[0].lineno)]


def _mapping_in(block: list[ast.stmt], pids: set[str]) -> _Mapping | None:
    """The row-major pair among one statement list's assignments, else None."""
    slows: list[tuple[str, ast.expr, ast.expr, ast.stmt]] = []  # name, pid, divisor, statement
    fasts: list[tuple[str, ast.expr, ast.stmt, ast.BinOp]] = []  # name, pid, statement, value
    for stmt in block:
        for name, value in _index_pairs(stmt):
            if isinstance(value, ast.BinOp) and _is_pid(value.left, pids):
                if isinstance(value.op, ast.FloorDiv):
                    slows.append((name, value.left, value.right, stmt))
                elif isinstance(value.op, (ast.Mod, ast.Sub)):
                    fasts.append((name, value.left, stmt, value))
    for slow, pid, divisor, slow_stmt in slows:
        for fast, fast_pid, fast_stmt, value in fasts:
            same_pid = ast.unparse(pid) == ast.unparse(fast_pid)
            if same_pid and ast.unparse(value.right) in _fast_divisors(value, slow, divisor):
                statements = sorted({id(s): s for s in (slow_stmt, fast_stmt)}.values(), key=lambda s: s.lineno)
                return _Mapping(pid, slow, fast, divisor, statements)
    return None


def _fast_divisors(value: ast.BinOp, slow: str, divisor: ast.expr) -> set[str]:
    """The right operands that make `value` the fast index: `pid % divisor` or `pid - slow * divisor`."""
    n = ast.unparse(divisor)
    return {n} if isinstance(value.op, ast.Mod) else {f"{slow} * {n}", f"{n} * {slow}"}


def _why_no_mapping(fn: ast.FunctionDef, pids: set[str]) -> str:
    assigned = _assignments(fn)
    if any(tl_name(n) == "swizzle2d" for n in ast.walk(fn)):
        return "the tile order is already grouped (tl.swizzle2d)"
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and _is_pid(node.left, pids):
            divisor = node.right
            values = assigned.get(divisor.id, []) if isinstance(divisor, ast.Name) else [divisor]
            if any(isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult) for v in values):
                return "the tile order is already grouped (the program id is divided by a group of tiles)"
    if any(_program_axis(n) == 1 for n in ast.walk(fn)):
        return "the tile order comes from a 2-D grid; swap to a 1-D grid first"
    return (
        "no row-major tile order was found (a 1-D program id split as `pid // n` and `pid % n` into two tile indices)"
    )


def _block_of(fn: ast.FunctionDef, mapping: _Mapping) -> str:
    """The block size the slow tile index is scaled by (`index * BLOCK`, outside the mapping itself),
    a constexpr parameter first."""
    inside = {id(n) for s in mapping.statements for n in ast.walk(s)}
    constexprs = {a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and id(node) not in inside:
            for this, other in ((node.left, node.right), (node.right, node.left)):
                if (
                    isinstance(this, ast.Name)
                    and this.id == mapping.slow
                    and isinstance(other, (ast.Name, ast.Constant))
                ):
                    found.append(ast.unparse(other))
    if not found:
        raise NotReorderable(
            f"the row tile index `{mapping.slow}` is never scaled by a block size (`{mapping.slow} * BLOCK`)"
        )
    return next((b for b in found if b in constexprs), found[0])


def _tile_count(value: ast.expr, block: str) -> ast.expr | None:
    """E of `tl.cdiv(E, block)` / `triton.cdiv(E, block)` / `(E + block - 1) // block`, else None."""
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("cdiv") and len(value.args) == 2:
        return value.args[0] if ast.unparse(value.args[1]) == block else None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv) and ast.unparse(value.right) == block:
        text = ast.unparse(value.left)
        for suffix in (f" + {block} - 1", f" + ({block} - 1)"):
            if text.endswith(suffix):
                return ast.parse(text[: -len(suffix)], mode="eval").body
    return None


def _slow_tile_count(fn: ast.FunctionDef, mapping: _Mapping, before: int) -> str:
    """The number of slow tiles: an existing name holding it, or a `tl.cdiv(M, BLOCK)` expression."""
    block = _block_of(fn, mapping)
    for stmt in fn.body:
        if stmt.lineno >= before:
            break
        for name, value in _index_pairs(stmt):
            if name != ast.unparse(mapping.divisor) and _tile_count(value, block) is not None:
                return name
    extent = _slow_extent(fn, mapping)
    available = {a.arg for a in fn.args.args} | {
        name for s in fn.body if s.lineno < before for name, _ in _index_pairs(s)
    }
    missing = {n.id for n in ast.walk(extent) if isinstance(n, ast.Name)} - available
    if missing:
        raise NotReorderable(
            f"the number of row tiles needs `{ast.unparse(extent)}`, which is computed after the tile order"
        )
    return f"tl.cdiv({ast.unparse(extent)}, {block})"


def _slow_extent(fn: ast.FunctionDef, mapping: _Mapping) -> ast.expr:
    """M: what the offsets built from the row tile index are bounded by (`offs < M` or `offs % M`)."""
    assigned = _assignments(fn)
    tile = {mapping.slow, mapping.fast}
    found: dict[str, ast.expr] = {}
    for node in ast.walk(fn):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt):
            pairs.append((node.left, node.comparators[0]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            pairs.append((node.left, node.right))
        for offsets, bound in pairs:
            deps = _depends(assigned, offsets)
            if mapping.slow in deps and mapping.fast not in deps and not _depends(assigned, bound) & tile:
                found.setdefault(ast.unparse(bound), bound)
    if len(found) != 1:
        reason = "none bounds" if not found else f"{len(found)} different bounds ({', '.join(found)}) bound"
        raise NotReorderable(
            f"cannot derive the number of row tiles: {reason} the offsets built from `{mapping.slow}` "
            "(expected `offs < M` or `offs % M`)"
        )
    return next(iter(found.values()))


def _grouped_statements(fn: ast.FunctionDef, mapping: _Mapping, count: str) -> list[str]:
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    lines = [
        f"# intelliperf recipe grouped-order: groups of {GROUP_M} row tiles, each walked column by column,",
        "# so the programs in flight share blocks of both inputs in L2",
    ]
    pid = ast.unparse(mapping.pid)
    if not isinstance(mapping.pid, ast.Name):
        pid = fresh_name(taken, "pid")
        lines.append(f"{pid} = {ast.unparse(mapping.pid)}")
    per_row = ast.unparse(mapping.divisor)
    if not isinstance(mapping.divisor, ast.Name):
        per_row = fresh_name(taken, "num_pid_n")
        lines.append(f"{per_row} = {ast.unparse(mapping.divisor)}")
    rows = count
    if not count.isidentifier():
        rows = fresh_name(taken, "num_pid_m")
        lines.append(f"{rows} = {count}")
    group, in_group, group_id, first, size = (
        fresh_name(taken, n) for n in ("GROUP_M", "num_pid_in_group", "group_id", "first_pid_m", "group_size_m")
    )
    return lines + [
        f"{group} = {GROUP_M}",
        f"{in_group} = {group} * {per_row}",
        f"{group_id} = {pid} // {in_group}",
        f"{first} = {group_id} * {group}",
        f"{size} = tl.minimum({rows} - {first}, {group})",
        f"{mapping.slow} = {first} + (({pid} % {in_group}) % {size})",
        f"{mapping.fast} = ({pid} % {in_group}) // {size}",
    ]
