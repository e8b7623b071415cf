"""Small readers of Python's syntax tree shared by the candidate-code policy's modules: a node quoted as a
refusal names it, dotted names, attribute chains, the root name of an expression and a function's parameters.
Standard library only.
"""

from __future__ import annotations

import ast


def quoted(node: ast.AST) -> str:
    """`node` as a refusal quotes it: its source on one line, cut to 80 characters."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."


def attribute_chain(node: ast.Attribute) -> tuple[ast.expr, list[ast.Attribute]]:
    """The base of an attribute chain and its links, innermost first: a.b.c -> (a, [a.b, a.b.c])."""
    links: list[ast.Attribute] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        links.append(current)
        current = current.value
    return current, links[::-1]


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a name or a chain of attributes on one; None for anything else (a call, an item)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def root_name(node: ast.expr, through_calls: bool) -> str | None:
    """The name an expression starts from, through attributes, items and stars (`BUF[0].x` -> BUF), and through
    calls where `through_calls`; None where it starts from anything else."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred, ast.Call)):
        if isinstance(node, ast.Call) and not through_calls:
            return None
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def parameters_of(args: ast.arguments) -> list[ast.arg]:
    """Every parameter of a function or lambda: positional, keyword-only, *args and **kwargs."""
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]
