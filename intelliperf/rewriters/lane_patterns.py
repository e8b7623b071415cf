"""The syntax patterns both laneUtilization recipes (pack_rows.py, split_row.py) match and edit.

The kernel parsed (its assignments, calls and constexpr parameters), what it may contain (straight-
line code of elementwise calls, no autotuner), its one lane range `tl.arange(0, BLOCK)` and the
`offs < n` bound that masks every access on it, the launch that passes BLOCK and its grid, and the
character-offset edits both recipes make to the kernel and the launcher (new parameters and
keywords, masks, grid sizes). Anything a recipe cannot read raises NotPackable with one sentence.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .kernel_syntax import tl_name
from .source import grid_of, launch_call, lines_of, node_span

ELEMENTWISE = {
    "load", "store", "where", "arange", "program_id", "cdiv", "maximum", "minimum", "abs", "exp", "exp2",
    "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "sin", "cos", "floor", "ceil", "fma", "clamp",
    "erf", "fdiv", "div_rn", "umulhi", "cast", "multiple_of", "max_contiguous", "max_constancy",
}  # fmt: skip
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum"}
SCANS = {"cumsum", "cumprod"}
TENSOR_METHODS = {"to", "cast"}
MATH_MODULES = ("tl.math", "tl.extra.cuda.libdevice", "libdevice", "triton.language.math")


class NotPackable(Exception):
    """The kernel is not of the shape the recipe rewrites (the message says why, in one sentence)."""


# --- the kernel, parsed ---------------------------------------------------------------------------


@dataclass
class ParsedKernel:
    request: RewriteRequest
    fn: ast.FunctionDef
    definitions: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> every value bound to it

    @property
    def params(self) -> list[str]:
        return [a.arg for a in self.fn.args.args]

    def constexpr_params(self) -> set[str]:
        args = self.fn.args.args
        return {a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}

    def calls(self) -> list[ast.Call]:
        """Every call in the kernel's body."""
        return calls_in(_body(self.fn))

    def where(self, node: ast.AST) -> str:
        return f"line {self.request.kernel.line + getattr(node, 'lineno', 1) - 1}"

    def depends(self, expr: ast.AST | None, roots: set[str]) -> bool:
        """Whether `expr` reads one of `roots` (names), through the kernel's assignments."""
        return bool(_names_in(expr) & self.tainted(roots)) if expr is not None else False

    def tainted(self, roots: set[str]) -> set[str]:
        """`roots` and every name some definition of which reads one of them."""
        out = set(roots)
        grew = True
        while grew:
            grew = False
            for name, values in self.definitions.items():
                if name not in out and any(_names_in(v) & out for v in values):
                    out.add(name)
                    grew = True
        return out


def _body(fn: ast.FunctionDef) -> ast.Module:
    """The function's statements, without its decorators and signature."""
    return ast.Module(body=fn.body, type_ignores=[])


def _names_in(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def calls_in(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def parse_kernel(request: RewriteRequest) -> ParsedKernel:
    fn = ast.parse(request.kernel.source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise NotPackable(f"{request.kernel.name} is not a plain function")
    kernel = ParsedKernel(request, fn)
    for node in ast.walk(_body(fn)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    kernel.definitions.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            kernel.definitions.setdefault(node.target.id, []).append(node.value)
    return kernel


# --- what the kernel may contain ------------------------------------------------------------------


def check_straight_line(kernel: ParsedKernel, body: list[ast.stmt]) -> None:
    """Assignments, stores and branches on constexprs only: every lane runs every statement once."""
    for stmt in body:
        if isinstance(stmt, (ast.Pass, ast.Assign, ast.AugAssign)) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Constant, ast.Call))
        ):
            if isinstance(stmt, ast.Assign) and not all(isinstance(t, ast.Name) for t in stmt.targets):
                raise NotPackable(f"{kernel.where(stmt)} assigns to `{ast.unparse(stmt.targets[0])}`, not a name")
            continue
        if isinstance(stmt, ast.If) and _names_in(stmt.test) <= kernel.constexpr_params():
            check_straight_line(kernel, stmt.body + stmt.orelse)
            continue
        kind = {ast.For: "a loop", ast.While: "a loop", ast.If: "a branch on run-time values"}.get(
            type(stmt), f"a `{type(stmt).__name__}` statement"
        )
        first = ast.unparse(stmt).splitlines()[0]
        raise NotPackable(
            f"{kernel.where(stmt)} of the kernel is {kind} (`{first}`), and the recipe rewrites straight-line "
            "kernels whose block covers a row at once"
        )


def check_calls(kernel: ParsedKernel, allowed_tl: set[str]) -> None:
    helpers = _helpers(kernel.request)
    for call in kernel.calls():
        name = tl_name(call)
        if name is not None:
            if name not in allowed_tl:
                raise NotPackable(
                    f"{kernel.where(call)}: `tl.{name}` is not an operation the recipe can carry to a fitted block"
                )
        elif not _elementwise_call(call, helpers, depth=0):
            raise NotPackable(
                f"{kernel.where(call)}: `{ast.unparse(call.func)}` is a call the recipe cannot see to be elementwise"
            )


def _elementwise_call(call: ast.Call, helpers: dict[str, list[ast.stmt]], depth: int) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS:
        return True
    if isinstance(func, ast.Attribute) and ast.unparse(func.value) in MATH_MODULES:
        return True
    if tl_name(call) is not None:
        return tl_name(call) in ELEMENTWISE
    if isinstance(func, ast.Name) and func.id in helpers and depth < 3:
        return all(_elementwise_definition(d, helpers, depth) for d in helpers[func.id])
    return False


def _elementwise_definition(definition: ast.stmt, helpers: dict[str, list[ast.stmt]], depth: int) -> bool:
    """A helper the kernel calls: a libdevice/tl.math import, or a @triton.jit function of
    assignments and a return, all of elementwise calls."""
    if isinstance(definition, ast.ImportFrom):
        return "libdevice" in (definition.module or "") or (definition.module or "").endswith("language.math")
    if not isinstance(definition, ast.FunctionDef):
        return False
    for stmt in definition.body:
        if not isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)):
            return False
    return all(_elementwise_call(c, helpers, depth + 1) for c in calls_in(definition))


def _helpers(request: RewriteRequest) -> dict[str, list[ast.stmt]]:
    """Module-level definitions and imports of the kernel's file, by name (also those under a
    top-level `if`, where a program picks the interpreter's or libdevice's version)."""
    try:
        tree = ast.parse(Path(request.kernel.file).read_text())
    except (OSError, SyntaxError):
        return {}
    out: dict[str, list[ast.stmt]] = {}
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            todo += node.body + node.orelse
        elif isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                out.setdefault(alias.asname or alias.name, []).append(node)
    return out


# --- the lanes and their bound --------------------------------------------------------------------


@dataclass
class Lanes:
    arange: ast.Call
    name: str | None  # the name bound to the bare `tl.arange(0, BLOCK)`, if any
    block: str  # the constexpr parameter BLOCK
    bound: ast.expr  # n, over the kernel's parameters
    recorded_block: int
    recorded_n: int


def find_lanes(kernel: ParsedKernel) -> Lanes:
    for node in ast.walk(_body(kernel.fn)):
        if isinstance(node, ast.Subscript):
            raise NotPackable(f"{kernel.where(node)}: the kernel already indexes a block (`{ast.unparse(node)}`)")
    ranges = [c for c in kernel.calls() if tl_name(c) == "arange"]
    if len(ranges) != 1:
        raise NotPackable(f"the kernel has {len(ranges)} `tl.arange` lane ranges; the recipe fits exactly one")
    arange = ranges[0]
    size = arange.args[1] if len(arange.args) == 2 else None
    start = arange.args[0] if arange.args else None
    if not (isinstance(start, ast.Constant) and start.value == 0 and isinstance(size, ast.Name)):
        raise NotPackable(f"{kernel.where(arange)}: `{ast.unparse(arange)}` is not `tl.arange(0, BLOCK)`")
    if size.id not in kernel.constexpr_params():
        raise NotPackable(f"{kernel.where(arange)}: the lane count `{size.id}` is not a constexpr parameter")
    uses = [n for n in ast.walk(_body(kernel.fn)) if isinstance(n, ast.Name) and n.id == size.id]
    if len(uses) > 1:
        raise NotPackable(f"`{size.id}` is used beyond the lane range, so it cannot be fitted to the data")
    name = next((n for n, vs in kernel.definitions.items() if any(v is arange for v in vs)), None)
    if name is not None and len(kernel.definitions[name]) > 1:
        raise NotPackable(f"the lane offsets `{name}` are assigned more than once")
    bound = _common_bound(kernel, arange, name)
    recorded = kernel.request.constexprs()
    block = recorded.get(size.id)
    if not isinstance(block, int):
        raise NotPackable(f"the recorded launch has no value for `{size.id}`")
    n = _recorded_extent(kernel, bound)
    return Lanes(arange, name, size.id, bound, block, n)


def accesses(kernel: ParsedKernel) -> list[ast.Call]:
    return [c for c in kernel.calls() if tl_name(c) in ("load", "store")]


def _common_bound(kernel: ParsedKernel, arange: ast.Call, lane: str | None) -> ast.expr:
    """The `n` of `offs < n` that masks every access on the lanes (one expression for all of them)."""
    lane_names = {lane} if lane else set()
    bounds: dict[str, ast.expr] = {}
    for access in accesses(kernel):
        pointer = access.args[0] if access.args else next(k.value for k in access.keywords if k.arg == "pointer")
        if not (kernel.depends(pointer, lane_names) or any(c is arange for c in calls_in(pointer))):
            continue
        found = _bounds(kernel, _mask_of(access), arange, lane)
        if not found:
            raise NotPackable(
                f"{kernel.where(access)}: `{ast.unparse(access)[:60]}` uses the lanes without an `offs < n` "
                "mask, so every lane of the block does work"
            )
        bounds.update({ast.unparse(b): b for b in found})
    if not bounds:
        raise NotPackable("no load or store addresses memory with the lanes")
    if len(bounds) > 1:
        raise NotPackable(f"the lanes are bounded by different extents ({', '.join(sorted(bounds))})")
    (bound,) = bounds.values()
    return _resolved(kernel, bound)


def _mask_of(access: ast.Call) -> ast.expr | None:
    position = 2 if tl_name(access) == "store" else 1
    if len(access.args) > position:
        return access.args[position]
    return next((k.value for k in access.keywords if k.arg == "mask"), None)


def _bounds(kernel: ParsedKernel, mask: ast.expr | None, arange: ast.Call, lane: str | None) -> list[ast.expr]:
    """The `n` of each `offs < n` conjoined in the mask (through the kernel's assignments)."""
    if mask is None:
        return []
    if isinstance(mask, ast.Name) and len(kernel.definitions.get(mask.id, [])) == 1:
        return _bounds(kernel, kernel.definitions[mask.id][0], arange, lane)
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        return _bounds(kernel, mask.left, arange, lane) + _bounds(kernel, mask.right, arange, lane)
    if isinstance(mask, ast.BoolOp) and isinstance(mask.op, ast.And):
        return [b for v in mask.values for b in _bounds(kernel, v, arange, lane)]

    def is_lane(node: ast.expr) -> bool:
        return node is arange or (isinstance(node, ast.Name) and node.id == lane)

    if isinstance(mask, ast.Compare) and len(mask.ops) == 1:
        left, op, right = mask.left, mask.ops[0], mask.comparators[0]
        if isinstance(op, ast.Lt) and is_lane(left):
            return [right]
        if isinstance(op, ast.Gt) and is_lane(right):
            return [left]
    return []


def _resolved(kernel: ParsedKernel, expr: ast.expr) -> ast.expr:
    """`expr` with the kernel's single-assignment locals replaced by their values, down to parameters."""
    params = set(kernel.params)

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            values = kernel.definitions.get(node.id, [])
            if node.id in params or len(values) != 1:
                return node
            return self.visit(ast.parse(ast.unparse(values[0]), mode="eval").body)

    out = Inline().visit(ast.parse(ast.unparse(expr), mode="eval").body)
    loose = _names_in(out) - params
    if loose:
        raise NotPackable(f"the lane bound `{ast.unparse(expr)}` depends on `{sorted(loose)[0]}`, not on arguments")
    if kernel.depends(out, _program_names(kernel)):
        raise NotPackable(f"the lane bound `{ast.unparse(expr)}` differs from program to program")
    return out


def _program_names(kernel: ParsedKernel) -> set[str]:
    defined = kernel.definitions.items()
    return {n for n, vs in defined if any(tl_name(c) == "program_id" for v in vs for c in calls_in(v))}


def _recorded_extent(kernel: ParsedKernel, bound: ast.expr) -> int:
    args = kernel.request.profile.signatures[0].args if kernel.request.profile.signatures else []
    values = {a.name: a.value for a in args if a.kind in ("scalar", "constexpr") and isinstance(a.value, int)}
    value = _evaluate(bound, values)
    if value is None:  # the traced accesses' active lanes per call, where the arguments do not say
        per_call = [round(s.lanes / s.calls) for s in kernel.request.sites if s.calls and not s.is_atomic]
        value = max(per_call, default=None)
    if value is None:
        raise NotPackable(f"the recorded launch does not give the value of the lane bound `{ast.unparse(bound)}`")
    return value


_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None,
    ast.Mod: lambda a, b: a % b if b else None,
}


def _evaluate(expr: ast.expr, values: dict[str, int]) -> int | None:
    """Integer arithmetic over the recorded arguments; None when anything else is involved."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int):
        return expr.value
    if isinstance(expr, ast.Name):
        return values.get(expr.id)
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPS:
        left, right = _evaluate(expr.left, values), _evaluate(expr.right, values)
        return None if left is None or right is None else _OPS[type(expr.op)](left, right)
    return None


def next_power_of_2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


# --- the launch -----------------------------------------------------------------------------------


@dataclass
class Launch:
    source: str
    tree: ast.Module
    call: ast.Call
    statement: ast.stmt
    arguments: dict[str, ast.expr]  # kernel parameter -> the expression the launch passes

    def passed(self, param: str, why: str) -> ast.expr:
        if param not in self.arguments:
            raise NotPackable(f"the launch does not pass `{param}` ({why})")
        return self.arguments[param]

    def in_launcher(self, expr: ast.expr) -> str:
        """A kernel-side expression over parameters, written over the launch's arguments."""
        arguments = self.arguments

        class Substitute(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                if node.id not in arguments:
                    raise NotPackable(f"the launch does not pass `{node.id}`, which the lane bound reads")
                return arguments[node.id]

        return ast.unparse(Substitute().visit(ast.parse(ast.unparse(expr), mode="eval").body))


def find_launch(kernel: ParsedKernel) -> Launch:
    request = kernel.request
    if request.launcher is None:
        raise NotPackable("the launch cannot be rewritten (it is outside the project), and the grid must change")
    source = textwrap.dedent(request.launcher.source)
    tree = ast.parse(source)
    call = launch_call(tree, request.kernel.name)
    if call is None:
        raise NotPackable(f"the launcher does not launch {request.kernel.name}[grid](...) directly")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise NotPackable("the launch passes arguments through `*` or `**`, so the recipe cannot read them")
    statement = min(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.stmt)
            and not hasattr(n, "body")
            and n.lineno <= call.lineno
            and last_line(n) >= last_line(call)
        ),
        key=lambda n: last_line(n) - n.lineno,
    )
    arguments = dict(zip(kernel.params, call.args, strict=False)) | {k.arg: k.value for k in call.keywords if k.arg}
    return Launch(source, tree, call, statement, arguments)


@dataclass
class Grid:
    sizes: list[str]  # each axis's size, as an expression valid at the launch
    elements: list[ast.expr]  # the tuple's elements, edited in place when `named` is None
    named: ast.Name | None  # the launch's `grid` when it names a tuple built earlier


def read_grid(launch: Launch) -> Grid:
    """The launch's grid: a tuple written at the launch, a lambda's tuple (evaluated at the launch,
    so it is edited in place), or a name bound once to a tuple (replaced at the launch by its items)."""
    grid = grid_of(launch.call)
    if isinstance(grid, ast.Name):
        bound = [
            n.value
            for n in ast.walk(launch.tree)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == grid.id for t in n.targets)
        ]
        if len(bound) != 1:
            raise NotPackable(f"the grid `{grid.id}` is not assigned once in the launcher")
        if isinstance(bound[0], ast.Tuple) and not any(isinstance(e, ast.Starred) for e in bound[0].elts):
            return Grid([f"{grid.id}[{i}]" for i in range(len(bound[0].elts))], bound[0].elts, grid)
        grid = bound[0]
    if isinstance(grid, ast.Lambda):
        grid = grid.body
    if not isinstance(grid, ast.Tuple) or any(isinstance(e, ast.Starred) for e in grid.elts):
        raise NotPackable(f"the grid `{ast.unparse(grid_of(launch.call))}` is not a tuple the recipe can read")
    return Grid([ast.unparse(e) for e in grid.elts], grid.elts, None)


# --- edits ----------------------------------------------------------------------------------------

Edit = tuple[int, int, str]  # (start, stop, new text) as character offsets
Spanned = ast.expr | ast.stmt | ast.keyword  # what node_span measures


def replace_edit(text: str, node: Spanned, new: str) -> Edit:
    return (*node_span(text, node), new)


def _after(text: str, node: Spanned | ast.arg, new: str) -> Edit:
    stop = node_span(text, cast(Spanned, node))[1]  # a parameter has a span as an expression does
    return (stop, stop, new)


def _before(text: str, node: Spanned, new: str) -> Edit:
    start = node_span(text, node)[0]
    return (start, start, new)


def lines_before_edit(text: str, stmt: ast.stmt, lines: list[str]) -> Edit:
    """New lines inserted above the statement, at its indentation."""
    offset = sum(len(line) for line in lines_of(text, keepends=True)[: stmt.lineno - 1])
    indent = indent_of(lines_of(text)[stmt.lineno - 1])
    return (offset, offset, "".join(f"{indent}{line}\n" for line in lines))


def apply_edits(text: str, edits: list[Edit]) -> str:
    for start, stop, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[stop:]
    return text


def masked_edits(text: str, call: ast.Call, bound: str) -> list[Edit]:
    """Edits that AND `bound` into the access's mask (or give it one)."""
    mask = _mask_of(call)
    if isinstance(mask, (ast.Name, ast.Call, ast.Attribute)):
        return [_after(text, mask, f" & ({bound})")]
    if mask is not None:
        return [_before(text, mask, "("), _after(text, mask, f") & ({bound})")]
    stop = node_span(text, call)[1] - 1  # the closing parenthesis
    return [(stop, stop, f", mask={bound}")]


def new_params_edit(kernel: ParsedKernel, text: str, names: list[str]) -> Edit:
    """Parameters appended to the kernel's signature (with defaults when the last one has one)."""
    taken = set(kernel.params) | set(kernel.definitions)
    clash = [n for n in names if n in taken]
    if clash:
        raise NotPackable(f"the kernel already uses the name `{clash[0]}` the recipe would add")
    args = kernel.fn.args
    last = args.defaults[-1] if args.defaults else args.args[-1]
    default = " = 1" if args.defaults else ""
    written = [f"{n}: tl.constexpr{default}" if n.isupper() else f"{n}{default}" for n in names]
    return _after(text, last, "".join(f", {w}" for w in written))


def new_keywords_edit(launch: Launch, keywords: dict[str, str]) -> Edit:
    """Keyword arguments appended to the launch (before a trailing comma, if it has one)."""
    items: list[Spanned] = [*launch.call.args, *launch.call.keywords]
    start = node_span(launch.source, items[-1])[1] if items else node_span(launch.source, launch.call)[1] - 1
    sep = ", " if items else ""
    return (start, start, sep + ", ".join(f"{k}={v}" for k, v in keywords.items()))


def check_not_autotuned(kernel: ParsedKernel) -> None:
    for decorator in kernel.fn.decorator_list:
        if "autotune" in ast.unparse(decorator):
            raise NotPackable("the kernel is autotuned, so its block size is not the launcher's to fit")


def axis_of(call: ast.Call) -> int | None:
    given = call.args or [k.value for k in call.keywords if k.arg == "axis"]
    value = given[0].value if given and isinstance(given[0], ast.Constant) else None
    return value if isinstance(value, int) else None


def grid_edits(launch: Launch, number: int, size: str) -> list[Edit]:
    """Edits that give grid axis `number` the size `size` (an axis past the last is appended)."""
    text, grid = launch.source, read_grid(launch)
    if grid.named is not None:
        sizes = [*grid.sizes, size][: max(number + 1, len(grid.sizes))]
        sizes[number] = size
        return [replace_edit(text, grid.named, "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")")]
    if number < len(grid.elements):
        return [replace_edit(text, grid.elements[number], size)]
    return [_after(text, grid.elements[-1], f", {size}")]
