"""What the names in candidate code are, for the policy's checks: the scope of a function or statement
block (its parameters and locals, which locals alias a module-level value, which are containers it made
itself) and, for a name that is not local, what kind of name it is (a root of the allow-list, a builtin,
a module of the standard library, a dunder, or the program's own). Standard library only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from .allow_list import BUILTIN_NAMES, KERNEL_BUILTINS, PYTHON_BUILTINS, PYTHON_ROOTS, ROOT_NAMES, STDLIB_MODULES
from .policy_syntax import dotted_name, parameters_of, root_name


@dataclass
class Scope:
    """The names of a function (or a statement block) and what was found in it."""

    mode: str  # "kernel", "python" (launchers and helpers) or "statement"
    local: frozenset[str]  # parameters and the names it binds
    aliases: frozenset[str] = frozenset()  # locals bound to (a part of) a module-level name's value
    # the context of an autograd.Function's forward/backward (its first parameter): made per call by
    # autograd, its public attributes are free
    contexts: frozenset[str] = frozenset()
    fresh: frozenset[str] = frozenset()  # locals bound only to containers it made itself
    found: list[str] = field(default_factory=list)

    def flag(self, what: str, why: str) -> None:
        text = f"`{what}` ({why})"
        if text not in self.found:
            self.found.append(text)

    @property
    def kernel(self) -> bool:
        return self.mode == "kernel"


def scope_of(tree: ast.AST, mode: str, parameters: list[str], context: str | None = None) -> Scope:
    """The scope of a function or block: every name it binds, nested functions and lambdas included
    (their parameters too), which of those alias a module-level value and which are fresh containers.
    `context`: the parameter autograd fills with a method's context, trusted only while nothing else
    binds that name (a nested parameter or an assignment could make it any object)."""
    local = set(parameters)
    bindings: dict[str, list[ast.expr | None]] = {}
    nested: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not tree:
            nested |= {a.arg for a in parameters_of(node.args)}
            if not isinstance(node, ast.Lambda):
                nested.add(node.name)
    local |= nested
    for node in ast.walk(tree):
        for target, value in _binds(node):
            for name in _stored(target):
                local.add(name)
                bindings.setdefault(name, []).append(value if isinstance(target, ast.Name) else None)
    local -= _imported(tree)
    aliases: set[str] = set()
    for _ in range(2):  # an alias of an alias
        aliases |= {
            name
            for name, values in bindings.items()
            for value in values
            if value is not None and _outside_root(value, local - aliases, mode)
        }
    fresh = {
        name for name, values in bindings.items() if name not in parameters and all(_fresh_container(v) for v in values)
    }
    trusted = mode == "python" and context in parameters and context not in bindings and context not in nested
    contexts = frozenset({context}) if trusted and context is not None else frozenset()
    return Scope(mode, frozenset(local), aliases=frozenset(aliases), fresh=frozenset(fresh), contexts=contexts)


def _binds(node: ast.AST) -> Iterable[tuple[ast.expr, ast.expr | None]]:
    """(target, the value bound to it, when known) of each binding `node` makes."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)]
    if isinstance(node, ast.AugAssign):  # `acc += STEP` computes a new value, `parts += [x]` stays fresh
        return [(node.target, node.value if _fresh_container(node.value) else None)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target, node.value)]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [(node.target, node.iter)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [(item.optional_vars, item.context_expr) for item in node.items if item.optional_vars is not None]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [(ast.Name(node.name, ast.Store()), None)]
    return []


def _stored(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _stored(element)]
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    return []


def _imported(tree: ast.AST) -> set[str]:
    """The names an import inside `tree` binds: modules, never locals (`import math` is math)."""
    return {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }


def _outside_root(value: ast.expr, local: Iterable[str], mode: str) -> bool:
    """Whether `value` is (a part of) a module-level name's value: `BUF`, `RING[0]`, `CACHE.x`."""
    root = root_name(value, through_calls=False)
    return root is not None and root not in local and kind_of_name(root, mode) == "program"


def _fresh_container(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.BinOp):
        return _fresh_container(value.left) and (
            _fresh_container(value.right) or isinstance(value.op, ast.Mult) and isinstance(value.right, ast.Constant)
        )
    return isinstance(value, ast.Call) and dotted_name(value.func) in {"list", "dict", "set", "sorted", "tuple"}


def kind_of_name(name: str, mode: str) -> str:
    """What a name that is not local is: a root of the allow-list, a builtin, a module of the standard
    library, a dunder, or the program's own (a kernel, a helper, a constant, or an outer value)."""
    if name.startswith("__"):
        return "dunder"
    if name in (ROOT_NAMES if mode == "kernel" else PYTHON_ROOTS):
        return "root"
    if name in PYTHON_ROOTS:
        return "host module"  # torch in a kernel
    if name in BUILTIN_NAMES:
        return "builtin" if name in (KERNEL_BUILTINS if mode == "kernel" else PYTHON_BUILTINS) else "other builtin"
    if name in STDLIB_MODULES:
        return "stdlib"
    return "program"
