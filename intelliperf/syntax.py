"""Spans of parsed Python nodes and the indentation of source lines, for the rewriters' edits.
`ast.parse` always fills a node's end position; the stubs say it may be missing (for nodes built
by hand), so the rewriters read it through these."""

from __future__ import annotations

import ast


def last_line(node: ast.stmt | ast.expr | ast.keyword | ast.arg) -> int:
    return node.end_lineno if node.end_lineno is not None else node.lineno


def end(node: ast.stmt | ast.expr | ast.keyword | ast.arg) -> tuple[int, int]:
    """(line, column) just past the node."""
    column = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return last_line(node), column


def indent_of(line: str) -> str:
    """The line's leading whitespace."""
    return line[: len(line) - len(line.lstrip())]
