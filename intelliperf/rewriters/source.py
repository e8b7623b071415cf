"""The kernel and launcher as source text: find them, splice new versions in, check the scope.

A candidate may change two functions, the `@triton.jit` kernel and the Python function that
launches it. Everything here works on text plus `ast` positions, so the user's comments and
formatting outside those two functions survive byte for byte.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel


class CodeUnit(BaseModel):
    """One function of the user's project, as the rewriter sees it."""

    name: str
    qualname: str
    file: str  # absolute
    relpath: str  # inside the project
    line: int  # first line (the first decorator)
    source: str  # the function's text, decorators included, dedented


class ScopeError(ValueError):
    """A candidate that is not valid Python or changes more than it may."""


@dataclass
class _Found:
    node: ast.FunctionDef
    start: int  # 1-based, first decorator
    end: int
    indent: str


def _find(tree: ast.Module, qualname: str, lines: list[str]) -> _Found | None:
    """A top-level function or a method (`Class.method`)."""
    scope: list[ast.stmt] = tree.body
    *outer, name = qualname.split(".")
    for cls in outer:
        node = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if node is None:
            return None
        scope = node.body
    node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if node is None:
        return None
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    text = lines[start - 1]
    return _Found(node, start, node.end_lineno, text[: len(text) - len(text.lstrip())])


def code_unit(file: Path, qualname: str, root: Path) -> CodeUnit | None:
    """The function named `qualname` in `file`, or None when it is not a top-level function or a method."""
    if "<" in qualname:  # a nested function (`f.<locals>.g`) cannot be rewritten on its own
        return None
    text = file.read_text()
    lines = text.splitlines()
    found = _find(ast.parse(text), qualname, lines)
    if found is None:
        return None
    source = textwrap.dedent("\n".join(lines[found.start - 1: found.end])) + "\n"
    return CodeUnit(name=qualname.split(".")[-1], qualname=qualname, file=str(file),
                    relpath=str(file.resolve().relative_to(root.resolve())), line=found.start, source=source)


def splice(text: str, qualname: str, new_source: str) -> str:
    """`text` with the function `qualname` replaced by `new_source` (indented to its place)."""
    lines = text.splitlines()
    found = _find(ast.parse(text), qualname, lines)
    if found is None:
        raise ScopeError(f"{qualname} is no longer in the file")
    body = textwrap.indent(textwrap.dedent(new_source).strip("\n"), found.indent).splitlines()
    out = lines[: found.start - 1] + body + lines[found.end:]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def check_scope(original: str, changed: str, allowed: set[str], kernel: str | None = None) -> None:
    """Raise ScopeError unless `changed` parses and differs from `original` only inside the
    functions named in `allowed` (qualnames), and the kernel is still a `@triton.jit` function."""
    try:
        new_tree = ast.parse(changed)
    except SyntaxError as exc:
        raise ScopeError(f"the changed file is not valid Python: {exc.msg} at line {exc.lineno}") from None
    old, new = _outline(ast.parse(original), allowed), _outline(new_tree, allowed)
    if old != new:
        moved = sorted({name for name, _ in set(old) ^ set(new)})
        raise ScopeError("only the kernel and its launcher may change, but the candidate also changes: "
                         + ", ".join(moved))
    if kernel is not None:
        found = _find(new_tree, kernel, changed.splitlines())
        if found is None or not is_jit(found.node):
            raise ScopeError(f"the candidate must still define the @triton.jit function {kernel}")


def _outline(tree: ast.Module, allowed: set[str]) -> list[tuple[str, str]]:
    """(name, dump) of every top-level statement and method, with the allowed functions blanked."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            rest = ast.ClassDef(**{**node.__dict__, "body": [n for n in node.body if n not in methods]})
            out.append((node.name, ast.dump(rest)))
            out += [(f"{node.name}.{m.name}", "" if f"{node.name}.{m.name}" in allowed else ast.dump(m))
                    for m in methods]
        else:
            name = getattr(node, "name", None) or ast.unparse(node).splitlines()[0][:60]
            out.append((name, "" if name in allowed else ast.dump(node)))
    return out


def is_jit(node: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)(?:```|\Z)", re.S)


def strip_fences(answer: str) -> str:
    """The code of a model's answer: the fenced blocks joined, or the text itself."""
    blocks = _FENCE.findall(answer)
    return "\n\n".join(b.strip("\n") for b in blocks) if blocks else answer.strip("\n")


def top_level_defs(tree: ast.Module) -> dict[str, str]:
    """{name: ast dump} of the functions and classes a module defines."""
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef))}


def extract_function(code: str, name: str) -> tuple[str | None, dict[str, str]]:
    """The function `name` from an answer (fences stripped, the whole file or just the function),
    and the other functions and classes the answer defines ({name: ast dump})."""
    code = strip_fences(code)
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        raise ScopeError(f"not valid Python: {exc.msg} at line {exc.lineno} of the answer"
                         + (f": `{line}`" if line else "")) from None
    lines = textwrap.dedent(code).splitlines()
    found = _find(tree, name, lines)
    others = {k: v for k, v in top_level_defs(tree).items() if k != name}
    if found is None:
        return None, others
    return textwrap.dedent("\n".join(lines[found.start - 1: found.end])) + "\n", others


def unified_diff(relpath: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{relpath}", tofile=f"b/{relpath}"))
