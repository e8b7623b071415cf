"""A kernel's file without the script's work: what a replay and a deferred trace import.

Many programs launch their kernels from module level, so importing the file runs the whole program:
its inputs, its launches, its checks, its argument parsing (which, given a replay worker's argv,
exits). A replay needs only what the kernel and its launcher are made of. Of the file's top-level
statements this keeps

* imports, function and class definitions;
* every statement that binds or changes (`name.append(...)`, `name[k] = ...`) a name that is
  needed, to a fixed point: the names the replay looks up (the kernel, the launcher) are needed,
  and so is what each definition reads when the file is imported (decorators, defaults,
  annotations), what a needed function reads when it runs (its global names, as `symtable` finds
  them) and what a kept statement reads; a `main()` nothing needed calls is defined, but what it
  reads (`args = parser.parse_args()`) is not run;
* configuration: a call on, or an assignment into, an imported module (`triton.set_allocator(f)`,
  `torch.backends.cuda.matmul.allow_tf32 = True`) whose names the kept statements all bind;

and drops the rest: `kernel[grid](...)` in a loop, `main()`, `assert torch.equal(...)`, and
`if __name__ == "__main__":` blocks (which never run under a replay's alias anyway). Line numbers
stay the file's, so tracebacks and compiled kernels point at the user's lines.

`load_module` imports a file so, under a private name; `resolve` finds a qualified name in it. Used
by the replay workers (validators/workers/) and the deferred trace (profiling/trace_worker.py).

Imports only the standard library.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import os
import symtable
import sys
from collections.abc import Iterable, Set
from pathlib import Path

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
ALWAYS_BOUND = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__builtins__"}


def definitions_only(source: str, filename: str, needs: Iterable[str] = ()) -> ast.Module:
    """The top-level statements of `source` that define what `needs` uses, with every definition."""
    tree = ast.parse(source, filename)
    body = tree.body
    imported = {name for stmt in body if isinstance(stmt, (ast.Import, ast.ImportFrom)) for name in _binds(stmt)}
    function_reads = _function_reads(source, filename)
    kept = [_defines(stmt) for stmt in body]
    needed = set(needs).union(*(_outer_reads(stmt) for stmt in body if isinstance(stmt, DEFINITIONS)))
    read: set[int] = set()  # the statements whose reads are needed (a definition's: its body's, when run)
    changed = True
    while changed:  # to a fixed point: what binds a needed name is kept, and what it reads is needed
        changed = False
        for i, stmt in enumerate(body):
            if i in read or _is_main_block(stmt) or not _binds(stmt, imported) & needed:
                continue
            read.add(i)
            kept[i] = changed = True
            needed |= _body_reads(stmt, function_reads) if isinstance(stmt, DEFINITIONS) else _loads([stmt])
    bound = ALWAYS_BOUND | {n for stmt, keep in zip(body, kept, strict=True) if keep for n in _binds(stmt)}
    for i, stmt in enumerate(body):
        if not kept[i] and _configures(stmt, imported) and _loads([stmt]) <= bound:
            kept[i] = True
    return ast.Module(body=[stmt for stmt, keep in zip(body, kept, strict=True) if keep], type_ignores=[])


def _defines(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom, *DEFINITIONS))


def _is_main_block(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _function_reads(source: str, filename: str) -> dict[int, set[str]]:
    """Line of each top-level function or class -> the global names its body (nested scopes too) reads."""
    found: dict[int, set[str]] = {}
    for child in symtable.symtable(source, filename, "exec").get_children():
        found.setdefault(child.get_lineno(), set()).update(_globals(child))
    return found


def _globals(table: symtable.SymbolTable) -> set[str]:
    names = {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
    for child in table.get_children():
        names |= _globals(child)
    return names


def _outer_reads(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """What a definition reads when the file is imported: its decorators, defaults, annotations, bases, and
    a class's body (its methods' bodies run only when called)."""
    parts = _loads([*stmt.decorator_list, *_signature_parts(stmt)])
    if not isinstance(stmt, ast.ClassDef):
        return parts
    inner = [s for s in stmt.body if not isinstance(s, DEFINITIONS)]
    return parts | _loads(inner) | set().union(*(_outer_reads(s) for s in stmt.body if isinstance(s, DEFINITIONS)))


def _body_reads(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, function_reads: dict) -> set[str]:
    """The module-level names a definition's body reads when it runs, through its symbol table (and those of
    the comprehensions in its decorators, which share its lines)."""
    line = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
    tables = [names for at, names in function_reads.items() if line <= at <= stmt.lineno]
    return set().union(*tables) if tables else _loads(stmt.body)


def _signature_parts(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.bases, *(k.value for k in stmt.keywords)]
    args = stmt.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    annotations = [a.annotation for a in every if a is not None and a.annotation is not None]
    return [
        *args.defaults,
        *(d for d in args.kw_defaults if d is not None),
        *annotations,
        *filter(None, [stmt.returns]),
    ]


def _loads(nodes: list) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _binds(stmt: ast.stmt, imported: Set[str] = frozenset()) -> set[str]:
    """Names `stmt` binds at module level, or changes in place (`name.append(...)`, `name[k] = v`,
    `name.attr = v`; not an imported module's, which is configuration)."""
    names: set[str] = set()
    if isinstance(stmt, DEFINITIONS):
        return {stmt.name}
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, DEFINITIONS):
            names.add(node.name)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(_root(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names.add(_root(node.func))  # a method call may change its object
    return {n for n in names if n and n not in imported}


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _configures(stmt: ast.stmt, imported: Set[str]) -> bool:
    """A call on an imported module, or an assignment into one: settings the definitions may depend on."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return _root(stmt.value.func) in imported
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AugAssign) else []
    return bool(targets) and all(
        isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in imported for t in targets
    )


def load_module(path: str, alias: str, needs: tuple[str, ...] = ()):
    """Import a file under a private name, with its folder first on sys.path (for its siblings): its
    definitions only (`definitions_only`: a script's work at module level does not run again in every
    replay, nor its argument parsing); the whole file where that fails or lacks a name in `needs`."""
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        try:
            source = Path(path).read_text()
            module = _execute(path, alias, compile(definitions_only(source, path, needs), path, "exec"))
            if all(hasattr(module, name) for name in needs):
                return module
        except (Exception, SystemExit):
            pass
        return _execute(path, alias, None)
    finally:
        sys.path.remove(folder)


def _execute(path: str, alias: str, code):
    """A fresh module for `path` under `alias`, running `code` (None: the file as it is)."""
    spec = importlib.util.spec_from_file_location(alias, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    if code is None:
        spec.loader.exec_module(module)
    else:
        exec(code, module.__dict__)
    return module


def resolve(module, qualname: str):
    """`qualname` (`Class.method`) in `module`; None where it is not there or is a function's local one."""
    obj = module
    for part in qualname.split("."):
        if part == "<locals>":
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
