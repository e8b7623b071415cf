"""atomicContention recipe `rows-per-program`: per-program partial sums for atomics shared by all programs.

A row kernel launched with one program per row (`row = tl.program_id(0)`, grid `(n_rows,)`)
that adds a vector into the same cells from every program (a norm backward adding its row's
dW/dB into `DW + cols`) serialises n_rows atomics on each cell. The recipe gives each program
ROWS consecutive rows: the body becomes a loop over them (`for row in range(first, min(first +
ROWS, n_rows))`, each use of `tl.program_id(0)` reading the loop's row), every contended
`tl.atomic_add(ptr, value, mask=m)` becomes `partial += tl.where(m, value, 0)` into a register
accumulator (float32 for float buffers) and, after the loop, one `tl.atomic_add(ptr, partial)` per
program, so each cell sees n_rows / ROWS atomics. Statements that do not depend on the row
(`cols = tl.arange(...)`, a weight row's load) move before the loop and run once per program. The
launcher's grid becomes `(triton.cdiv(n_rows, ROWS),)`; when the kernel is not given the row count
it gets a new parameter for it, passed by keyword. This is the per-program partial-sum fix of
Liger-Kernel's layer-norm backward, with the sum kept in atomics rather than a partials buffer.

Applies when the atomic's address and mask do not depend on the row (otherwise programs do not
share cells) and the value's shape can be read from the source (built from `tl.arange` blocks).
Declines when the kernel already loops over rows or reads the grid size (`tl.num_programs`), uses
another program axis, returns early, when no top-level `tl.atomic_add` shares its cells between
rows, and when the launch grid is not a one-element tuple.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import cast

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .kernel_syntax import append_item, fresh_name, passed_as, tl_name
from .source import grid_of, launch_call, replace_spans

DEFAULT_ROWS = 16  # rows per program when the launch's row count was not recorded
MAX_ROWS = 64  # beyond this the partial sums save little and the programs get long
MIN_PROGRAMS = 256  # keep at least this many programs (or two per SM) so the GPU stays full


class NotRowPartial(Exception):
    """The kernel is not the one-program-per-row shape the recipe rewrites (the message says why)."""


@dataclass
class _Target:
    """A contended `tl.atomic_add` statement and its accumulator."""

    stmt: ast.Expr
    pointer: ast.expr
    value: ast.expr
    mask: ast.expr | None
    extra: list[ast.keyword]  # sem=, scope=: carried over to the one atomic after the loop
    shape: tuple[str, ...]
    dtype: str  # the accumulator's Triton dtype
    name: str = ""  # the accumulator, named once names are chosen


def rows_per_program(request: RewriteRequest) -> tuple[str, str]:
    """The kernel and launcher with ROWS rows per program and one atomic per program (see the module docstring)."""
    if request.launcher is None:
        raise NotRowPartial("the launch cannot be rewritten (it is outside the project), and the grid must shrink")
    fn = _function(request.kernel.source)
    _check_body(fn, request.kernel.line)
    targets = _targets(fn, request)
    launcher_fn = _function(textwrap.dedent(request.launcher.source))
    call = _single_launch(launcher_fn, request.kernel.name)
    size, size_stmt = _row_count(launcher_fn, call)
    rows = _rows_per_program(request)
    params = [a.arg for a in fn.args.args]
    extent = passed_as(call, params, size)
    taken = _names(fn)
    new_param = None
    if extent is None:
        if fn.args.defaults or fn.args.vararg or fn.args.kwonlyargs or fn.args.kwarg:
            raise NotRowPartial(
                f"the row count `{ast.unparse(size)}` is not passed to the kernel, and its signature "
                "(defaults, *args or keyword-only parameters) takes no new parameter"
            )
        extent = new_param = fresh_name(taken, size.id if isinstance(size, ast.Name) else "n_rows")
    kernel = _kernel_text(request.kernel.source, fn, targets, rows, extent, new_param, taken)
    launcher = _launcher_text(textwrap.dedent(request.launcher.source), call, size, size_stmt, rows, new_param)
    return kernel, launcher


def _function(source: str) -> ast.FunctionDef:
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotRowPartial("the kernel or launcher is not a plain function")
    return fn


def _program_axis(node: ast.AST) -> int | None:
    """AXIS of a `tl.program_id(AXIS)` / `tl.program_id(axis=AXIS)` call, -1 when not a literal, else None."""
    if tl_name(node) != "program_id":
        return None
    assert isinstance(node, ast.Call)
    given = node.args or [k.value for k in node.keywords if k.arg == "axis"]
    if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, int):
        return given[0].value
    return -1


def _names(fn: ast.FunctionDef) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}


def _bound_here(node: ast.AST) -> set[str]:
    """The names this one statement assigns (not those of statements nested in it)."""
    targets = (
        node.targets
        if isinstance(node, ast.Assign)
        else [node.target]
        if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For))
        else []
    )
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _assigned_names(stmt: ast.AST) -> set[str]:
    """The names a statement assigns, nested statements included."""
    return {name for node in ast.walk(stmt) for name in _bound_here(node)}


def _row_dependent(fn: ast.FunctionDef) -> set[str]:
    """The names whose value depends on the program id, through the kernel's assignments and loops."""
    dependent: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                source = node.iter if isinstance(node, ast.For) else node.value
                if source is not None and _reads_row(source, dependent):
                    new = _assigned_names(node.target if isinstance(node, ast.For) else node) - dependent
                    if new:
                        dependent |= new
                        changed = True
    return dependent


def _reads_row(expr: ast.AST, dependent: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in dependent) or _program_axis(n) is not None for n in ast.walk(expr))


def _check_body(fn: ast.FunctionDef, first_line: int) -> None:
    """Decline kernels whose programs do not each own one row: see the module docstring."""
    nodes = list(ast.walk(fn))
    if any(tl_name(n) == "num_programs" for n in nodes):
        raise NotRowPartial("the kernel reads the grid size (tl.num_programs): it already spreads rows over programs")
    if not any(_program_axis(n) == 0 for n in nodes):
        raise NotRowPartial("the kernel never reads tl.program_id(0), so it has no row per program")
    dependent = _row_dependent(fn)
    for node in nodes:
        if isinstance(node, ast.Return):
            raise NotRowPartial(
                f"line {first_line + node.lineno - 1} returns early, which would end the loop over the program's rows"
            )
        axis = _program_axis(node)
        if axis is not None and axis != 0:
            raise NotRowPartial(
                f"the kernel reads `{ast.unparse(node)}`: only a 1-D grid of one program per row is rewritten"
            )
        if not isinstance(node, (ast.For, ast.While)):
            continue
        bound = node.iter if isinstance(node, ast.For) else node.test
        if _reads_row(bound, dependent):
            raise NotRowPartial(
                f"the loop at line {first_line + node.lineno - 1} depends on the program id: "
                "the kernel already loops over rows"
            )


def _atomic_args(call: ast.Call) -> tuple[dict[str, ast.expr], list[ast.keyword]]:
    named = dict(zip(("pointer", "val", "mask"), call.args, strict=False))
    named |= {k.arg: k.value for k in call.keywords if k.arg in ("pointer", "val", "mask")}
    return named, [k for k in call.keywords if k.arg not in ("pointer", "val", "mask")]


def _targets(fn: ast.FunctionDef, request: RewriteRequest) -> list[_Target]:
    """The top-level `tl.atomic_add` statements whose cells every program shares."""
    dependent = _row_dependent(fn)
    shapes = _shapes(fn)
    targets, reasons = [], []
    for stmt in fn.body:
        where = f"line {request.kernel.line + stmt.lineno - 1}"
        if isinstance(stmt, ast.Assign) and _is_atomic(stmt.value):
            reasons.append(f"{where}: the kernel uses the value the atomic returns, which partial sums would change")
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        name = tl_name(call) if call is not None else None
        if call is None or name is None or not name.startswith("atomic_"):
            continue
        assert isinstance(call, ast.Call) and isinstance(stmt, ast.Expr)
        if name != "atomic_add":
            reasons.append(f"{where}: {name} is not an atomic_add, whose partial sums the recipe keeps")
            continue
        args, extra = _atomic_args(call)
        pointer, value, mask = args.get("pointer"), args.get("val"), args.get("mask")
        if pointer is None or value is None or any(k.arg is None for k in extra):
            reasons.append(f"{where}: the atomic's arguments are not written out")
            continue
        if _reads_row(pointer, dependent):
            reasons.append(f"{where}: the atomic's address depends on the row, so programs do not share its cells")
            continue
        if mask is not None and _reads_row(mask, dependent):
            reasons.append(f"{where}: the atomic's mask depends on the row")
            continue
        shape = _broadcast(_shape(pointer, shapes), _shape(value, shapes))
        if shape is None:
            reasons.append(
                f"{where}: cannot tell the shape of `{ast.unparse(value)}` (expected a block built from tl.arange)"
            )
            continue
        targets.append(_Target(stmt, pointer, value, mask, extra, shape, _accumulator_dtype(request, pointer)))
    nested = [
        n
        for s in fn.body
        if not isinstance(s, ast.Expr)
        for n in ast.walk(s)
        if isinstance(n, ast.Call) and _is_atomic(n)
    ]
    if not targets:
        if not reasons and nested:
            reasons.append(f"the atomic at line {request.kernel.line + nested[0].lineno - 1} sits inside a block")
        raise NotRowPartial(
            "; ".join(reasons) if reasons else "the kernel has no tl.atomic_add whose cells programs share"
        )
    return targets


def _is_atomic(node: ast.AST) -> bool:
    return (tl_name(node) or "").startswith("atomic_")


def _accumulator_dtype(request: RewriteRequest, pointer: ast.expr) -> str:
    """float32, or the buffer's own integer type (integer sums stay exact)."""
    base = _terms(pointer)[0]
    buffer = base.id if isinstance(base, ast.Name) else None
    args = request.profile.signatures[0].args if request.profile.signatures else []
    dtype = next((a.dtype for a in args if a.name == buffer and a.kind == "tensor"), None) or ""
    found = re.fullmatch(r"(?:torch\.)?(u?int(?:8|16|32|64))", dtype)
    return f"tl.{found.group(1)}" if found else "tl.float32"


# --- shapes of block expressions: a tuple of dimensions as written, () for a scalar, None unknown ---

Shape = tuple[str, ...] | None
_ELEMENTWISE = {"where", "maximum", "minimum", "fma", "clamp", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt"}
_ELEMENTWISE |= {"sigmoid", "sin", "cos", "floor", "ceil", "erf", "fdiv", "div_rn", "cast", "load"}
_REDUCTIONS = {"sum", "max", "min", "xor_sum", "argmax", "argmin", "reduce_or"}


def _shapes(fn: ast.FunctionDef) -> dict[str, Shape]:
    """The shape of each name, from its assignments in order (the last one wins)."""
    shapes: dict[str, Shape] = {}
    assignments = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Assign)), key=lambda n: n.lineno)
    for node in assignments:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            shapes[node.targets[0].id] = _shape(node.value, shapes)
    return shapes


def _broadcast(*shapes: Shape) -> Shape:
    if any(s is None for s in shapes):
        return None
    rank = max(len(s) for s in shapes if s is not None)
    out: list[str] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if s is not None and len(s) - rank + i >= 0} - {"1"}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else "1")
    return tuple(out)


def _shape(expr: ast.expr, shapes: dict[str, Shape]) -> Shape:
    if isinstance(expr, ast.Constant):
        return ()
    if isinstance(expr, ast.Name):
        return shapes.get(expr.id, ())  # parameters and module constants are scalars
    if isinstance(expr, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp)):
        parts = {
            ast.BinOp: lambda e: [e.left, e.right],
            ast.BoolOp: lambda e: e.values,
            ast.Compare: lambda e: [e.left, *e.comparators],
            ast.IfExp: lambda e: [e.body, e.orelse],
        }[type(expr)](expr)
        return _broadcast(*(_shape(p, shapes) for p in parts))
    if isinstance(expr, ast.UnaryOp):
        return _shape(expr.operand, shapes)
    if isinstance(expr, ast.Subscript):
        return _indexed(_shape(expr.value, shapes), expr.slice)
    if isinstance(expr, ast.Call):
        return _call_shape(expr, shapes)
    return None


def _indexed(shape: Shape, index: ast.expr) -> Shape:
    """`x[:, None]`-style indexing: each `None` adds a dimension of 1, each `:` keeps one."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    if shape is None or not all(_is_full_slice(i) or _is_none(i) for i in items):
        return None
    kept = iter(shape)
    out = tuple("1" if _is_none(i) else next(kept, "?") for i in items)
    return None if "?" in out else out + tuple(kept)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_full_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _call_shape(call: ast.Call, shapes: dict[str, Shape]) -> Shape:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and tl_name(call) is None:
        return _shape(call.func.value, shapes)
    name = tl_name(call)
    if name in ("program_id", "num_programs", "cdiv"):
        return ()
    if name == "arange" and len(call.args) == 2:
        start, stop = call.args
        if isinstance(start, ast.Constant) and start.value == 0:
            return (ast.unparse(stop),)
        if isinstance(start, ast.Constant) and isinstance(stop, ast.Constant):
            # the values of tl.arange's bounds are ints; cast for the stubs' union of constant types
            return (str(cast(int, stop.value) - cast(int, start.value)),)
        return None
    if name in ("zeros", "full") and call.args and isinstance(call.args[0], (ast.Tuple, ast.List)):
        return tuple(ast.unparse(d) for d in call.args[0].elts)
    if name in _ELEMENTWISE:
        args = call.args[:1] if name in ("load", "cast") else call.args
        return _broadcast(*(_shape(a, shapes) for a in args))
    if name in _REDUCTIONS and call.args:
        inner = _shape(call.args[0], shapes)
        axis = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
        if inner is None or axis is None or _is_none(axis):
            return None if inner is None else ()
        if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and -len(inner) <= axis.value < len(inner):
            return inner[: axis.value % len(inner)] + inner[axis.value % len(inner) + 1 :]
    return None


# --- the launcher: one launch, its grid, the row count ---


def _single_launch(launcher: ast.FunctionDef, kernel: str) -> ast.Call:
    calls = [n for n in ast.walk(launcher) if isinstance(n, ast.Call) and launch_call(n, kernel) is n]
    if len(calls) != 1:
        raise NotRowPartial(
            f"the launcher launches {kernel}[grid](...) {len(calls)} times; the recipe rewrites exactly one launch"
        )
    return calls[0]


def _row_count(launcher: ast.FunctionDef, call: ast.Call) -> tuple[ast.expr, ast.stmt]:
    """The grid's only element (the row count) and the statement that holds it."""
    written = grid = grid_of(call)
    holder: ast.stmt | None = None
    if isinstance(grid, ast.Name):
        holder = next(
            (
                s
                for s in ast.walk(launcher)
                if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == grid.id for t in s.targets)
            ),
            None,
        )
        grid = holder.value if isinstance(holder, ast.Assign) else grid
    if isinstance(grid, ast.Lambda):
        grid = grid.body
    if not isinstance(grid, ast.Tuple) or len(grid.elts) != 1:
        raise NotRowPartial(f"the grid `{ast.unparse(written)}` is not a one-element tuple of the row count")
    statement = holder or next(
        s
        for s in ast.walk(launcher)
        if isinstance(s, ast.stmt) and not hasattr(s, "body") and s.lineno <= call.lineno <= last_line(s)
    )
    return grid.elts[0], statement


def _rows_per_program(request: RewriteRequest) -> int:
    """The largest power of two up to MAX_ROWS that leaves at least MIN_PROGRAMS programs (or two per
    SM) for the recorded row count: fewer atomics per cell without emptying the GPU."""
    grid = request.profile.signatures[0].grid if request.profile.signatures else []
    if not grid:
        return DEFAULT_ROWS
    floor = max(MIN_PROGRAMS, 2 * (request.hardware.sm_count or 0))
    rows = 2
    while rows * 2 <= MAX_ROWS and -(-grid[0] // (rows * 2)) >= floor:
        rows *= 2
    return rows


def _launcher_text(
    source: str, call: ast.Call, size: ast.expr, statement: ast.stmt, rows: int, new_param: str | None
) -> str:
    lines = source.splitlines()
    if new_param is not None:
        items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
        last = max(items, key=lambda n: (n.lineno, n.col_offset), default=None)
        if last is None:
            raise NotRowPartial("the launch passes no arguments to add the row count to")
        append_item(lines, last, f"{new_param}={ast.unparse(size)}")
    text = replace_spans("\n".join(lines) + "\n", [(size, f"triton.cdiv({ast.unparse(size)}, {rows})")])
    lines = text.splitlines()
    indent = indent_of(lines[statement.lineno - 1])
    lines.insert(
        statement.lineno - 1,
        f"{indent}# intelliperf recipe rows-per-program: {rows} rows per program, one atomic per program for them",
    )
    return "\n".join(lines) + "\n"


# --- the kernel: hoisted statements, the row loop, the atomics after it ---


def _hoistable(fn: ast.FunctionDef, dependent: set[str], targets: list[_Target]) -> set[int]:
    """ids of the top-level statements that run once per program before the loop: assignments that
    do not read the row, of names assigned nowhere else, before any store or atomic."""
    counts: dict[str, int] = {}
    for node in ast.walk(fn):
        for name in _bound_here(node):
            counts[name] = counts.get(name, 0) + 1
    locals_ = set(counts)
    hoisted: set[int] = set()
    ready: set[str] = set()
    for stmt in fn.body:
        if any(stmt is t.stmt for t in targets) or _has_effect(stmt):
            break
        names = _assigned_names(stmt)
        reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if (
            isinstance(stmt, ast.Assign)
            and not _reads_row(stmt.value, dependent)
            and all(counts.get(n) == 1 for n in names)
            and (reads & locals_) <= ready
        ):
            hoisted.add(id(stmt))
            ready |= names
    return hoisted


def _has_effect(stmt: ast.stmt) -> bool:
    return any(tl_name(n) in ("store", "debug_barrier") or _is_atomic(n) for n in ast.walk(stmt))


def _chunks(lines: list[str], fn: ast.FunctionDef) -> tuple[list[str], list[tuple[ast.stmt, list[str]]]]:
    """The signature's lines, and each top-level statement with the comment and blank lines above it."""
    out = []
    start = fn.body[0].lineno - 1
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    head = lines[:start]
    for stmt in fn.body:
        out.append((stmt, lines[start : last_line(stmt)]))
        start = last_line(stmt)
    return head, out


def _shape_text(shape: tuple[str, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(shape)})"


def _kernel_text(
    source: str,
    fn: ast.FunctionDef,
    targets: list[_Target],
    rows: int,
    extent: str,
    new_param: str | None,
    taken: set[str],
) -> str:
    dependent = _row_dependent(fn)
    hoisted = _hoistable(fn, dependent, targets)
    ready = {n for s in fn.body if id(s) in hoisted for n in _assigned_names(s)} | {a.arg for a in fn.args.args}
    for target in targets:
        pieces = [target.pointer] + ([target.mask] if target.mask is not None else [])
        needs = {n.id for p in pieces for n in ast.walk(p) if isinstance(n, ast.Name)} & _locals(fn)
        if not needs <= ready:
            raise NotRowPartial(
                f"the atomic's address or mask uses {', '.join(sorted(needs - ready))}, computed inside the "
                "row's work, so the one atomic after the loop could not read it"
            )
    row, first, step = (fresh_name(taken, n) for n in ("row_index", "first_row", "row_step"))
    for target in targets:
        first_term = _terms(target.pointer)[0]
        base = first_term.id if isinstance(first_term, ast.Name) else "sum"
        target.name = fresh_name(taken, "partial_" + re.sub(r"_?ptr$", "", base, flags=re.I).lower())
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and _program_axis(n) == 0]
    if any(last_line(c) != c.lineno for c in calls):
        raise NotRowPartial("a tl.program_id(0) call spans several lines")
    lines = replace_spans(source, [(c, row) for c in calls]).splitlines()
    head, chunks = _chunks(lines, fn)
    if new_param is not None:  # in the signature's own lines, so the body's line numbers stay valid
        append_item(head, fn.args.args[-1], new_param)
    indent = indent_of(lines[fn.body[0].lineno - 1])
    before, inside = [], []
    for stmt, text in chunks:
        owner = next((t for t in targets if t.stmt is stmt), None)
        if owner is not None:
            text = [x for x in text if x.strip().startswith("#") or not x.strip()] + [indent + _accumulate(owner)]
        if id(stmt) in hoisted or _is_docstring(stmt, fn):
            before += text
        else:
            inside += [("    " + x) if x.strip() else x for x in text]
    zeros = [f"{t.name} = tl.zeros({_shape_text(t.shape)}, dtype={t.dtype})" for t in targets]
    loop = [
        f"# intelliperf recipe rows-per-program: {rows} consecutive rows per program; the atomics after the loop",
        "# add each program's partial sums once instead of once per row",
        f"{first} = tl.program_id(0) * {rows}",
        *zeros,
        f"for {step} in range(0, tl.minimum({rows}, {extent} - {first})):",
        f"    {row} = {first} + {step}",
    ]
    after = [_final_atomic(t, {a.arg for a in fn.args.args}) for t in targets]
    body = before + [indent + x for x in loop] + inside + [indent + x for x in after]
    return "\n".join(head + body) + "\n"


def _terms(expr: ast.expr) -> list[ast.expr]:
    """The operands of a chain of additions, left to right."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _locals(fn: ast.FunctionDef) -> set[str]:
    return {n for s in ast.walk(fn) if isinstance(s, ast.stmt) for n in _assigned_names(s)}


def _is_docstring(stmt: ast.stmt, fn: ast.FunctionDef) -> bool:
    return stmt is fn.body[0] and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _accumulate(target: _Target) -> str:
    value = ast.unparse(target.value)
    if target.mask is not None:
        value = f"tl.where({ast.unparse(target.mask)}, {value}, 0)"
    elif not isinstance(target.value, ast.Constant):
        value = f"({value})"
    cast = "" if isinstance(target.value, ast.Constant) and target.mask is None else f".to({target.dtype})"
    return f"{target.name} += {value}{cast}"


def _final_atomic(target: _Target, params: set[str]) -> str:
    pointer = ast.unparse(target.pointer)
    base = _terms(target.pointer)[0]
    buffer = ast.unparse(base) if isinstance(base, ast.Name) and base.id in params else f"({pointer})"
    element = f"{buffer}.dtype.element_ty"
    args = [pointer, f"{target.name}.to({element})"]
    if target.mask is not None:
        args.append(f"mask={ast.unparse(target.mask)}")
    args += [ast.unparse(k) for k in target.extra]
    return f"tl.atomic_add({', '.join(args)})"
