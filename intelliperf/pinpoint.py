"""Show pinpointed kernel lines in the user's own source, with a few lines around them."""

from __future__ import annotations

import linecache

from .models import SourceLine

CONTEXT_LINES = 3


def source_line(file: str, line: int, detail: str = "", context: int = CONTEXT_LINES) -> SourceLine:
    """The line's code and its neighbours, read now so the report stays readable later."""
    linecache.checkcache(file)
    around = [(n, linecache.getline(file, n).rstrip("\n")) for n in range(max(1, line - context), line + context + 1)]
    while around and not around[-1][1] and around[-1][0] > line:
        around.pop()
    return SourceLine(file=file, line=line, code=linecache.getline(file, line).strip(), detail=detail, context=around)


def loop_lines(file: str, def_line: int | None) -> set[int]:
    """Lines inside a `for`/`while` body of the function defined at `def_line` (empty when the
    file cannot be read): code there runs once per iteration."""
    import ast

    try:
        tree = ast.parse(open(file, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return set()
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.lineno == def_line), None)
    if function is None:
        return set()
    inside: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.For, ast.While)):
            for stmt in node.body:
                inside.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return inside
