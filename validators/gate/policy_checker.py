"""The visitor of the candidate-code policy: it walks a kernel, a launcher, a helper or a launch statement and
records, in its scope, each construct outside the allow-list (`allow_list.py`) with the reason a rewriter can
act on. `policy.py` runs it on the original and the candidate and refuses what the candidate adds.
Standard library only.
"""

from __future__ import annotations

import ast
import string

from .allow_list import (
    CONTEXT_MANAGERS,
    DECORATOR_REFUSED,
    HOOKS,
    KERNEL_DECORATORS,
    KERNEL_TREE,
    KERNEL_VALUE_ATTRS,
    LAUNCHER_DECORATORS,
    MUTATORS,
    OUTER_VALUE_ATTRS,
    PYTHON_ROOTS,
    PYTHON_TREE,
    PYTHON_VALUE_ATTRS,
    SAFE_IMPORTS,
)
from .policy_scope import Scope, kind_of_name, scope_of
from .policy_syntax import attribute_chain, dotted_name, is_none, quoted, root_name

NAME_REFUSALS = {
    "dunder": "a dunder name: it reaches the interpreter's internals",
    "host module": "torch in a kernel: a kernel uses Triton's language",
    "other builtin": "a builtin outside the pure ones: range, len, min, max, abs, int, float, bool, isinstance, "
    "and in launchers tuple, list, dict, zip, enumerate, sum, any, all, sorted, round, str and the usual "
    "exceptions",
    "stdlib": "a module of the standard library: a candidate reaches only torch, triton, triton.language and math",
}


class Checker(ast.NodeVisitor):
    """Records, in `scope`, each construct of the code it visits that is outside the allow-list."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def flag(self, what: str, why: str) -> None:
        self.scope.flag(what, why)

    # names and attributes

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.scope.local:
            kind = kind_of_name(node.id, self.scope.mode)
            if kind == "root":
                self.flag(node.id, f"{node.id} on its own: use its listed names ({node.id}.<name>)")
            elif kind in NAME_REFUSALS:
                self.flag(node.id, NAME_REFUSALS[kind])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base, links = attribute_chain(node)
        dunder = next((link for link in links if link.attr.startswith("__")), None)
        if dunder is not None:
            self.flag(quoted(node), f".{dunder.attr}: a dunder attribute reaches the interpreter's internals")
            if not isinstance(base, ast.Name):
                self.visit(base)
        elif isinstance(base, ast.Name):
            self._named(base.id, links)
        else:
            self.visit(base)
            root = root_name(base, through_calls=False)
            if isinstance(base, ast.Subscript) and root is not None and self._outside(root):
                self.flag(quoted(node), f"reaches into {root}, {OUTSIDE}")
            else:
                self._attributes(
                    links, 0, outer=self.scope.mode == "statement" and root not in {None, *self.scope.local}
                )

    def _outside(self, name: str) -> bool:
        """A module-level value seen from a function (or a local alias of one)."""
        s = self.scope
        if s.mode == "statement":
            return False
        if name in s.local:
            return name in s.aliases
        return kind_of_name(name, s.mode) == "program"

    def _named(self, name: str, links: list[ast.Attribute]) -> None:
        s = self.scope
        if name in s.contexts:  # ctx.save_for_backward, ctx.saved_tensors, ctx.BLOCK
            self._attributes(links, 0 if links[0].attr.startswith("_") else 1)
            return
        if name in s.local and name not in s.aliases:
            self._attributes(links, 0, fresh=name in s.fresh)
            return
        if name in s.local:  # bound to a module-level value
            self.flag(quoted(links[-1]), f"{name} is bound to {OUTSIDE}")
            return
        kind = kind_of_name(name, s.mode)
        if kind == "root":
            self._resolve(name, links)
        elif kind in NAME_REFUSALS:
            self.flag(quoted(links[-1]), f"{name}: {NAME_REFUSALS[kind]}")
        elif s.mode == "statement":  # the program's values around the statement
            self._attributes(links, 0, outer=True)
        elif links[0].attr == "value":  # a tl.constexpr constant's value
            self._attributes(links, 1)
        else:
            self.flag(quoted(links[-1]), f"an attribute of {name}, {OUTSIDE}")

    def _resolve(self, name: str, links: list[ast.Attribute]) -> None:
        """A dotted name from a root (tl, triton, torch, math, ...): each step must be in the tree."""
        tree = KERNEL_TREE if self.scope.kernel else PYTHON_TREE
        path, i = (PYTHON_ROOTS[name], 0)
        if path == "triton" and links[0].attr == "language":
            path, i = "tl", 1
        while i < len(links):
            attr = links[i].attr
            leaves, spaces = tree.get(path, (frozenset(), frozenset()))
            if attr in leaves:
                self._attributes(links, i + 1)
                return
            if attr not in spaces:
                root = path.split(".")[0]
                hint = ROOT_HINTS["kernel" if self.scope.kernel and root in ("tl", "triton") else root]
                self.flag(quoted(links[-1]), f"{path}.{attr} is outside the allowed {root} names: {hint}")
                return
            path, i = f"{path}.{attr}", i + 1
        self.flag(quoted(links[-1]), f"{path} on its own: use its listed names ({path}.<name>)")

    def _attributes(self, links: list[ast.Attribute], start: int, fresh: bool = False, outer: bool = False) -> None:
        """The attributes of a value (a local, a call's result, an item): from the mode's list."""
        kernel = self.scope.kernel
        allowed = KERNEL_VALUE_ATTRS if kernel else OUTER_VALUE_ATTRS if outer else PYTHON_VALUE_ATTRS
        for i in range(start, len(links)):
            attr = links[i].attr
            if attr.startswith("_"):
                why = f".{attr} is private: not an interface a rewrite may depend on"
            elif attr in allowed or (i == 0 and fresh and attr in MUTATORS and not kernel):
                continue
            elif attr in MUTATORS and not kernel:
                why = f".{attr} changes a container the function did not make (state kept between calls)"
            elif kernel:
                why = f".{attr} is not an attribute of a Triton tensor, dtype or descriptor"
            else:
                why = f".{attr} is outside the allowed tensor methods and attributes ({TENSOR_HINT})"
            self.flag(quoted(links[i]), why)
            return

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format", "format_map") and not self.scope.kernel:
            why = _format_refusal(func)
            if why:
                self.flag(quoted(node), why)
        self.generic_visit(node)

    # statements

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self.scope.kernel or (alias.name, alias.asname) not in SAFE_IMPORTS:
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                self.flag(text, IMPORT_REFUSAL)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = ", ".join(a.name for a in node.names)
        self.flag(f"from {'.' * node.level}{node.module or ''} import {names}", IMPORT_REFUSAL)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        word = "global" if isinstance(node, ast.Global) else "nonlocal"
        self.flag(f"{word} {', '.join(node.names)}", "state shared between calls: a rewrite keeps none")

    visit_Nonlocal = visit_Global

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.flag(
            f"class {node.name}",
            "a class definition: a rewrite adds kernels, functions and constants, not classes (a Tensor subclass "
            "can defer the work past the timing)",
        )

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.scope.kernel or isinstance(node, ast.AsyncFunctionDef):
            self.flag(f"def {node.name}", "a function inside a kernel: define a @triton.jit helper beside it")
            return
        for decorator in node.decorator_list:
            self.flag(f"@{quoted(decorator)}", "a decorator on a nested function: it can wrap or cache the function")
        self.defaults(node.args)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        if self.scope.kernel:
            self.flag(quoted(node), "a lambda in a kernel: define a @triton.jit helper beside it")
            return
        if node.args.defaults or any(d is not None for d in node.args.kw_defaults):
            self.flag(quoted(node), "a lambda with a default: a value captured once and kept between calls")
        self.visit(node.body)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if self.scope.kernel or not _context_manager(item.context_expr):
                self.flag(f"with {quoted(item.context_expr)}", CONTEXT_REFUSAL)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Try(self, node: ast.AST) -> None:
        self.flag("try", "exception handling: an error of the rewrite must surface, not be caught")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_Raise(self, node: ast.Raise) -> None:
        if self.scope.kernel:
            self.flag(quoted(node), "raise in a kernel: use tl.device_assert or tl.static_assert")
        self.generic_visit(node)

    def visit_Await(self, node: ast.AST) -> None:
        self.flag(quoted(node), "async code and generators: a launcher runs its work when called")
        self.generic_visit(node)

    visit_Yield = visit_YieldFrom = visit_Await

    def visit_Assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            self._store(target, "=")
        for part in [getattr(node, "annotation", None), node.value]:
            if part is not None:
                self.visit(part)

    visit_AugAssign = visit_AnnAssign = visit_Assign

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._store(target, "del")

    def _store(self, target: ast.expr, how: str) -> None:
        """A binding may store into names, and into items of the code's own values."""
        text = f"del {quoted(target)}" if how == "del" else f"{quoted(target)} = ..."
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in target.elts if not isinstance(target, ast.Starred) else [target.value]:
                self._store(element, how)
            return
        if isinstance(target, ast.Name):
            return
        root = root_name(target, through_calls=False)
        if isinstance(target, ast.Attribute) and _on_context(target, self.scope.contexts):
            pass  # ctx.BLOCK_SIZE = ...: what forward leaves for backward, in this call's context
        elif isinstance(target, ast.Attribute):
            self.flag(text, "sets an attribute: a rewrite writes into tensors, it does not patch objects or modules")
        elif self.scope.kernel:
            self.flag(text, "item assignment in a kernel: Triton values are immutable (tl.where, tl.store)")
        elif root is None or root not in self.scope.local or root in self.scope.aliases:
            self.flag(
                text,
                f"writes into {root or 'a value'}, which the code neither made nor received: state kept between calls",
            )
        self.visit(getattr(target, "value", target))
        if isinstance(target, ast.Subscript):
            self.visit(target.slice)

    # decorators and defaults

    def decorator(self, node: ast.expr, kernel: bool) -> None:
        target = node.func if isinstance(node, ast.Call) else node
        allowed = KERNEL_DECORATORS if kernel else LAUNCHER_DECORATORS
        if dotted_name(target) not in allowed:
            self.flag(f"@{quoted(node)}", DECORATOR_REFUSAL)
            return
        for walrus in (n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)):
            # a decorator runs at import, in the module's scope: `:=` there makes module-level state
            self.flag(quoted(walrus), "a binding in a decorator: it makes a module-level name (state between calls)")
        if isinstance(node, ast.Call):
            inner = scope_of(node, "python", [])
            inner.found = self.scope.found
            Checker(inner).decorator_arguments(node)

    def decorator_arguments(self, call: ast.Call) -> None:
        """triton.autotune/heuristics/jit arguments (their Configs too): the launcher's expressions,
        hooks only as lambdas written out, keyword arguments written out, not the autotuner's timing."""
        for node in ast.walk(call):
            for kw in node.keywords if isinstance(node, ast.Call) else []:
                if kw.arg is None:
                    self.flag(f"**{quoted(kw.value)}", "keyword arguments not written out in a decorator")
                elif kw.arg in DECORATOR_REFUSED:
                    self.flag(f"{kw.arg}={quoted(kw.value)}", "replaces the autotuner's timing or hooks the launch")
                elif kw.arg in HOOKS and not isinstance(kw.value, ast.Lambda) and not is_none(kw.value):
                    self.flag(f"{kw.arg}={quoted(kw.value)}", "a hook is a lambda written out (or None)")
        for part in [*call.args, *[kw.value for kw in call.keywords]]:
            self.visit(part)
            for lam in (n for n in ast.walk(part) if isinstance(n, ast.Lambda)):
                self._decorator_callable(lam)

    def _decorator_callable(self, lam: ast.Lambda) -> None:
        """A heuristic, a key or a hook computes launch parameters from the arguments' sizes and values (or
        zeroes an output before a config runs); torch there, or a tensor method beyond those, does the
        kernel's work outside it, where no launch of the kernel shows it."""
        nodes = list(ast.walk(lam.body))
        if any(isinstance(n, ast.Name) and PYTHON_ROOTS.get(n.id) == "torch" for n in nodes):
            self.flag(quoted(lam), f"torch in a decorator's callable: {DECORATOR_CALLABLE}")
            return
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = root_name(node.func, through_calls=False)
                if node.func.attr not in DECORATOR_METHODS and PYTHON_ROOTS.get(root or "") not in ("triton", "math"):
                    self.flag(quoted(node), f"a tensor method in a decorator's callable: {DECORATOR_CALLABLE}")
                    return

    def defaults(self, args: ast.arguments) -> None:
        named = list(zip([*args.posonlyargs, *args.args][::-1], args.defaults[::-1], strict=False))
        named += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in named:
            # a kernel's constexpr default may name a module constant (`reduction=_REDUCTION_MODE_MEAN`)
            if not _static(default) and not (self.scope.kernel and isinstance(default, ast.Name)):
                self.flag(
                    f"{arg.arg}={quoted(default)}",
                    "a default that is not a constant: a mutable or computed default keeps state between calls",
                )
            self.visit(default)


OUTSIDE = (
    "a module-level name: a function works on its arguments and locals (module-level values are state "
    "kept between calls, or the program's modules)"
)
IMPORT_REFUSAL = (
    "an import: a candidate uses the program's imports (only import math, torch, triton, triton.language as tl)"
)
CONTEXT_REFUSAL = (
    "a context manager outside torch.cuda.device(...), torch.no_grad(), torch.inference_mode(), "
    "contextlib.nullcontext() and the program's own device contexts"
)
DECORATOR_REFUSAL = (
    "a decorator other than triton.jit/autotune/heuristics on a kernel or torch.no_grad()/inference_mode() "
    "on a launcher: a decorator can wrap, cache or replace the function"
)
DECORATOR_CALLABLE = (
    "a heuristic, key or hook computes launch parameters from the arguments' sizes and values "
    "(triton.next_power_of_2, math, .stride(), .numel(), .zero_() in a reset hook)"
)
# what a heuristic or hook may call on an argument: its sizes, and zeroing an output before a config runs
DECORATOR_METHODS = frozenset({"stride", "size", "numel", "dim", "element_size", "zero_", "get", "bit_length"})
TENSOR_HINT = "shape, stride(), size(), dtype, device, numel(), view, reshape, contiguous, to, item, zero_, ..."
ROOT_HINTS = {
    "kernel": "Triton's public language (tl.load, tl.math.exp, libdevice, ...) and triton.cdiv/next_power_of_2",
    "tl": "Triton's public language names (tl.load, tl.float32, tl.math.exp, tl.extra.cuda.libdevice, ...)",
    "libdevice": "the libdevice math functions",
    "triton": "triton.jit/autotune/heuristics/Config/cdiv/next_power_of_2, triton.language and the driver's "
    "device properties",
    "torch": "tensor constructors (empty, zeros, full, *_like, arange), dtypes, finfo/iinfo, pure tensor math, "
    "torch.device, torch.cuda.get_device_properties/current_device/device, no_grad/inference_mode",
    "math": "math's functions and constants",
    "contextlib": "contextlib.nullcontext",
    "typing": "typing's annotation names",
}


def _format_refusal(func: ast.Attribute) -> str | None:
    """Why a `.format`/`.format_map` call is refused, or None: a format string's fields may index and
    read attributes of its arguments (`"{0.__globals__[os]}"`), which no other check sees."""
    template = func.value
    if func.attr == "format_map":
        return "format_map: its fields look up anything in a mapping; use an f-string"
    if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
        return ".format on a string not written out: its fields could reach any attribute; use an f-string"
    try:
        fields = _format_fields(template.value)
    except ValueError:
        return "a format string that does not parse"
    reaching = [f for f in fields if "." in f or "[" in f]
    if reaching:
        return f"a format field reaching into its argument ({{{reaching[0]}}}): use an f-string with the value"
    return None


def _format_fields(template: str) -> list[str]:
    """Every field name of a format string, those nested in format specs included."""
    fields = []
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is not None:
            fields.append(name)
        if spec:
            fields += _format_fields(spec)
    return fields


def _context_manager(expr: ast.expr) -> bool:
    if isinstance(expr, ast.IfExp):
        return _context_manager(expr.body) and _context_manager(expr.orelse)
    if not isinstance(expr, ast.Call):
        return isinstance(expr, ast.Name)  # a value made earlier, itself checked where it was made
    name = dotted_name(expr.func)
    return name in CONTEXT_MANAGERS or isinstance(expr.func, ast.Name)  # the program's own, by name


def _on_context(target: ast.Attribute, contexts: frozenset[str]) -> bool:
    """`ctx.NAME`: an attribute of an autograd.Function's context, not a private one."""
    return isinstance(target.value, ast.Name) and target.value.id in contexts and not target.attr.startswith("_")


def _static(expr: ast.expr) -> bool:
    """A default that is a value written out: a constant, a tuple of them, a dtype (torch.float32)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.UnaryOp):
        return _static(expr.operand)
    if isinstance(expr, ast.Tuple):
        return all(_static(e) for e in expr.elts)
    name = dotted_name(expr)
    return name is not None and name.split(".")[0] in PYTHON_ROOTS and "." in name
