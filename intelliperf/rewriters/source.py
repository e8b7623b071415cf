"""The kernel and launcher as source text: find them, splice new versions in, check the scope.

A candidate may change the `@triton.jit` kernel and the launch: the Python function that
launches it when that is a top-level function or method, otherwise the launch statement itself
(`kernel[grid](...)` at module level, under `if __name__ == "__main__":`, in a nested function).
Everything here works on text plus `ast` positions, so the user's comments and formatting
outside the changed code survive byte for byte; edits inside it replace exact node spans.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from pydantic import BaseModel

from ..syntax import end, indent_of, last_line

Node = ast.stmt | ast.expr | ast.keyword  # what has a span in the source
BLOCK_FORBIDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)

LAUNCH = "<launch@"  # qualname prefix of a launch-statement unit: <launch@LINE>


_NEWLINE = re.compile(r"\r\n|\r|\n")


def lines_of(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as Python's tokenizer counts them, which `ast` line numbers index:
    str.splitlines also breaks at form feeds, U+2028 and other separators that may sit in a
    comment or string, which would shift every line after them."""
    lines, start = [], 0
    for newline in _NEWLINE.finditer(text):
        lines.append(text[start : newline.end() if keepends else newline.start()])
        start = newline.end()
    return lines + [text[start:]] if start < len(text) else lines


class CodeUnit(BaseModel):
    """One function, or one launch statement, of the user's project, as the rewriter sees it."""

    name: str
    qualname: str  # Class.method, function, or <launch@LINE> for a launch statement
    file: str  # absolute
    relpath: str  # inside the project
    line: int  # first line (the first decorator)
    source: str  # the function's text, decorators included, dedented; or the statement's text

    @property
    def is_statement(self) -> bool:
        return self.qualname.startswith(LAUNCH)


class ScopeError(ValueError):
    """A candidate that is not valid Python or changes more than it may."""


class NotPython(ScopeError):
    """An answer or edit that does not parse."""


@dataclass
class _Found:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    start: int  # 1-based, first decorator
    end: int
    indent: str


def _find(tree: ast.Module, qualname: str, lines: list[str]) -> _Found | None:
    """A top-level function or a method (`Class.method`)."""
    scope: list[ast.stmt] = tree.body
    *outer, name = qualname.split(".")
    for cls in outer:
        owner = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if owner is None:
            return None
        scope = owner.body
    node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if node is None:
        return None
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    text = lines[start - 1]
    return _Found(node, start, last_line(node), indent_of(text))


def code_unit(file: Path, qualname: str, root: Path) -> CodeUnit | None:
    """The function named `qualname` in `file`, or None when it is not a top-level function or a method."""
    if "<" in qualname:  # a nested function (`f.<locals>.g`) cannot be rewritten on its own
        return None
    text = file.read_text()
    lines = lines_of(text)
    found = _find(ast.parse(text), qualname, lines)
    if found is None:
        return None
    source = textwrap.dedent("\n".join(lines[found.start - 1 : found.end])) + "\n"
    return CodeUnit(
        name=qualname.split(".")[-1],
        qualname=qualname,
        file=str(file),
        relpath=str(file.resolve().relative_to(root.resolve())),
        line=found.start,
        source=source,
    )


def launch_call(tree: ast.AST, kernel: str) -> ast.Call | None:
    """The first `kernel[grid](...)` call in `tree` (the kernel by name or as an attribute)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            target = node.func.value
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name == kernel:
                return node
    return None


def grid_of(launch: ast.Call) -> ast.expr:
    """The `grid` of a call `launch_call` found (`kernel[grid](...)`)."""
    assert isinstance(launch.func, ast.Subscript), "not a kernel[grid](...) call"
    return launch.func.slice


def _simple(node: ast.AST) -> TypeGuard[ast.stmt]:
    return isinstance(node, ast.stmt) and not any(
        isinstance(getattr(node, f, None), list) for f in ("body", "orelse", "handlers", "finalbody", "cases")
    )


def launch_statement(tree: ast.Module, kernel: str, line: int) -> ast.stmt | None:
    """The simple statement spanning `line` that launches `kernel[grid](...)`."""
    return next(
        (
            n
            for n in ast.walk(tree)
            if _simple(n) and n.lineno <= line <= last_line(n) and launch_call(n, kernel) is not None
        ),
        None,
    )


def launch_unit(file: Path, kernel: str, line: int, root: Path) -> CodeUnit | None:
    """The launch statement of `kernel` at `line` of `file`, as a unit a candidate may replace."""
    text = file.read_text()
    stmt = launch_statement(ast.parse(text), kernel, line)
    if stmt is None:
        return None
    return CodeUnit(
        name=kernel,
        qualname=f"{LAUNCH}{stmt.lineno}>",
        file=str(file),
        relpath=str(file.resolve().relative_to(root.resolve())),
        line=stmt.lineno,
        source=_span(text, stmt) + "\n",
    )


def _column(row: str, byte_col: int) -> int:
    """The character column of an ast (UTF-8 byte) column in `row`."""
    return len(row.encode()[:byte_col].decode(errors="ignore"))


def _offset(lines: list[str], line: int, byte_col: int) -> int:
    """Character offset in the text of a 1-based line and an ast (UTF-8 byte) column."""
    return sum(len(x) for x in lines[: line - 1]) + _column(lines[line - 1], byte_col)


def node_span(text: str, node: Node) -> tuple[int, int]:
    """(start, end) character offsets of `node` in `text`."""
    lines = lines_of(text, keepends=True)
    return _offset(lines, node.lineno, node.col_offset), _offset(lines, *end(node))


def _span(text: str, node: Node) -> str:
    """The node's text, continuation lines dedented by the node's own column."""
    start, end = node_span(text, node)
    column = _column(lines_of(text)[node.lineno - 1], node.col_offset)
    body = lines_of(text[start:end])
    return "\n".join(body[:1] + [b[column:] if b[:column].strip() == "" else b for b in body[1:]])


def replace_spans(text: str, edits: Sequence[tuple[Node, str]]) -> str:
    """`text` with each node's exact span replaced (no overlaps; applied right to left)."""
    spans = sorted(((*node_span(text, node), new) for node, new in edits), reverse=True)
    for start, stop, new in spans:
        text = text[:start] + new + text[stop:]
    return text


def _splice_statement(text: str, line: int, new_source: str) -> str:
    tree = ast.parse(text)
    stmt = next((n for n in ast.walk(tree) if _simple(n) and n.lineno == line), None)
    if stmt is None:
        raise ScopeError(f"the launch statement at line {line} is no longer in the file")
    try:
        body = ast.parse(textwrap.dedent(new_source)).body
    except SyntaxError as exc:
        raise ScopeError(f"the new launch statement is not valid Python: {exc.msg}") from None
    nested = [n for top in body for n in ast.walk(top) if isinstance(n, BLOCK_FORBIDS)]
    if not body or nested:
        raise ScopeError(
            "a launch statement may become a block of statements (assignments, conditions, loops and the "
            "launches), not a definition or an import"
        )
    column = " " * _column(lines_of(text)[line - 1], stmt.col_offset)
    new = textwrap.dedent(new_source).strip("\n").replace("\n", "\n" + column)
    return replace_spans(text, [(stmt, new)])


def statement_block(new_source: str, line: int) -> tuple[int, int]:
    """The lines a launch statement's replacement occupies once spliced in at `line`."""
    return line, line + len(lines_of(textwrap.dedent(new_source).strip("\n"))) - 1


def splice(text: str, qualname: str, new_source: str) -> str:
    """`text` with the function (or launch statement) `qualname` replaced by `new_source`."""
    if qualname.startswith(LAUNCH):
        return _splice_statement(text, int(qualname[len(LAUNCH) : -1]), new_source)
    lines = lines_of(text)
    found = _find(ast.parse(text), qualname, lines)
    if found is None:
        raise ScopeError(f"{qualname} is no longer in the file")
    body = lines_of(textwrap.indent(textwrap.dedent(new_source).strip("\n"), found.indent))
    out = lines[: found.start - 1] + body + lines[found.end :]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def check_scope(
    original: str,
    changed: str,
    allowed: set[str],
    kernel: str | None = None,
    launches: str | None = None,
    block: tuple[int, int] | None = None,
) -> None:
    """Raise ScopeError unless `changed` parses and differs from `original` only inside the
    top-level items named in `allowed` (qualnames of functions, names of module constants; an
    allowed name may also be new) and, when `launches` names a kernel, the simple statements that
    launch it, or the block of lines `block` (first, last) of `changed` that replaced such a
    statement; and the kernel is still a `@triton.jit` function."""
    try:
        new_tree = ast.parse(changed)
    except SyntaxError as exc:
        raise ScopeError(f"the changed file is not valid Python: {exc.msg} at line {exc.lineno}") from None
    old_tree = ast.parse(original)
    if launches:
        old_tree = _Unlaunched(launches).visit(old_tree)
        new_blank = _Unlaunched(launches, block).visit(ast.parse(changed))
    else:
        new_blank = new_tree
    old = [item for item in _outline(old_tree) if item[0] not in allowed]
    new = [item for item in _outline(new_blank) if item[0] not in allowed]
    if old != new:
        moved = sorted({name for name, _ in set(old) ^ set(new)})
        raise ScopeError(
            "only the kernel, its launcher and the kernels, helpers and constants beside them may change, "
            "but the candidate also changes: " + ", ".join(moved)
        )
    if kernel is not None:
        found = _find(new_tree, kernel, lines_of(changed))
        if found is None or not is_jit(found.node):
            raise ScopeError(f"the candidate must still define the @triton.jit function {kernel}")


class _Unlaunched(ast.NodeTransformer):
    """Every simple statement that launches the kernel becomes `pass`, and so does the block of
    lines that replaced one: those may change."""

    def __init__(self, kernel: str, block: tuple[int, int] | None = None) -> None:
        self.kernel, self.block = kernel, block

    def _inside(self, node: ast.stmt) -> bool:
        return self.block is not None and self.block[0] <= node.lineno <= self.block[1]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and self.block is not None:
                kept: list[ast.stmt] = []
                marker = None
                for stmt in stmts:
                    if not self._inside(stmt):
                        kept.append(stmt)
                    elif marker is None:  # the whole block stands where the statement stood
                        marker = ast.copy_location(ast.Pass(), stmt)
                        kept.append(marker)
                setattr(node, field, kept)
        if _simple(node) and launch_call(node, self.kernel) is not None:
            return ast.copy_location(ast.Pass(), node)
        return super().generic_visit(node)


def _outline(tree: ast.Module) -> list[tuple[str, str]]:
    """(name, dump) of every top-level statement and method: functions and classes by name, an
    assignment to one name by that name, anything else by its first line."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            rest = ast.ClassDef(**{**node.__dict__, "body": [n for n in node.body if n not in methods]})
            out.append((node.name, ast.dump(rest)))
            out += [(f"{node.name}.{m.name}", ast.dump(m)) for m in methods]
        else:
            name = item_name(node) or ast.unparse(node).splitlines()[0][:60]
            out.append((name, ast.dump(node)))
    return out


def item_name(node: ast.stmt) -> str | None:
    """The name a top-level function or single-name assignment binds; None for other statements."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def module_items(code: str) -> dict[str, str]:
    """{name: text} of the top-level functions (decorators included) and single-name assignments of
    `code`, dedented; other statements are left out."""
    text = textwrap.dedent(code)
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        name = item_name(node)
        if name is not None and not isinstance(node, ast.ClassDef):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            out[name] = "\n".join(lines_of(text)[start - 1 : last_line(node)]) + "\n"
    return out


def splice_items(text: str, items: dict[str, str], before_line: int) -> str:
    """`text` with each item (a top-level function or constant) replacing the top-level item of the
    same name, or, where the name is new, inserted at top level before line `before_line` (the
    kernel's first line, so a decorator or constant the kernel uses is defined before it)."""
    tree = ast.parse(text)
    present = {item_name(n): n for n in tree.body if item_name(n) is not None}
    lines = lines_of(text, keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, new text), 1-based, inclusive
    new = []
    for name, source in items.items():
        node = present.get(name)
        if node is None:
            new.append(source.strip("\n") + "\n")
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        edits.append((start, last_line(node), source.strip("\n") + "\n"))
    if new:
        edits.append((before_line, before_line - 1, "\n\n".join(new) + "\n\n"))
    for first, last, body in sorted(edits, reverse=True):
        lines[first - 1 : last] = [body]
    return "".join(lines)


def is_jit(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)(?:```|\Z)", re.S)


def strip_fences(answer: str) -> str:
    """The code of a model's answer: the fenced blocks joined, or the text itself."""
    blocks = _FENCE.findall(answer)
    return "\n\n".join(b.strip("\n") for b in blocks) if blocks else answer.strip("\n")


def top_level_defs(tree: ast.Module) -> dict[str, str]:
    """{name: ast dump} of the functions and classes a module defines."""
    return {
        n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def extract_function(code: str, name: str) -> tuple[str | None, dict[str, str]]:
    """The function `name` from an answer (fences stripped, the whole file or just the function),
    and the other functions and classes the answer defines ({name: ast dump})."""
    code = strip_fences(code)
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        raise NotPython(
            f"not valid Python: {exc.msg} at line {exc.lineno} of the answer" + (f": `{line}`" if line else "")
        ) from None
    lines = lines_of(textwrap.dedent(code))
    found = _find(tree, name, lines)
    others = {k: v for k, v in top_level_defs(tree).items() if k != name}
    if found is None:
        return None, others
    return textwrap.dedent("\n".join(lines[found.start - 1 : found.end])) + "\n", others


def unified_diff(relpath: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{relpath}",
            tofile=f"b/{relpath}",
        )
    )
