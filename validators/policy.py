"""What candidate code may contain, checked on its source before anything runs.

The sandbox confines what a candidate can reach; this check refuses, with a reason the rewriter
can act on, the Python a kernel rewrite has no business containing, unless the original
function already had it: reading files or the environment, inspecting the process or the call
stack, importing modules, changing module attributes (patching torch.save, the timing events,
the capture), state kept across calls (globals, mutable defaults, attributes on functions), and
new decorators other than Triton's. The launcher keeps its parameters (callers and the replay
depend on them); the kernel may change its own, then only the launcher's replay checks it.

A @triton.jit body compiled for a GPU cannot do any of that, but under TRITON_INTERPRET=1 it
runs as Python, so it is checked too (its `tl.*` calls, `tl.load` among them, are Triton's),
as are its decorators (autotune configs, heuristics, hooks). Standard library only.
"""

from __future__ import annotations

import ast

FORBIDDEN_NAMES = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "setattr",
        "delattr",
        "getattr",
        "input",
        "breakpoint",
        "memoryview",
        "exit",
        "quit",
        "__builtins__",
        "__file__",
        "os",
        "sys",
        "subprocess",
        "shutil",
        "pathlib",
        "Path",
        "ctypes",
        "inspect",
        "gc",
        "importlib",
        "builtins",
        "socket",
        "pickle",
        "threading",
        "multiprocessing",
        "signal",
        "atexit",
        "tempfile",
        "glob",
        "io",
        "traceback",
        "functools",
        "weakref",
        "marshal",
        "mmap",
        "urllib",
        "http",
        "runpy",
        "site",
        "sysconfig",
        "platform",
    }
)
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "environ",
        "getenv",
        "putenv",
        "argv",
        "modules",
        "_getframe",
        "currentframe",
        "stack",
        "f_back",
        "f_locals",
        "f_globals",
        "f_code",
        "load",
        "save",
        "fromfile",
        "tofile",
        "memmap",
        "open_memmap",
        "loadtxt",
        "savetxt",
        "genfromtxt",
        "read_text",
        "write_text",
        "read_bytes",
        "write_bytes",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "getpid",
        "getppid",
        "system",
        "popen",
        "listdir",
        "scandir",
        "walk",
        "exists",
        "isfile",
        "cdll",
        "CDLL",
        "_C",
        "register_forward_hook",
        "settrace",
        "setprofile",
        "from_file",
        "fromregex",
        "read_csv",
    }
)
SAFE_IMPORTS = frozenset({"math", "torch", "triton", "triton.language", "numpy", "typing"})
TRITON_MODULES = frozenset({"tl", "triton", "language", "libdevice"})  # the names kernels reach Triton through
MUTABLE_DEFAULTS = (ast.Dict, ast.List, ast.Set, ast.Call, ast.ListComp, ast.DictComp, ast.SetComp)


class PolicyError(Exception):
    """The candidate contains what candidate code may not; the message says what and why."""


def check(original: str, candidate: str, name: str, *, kernel: bool) -> None:
    """Raise PolicyError when `candidate` (the source of function `name`) adds a forbidden construct."""
    old, new = _function(original, name), _function(candidate, name)
    if old is None or new is None:
        return  # the scope check reports a missing function
    added = sorted(_features(new, kernel) - _features(old, kernel))
    if not kernel:
        added += _signature_changes(old, new)
    if added:
        what = "kernel" if kernel else "launcher"
        raise PolicyError(
            f"the {what} {name} contains what candidate code may not: {'; '.join(added[:6])}. A rewrite "
            "may change how the kernel computes and launches, not read files or the environment, inspect "
            "or patch the process, import modules or keep state between calls"
        )


def check_statement(original: str, candidate: str) -> None:
    """The same policy for a launch statement (a launch at module level or in a nested function):
    nothing the original statement did not have already."""
    try:
        old, new = ast.parse(original), ast.parse(candidate)
    except SyntaxError:
        return  # the scope check reports it

    def features(tree: ast.Module) -> set[str]:
        local = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
        return {f for n in ast.walk(tree) for f in _node_features(n, local)}

    added = sorted(features(new) - features(old))
    if added:
        raise PolicyError(
            f"the launch statement contains what candidate code may not: {'; '.join(added[:6])}. A "
            "rewrite may change how the kernel launches, not read files or the environment, inspect or "
            "patch the process, import modules or keep state between calls"
        )


def _function(source: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None
    )


def _features(fn: ast.FunctionDef | ast.AsyncFunctionDef, kernel: bool) -> set[str]:
    """The constructs of `fn` the policy cares about (a kernel's body too: the interpreter runs it)."""
    found = {f"decorator {ast.unparse(d)}" for d in fn.decorator_list if not _triton_decorator(d)}
    python = [*fn.decorator_list, *fn.body, *fn.args.defaults, *[d for d in fn.args.kw_defaults if d is not None]]
    local = _locals(fn)
    for node in (n for top in python for n in ast.walk(top)):
        if kernel and isinstance(node, ast.Attribute) and _root(node) in TRITON_MODULES:
            continue  # tl.load, tl.store, triton.cdiv: Triton's own operations
        found |= _node_features(node, local)
    if not kernel:
        for arg, default in zip(fn.args.args[::-1], fn.args.defaults[::-1], strict=False):
            if isinstance(default, MUTABLE_DEFAULTS):
                found.add(f"a mutable default for {arg.arg} (state kept between calls)")
    return found


def _node_features(node: ast.AST, local: set[str]) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
        return {f"import {m}" for m in modules if m not in SAFE_IMPORTS}
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        return {f"{node.id}"}
    if isinstance(node, ast.Attribute) and (node.attr in FORBIDDEN_ATTRIBUTES or node.attr.startswith("__")):
        return {f".{node.attr}"}
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return {f"global {', '.join(node.names)}"}
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return {
            f"assigns to {ast.unparse(t)} (not a local)"
            for t in targets
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) not in local
        }
    return set()


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names created in the function: parameters and anything it binds. A parameter counts:
    writing into an argument (an output tensor) is what launchers do."""
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fn:
            names |= {a.arg for a in node.args.args}
    return names


def _triton_decorator(node: ast.AST) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    text = ast.unparse(target)
    return text.startswith("triton.") or text in ("jit", "autotune", "heuristics")


def _signature_changes(
    old: ast.FunctionDef | ast.AsyncFunctionDef, new: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[str]:
    def shape(fn):
        a = fn.args
        return (
            [p.arg for p in a.posonlyargs],
            [p.arg for p in a.args],
            a.vararg and a.vararg.arg,
            [p.arg for p in a.kwonlyargs],
            a.kwarg and a.kwarg.arg,
            len(a.defaults),
            [d is None for d in a.kw_defaults],
        )

    if shape(old) != shape(new):
        return [
            f"other parameters ({ast.unparse(new.args)} instead of {ast.unparse(old.args)}); the launcher's "
            "signature must stay as it is"
        ]
    changed = [
        ast.unparse(n)
        for o, n in zip(
            [*old.args.defaults, *old.args.kw_defaults], [*new.args.defaults, *new.args.kw_defaults], strict=False
        )
        if n is not None and (o is None or ast.dump(o) != ast.dump(n)) and not isinstance(n, ast.Constant)
    ]
    return [f"a default that is not a constant ({c})" for c in changed]
