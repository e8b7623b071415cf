"""Syntax-tree helpers the offline rewriters share: reading a kernel's `tl.*` calls, its function and
range loops, a launcher's text and arguments, and small edits (a fresh name, an item appended to a
list of arguments or parameters).

Each recipe keeps its own parsing of the pattern it rewrites (and its own exception for a kernel
that does not match); what is here reads or writes the source the same way for every caller.
"""

from __future__ import annotations

import ast
import textwrap

from ..syntax import end, indent_of
from .base import RewriteRequest


def tl_name(node: ast.AST) -> str | None:
    """`x` of a `tl.x(...)` call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if ast.unparse(node.func.value) in ("tl", "triton.language"):
            return node.func.attr
    return None


def fresh_name(taken: set[str], name: str) -> str:
    """`name`, or `name_2`, `name_3`... the first not used in the kernel."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}_{number}"
    taken.add(candidate)
    return candidate


def append_item(lines: list[str], last: ast.expr | ast.keyword | ast.arg, item: str) -> None:
    """Add `item` after `last` in a list of arguments or parameters: on a line of its own when the
    items are written one per line (`last,` ends its line), else after it on the same line."""
    line, column = end(last)
    rest = lines[line - 1][column:].strip()
    if rest.startswith(",") and not rest[1:].split("#")[0].strip():
        lines.insert(line, f"{indent_of(lines[last.lineno - 1])}{item},")
    else:
        lines[line - 1] = lines[line - 1][:column] + f", {item}" + lines[line - 1][column:]


def passed_as(call: ast.Call, params: list[str], size: ast.expr) -> str | None:
    """The kernel parameter that receives `size` (a grid extent such as the row count), if the launch passes it."""
    text = ast.unparse(size)
    if not any(isinstance(a, ast.Starred) for a in call.args):
        for param, arg in zip(params, call.args, strict=False):
            if ast.unparse(arg) == text:
                return param
    return next((k.arg for k in call.keywords if k.arg in params and ast.unparse(k.value) == text), None)


def flagged_elem_bytes(request: RewriteRequest) -> int:
    """The smallest element size of the traced accesses on the finding's flagged lines (4 when none)."""
    flagged = {src.line for src in request.finding.lines}
    sizes = [s.elem_bytes for s in request.sites if s.line in flagged] or [4]
    return min(sizes)


def plain_function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The function the source defines first (ValueError when it starts with anything else)."""
    fn = ast.parse(source).body[0]
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError("the kernel is not a plain function")
    return fn


def decorator_name(dec: ast.Call) -> str:
    """`autotune` of `@triton.autotune(...)`."""
    return ast.unparse(dec.func).rsplit(".", 1)[-1]


def range_loops(tree: ast.AST) -> list[tuple[ast.For, ast.Call]]:
    """`for` loops over `range(...)` or `tl.range(...)` (not static_range: it is unrolled), with that call."""
    return [
        (n, n.iter)
        for n in ast.walk(tree)
        if isinstance(n, ast.For)
        and isinstance(n.iter, ast.Call)
        and ast.unparse(n.iter.func) in ("range", "tl.range", "triton.language.range")
    ]


def launcher_source(request: RewriteRequest) -> str:
    """The launcher's text, dedented (ValueError when the launch is outside the project)."""
    if request.launcher is None:
        raise ValueError("the launch cannot be rewritten (it is outside the project)")
    return textwrap.dedent(request.launcher.source)
