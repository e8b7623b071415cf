"""What candidate code may contain, checked on its source before anything runs: an allow-list.

The sandbox confines what a candidate can reach; this check refuses, with a reason the rewriter
can act on, any construct outside what a kernel rewrite needs. It lists what is allowed (anything
else is refused), unless the original code already contained the same construct (grandfathering:
the violations of the candidate minus those of the original):

- Kernels (@triton.jit functions, their decorators included: under TRITON_INTERPRET=1 the body
  runs as Python): Triton's language only. Names from `tl` / `triton.language` (its public names,
  frozen below from the installed Triton), its sub-namespaces `tl.math` and the libdevice
  functions (`tl.extra.cuda.libdevice`, `libdevice`), `triton.cdiv` and friends, the kernel's own
  parameters and locals (with the attributes of Triton tensors, dtypes and descriptors), the
  program's other names (jit helpers, constants) as values, a few pure builtins, arithmetic and
  control flow. No imports, lambdas, nested functions, `with`, `try`, `raise`, no dunders, no
  private attributes, no attributes of the program's other names (`ext.program_id`) but the
  `.value` of a constexpr constant.
- Kernel decorators: `triton.jit`, `triton.autotune`, `triton.heuristics` (or those names imported
  from triton), whose arguments follow the launcher's rules below, with hooks only as lambdas
  written out, no `do_bench` or `launch_metadata`, no `**` keyword arguments, no lambda defaults.
- Launchers and Python helpers: the same names and expressions, plus the listed torch functions
  and dtypes, the listed tensor methods and attributes, `math`, the device properties, control
  flow, `assert`, `raise` of the usual exceptions, nested functions and lambdas (the grid), `with`
  on the listed context managers or the program's own, the kernel launches, `import math` /
  `torch` / `triton` / `triton.language as tl`. Assignments only to names, and into the items of
  the function's own values (its parameters and locals), never to attributes; no `global`, no
  classes, no decorators but torch.no_grad()/inference_mode() and staticmethod (a launcher may be an
  autograd.Function's forward/backward: its first parameter, the context autograd makes per call, takes
  public attributes while nothing else binds that name; no other function's parameter does, whatever
  its name), constant defaults only, no `try`,
  no attributes of module-level names (state kept between calls, the program's modules), no list
  or dict methods that mutate but on containers the function made itself.
- A launch statement (or the block of statements replacing it): the launcher's rules, where the
  names it does not bind are the program's values (a tensor's attributes allowed, no stores).
- Module constants a candidate adds beside the kernel: literals, tuples, arithmetic, the names of
  other constants, `tl.constexpr(...)` and the pure functions of math and triton; no lists, dicts,
  sets (state) and no other calls.

Every refusal names the construct as written and says what is allowed instead. The launcher keeps
its parameters (callers and the replay depend on them). This module holds the checks' entry points
and the grandfathering; the lists are `allow_list.py`'s literal sets (the Triton ones come from
`dir(triton.language)` (3.9) and are regenerated with the snippet in the comment above TL_NAMES), what a
name is in the checked code comes from `policy_scope.py`, and `policy_checker.py` walks the code.
Standard library only.
"""

from __future__ import annotations

import ast
import re
import textwrap

from .allow_list import CONSTANT_CALLS, MATH
from .policy_checker import Checker
from .policy_scope import Scope, scope_of
from .policy_syntax import dotted_name, parameters_of, quoted

GUIDE = {
    "kernel": "a kernel uses Triton's language (tl.*, tl.math, libdevice, triton.cdiv), its own values and "
    "the program's jit functions and constants",
    "python": "a launcher uses its arguments and locals, the listed torch functions, tensor methods, math, "
    "triton.cdiv/next_power_of_2/Config and launches kernels",
}


class PolicyError(Exception):
    """The candidate contains what candidate code may not; the message says what and why."""


def check(original: str, candidate: str, name: str, *, kernel: bool) -> None:
    """Raise PolicyError when `candidate` (the source of function `name`) adds a construct outside the
    allow-list (kernel: a @triton.jit function with its decorators; otherwise the launcher, which also
    keeps its parameters)."""
    old, new = _function(original, name), _function(candidate, name)
    if old is None or new is None:
        return  # the scope check reports a missing function
    autograd = not kernel and _autograd_method(old) and _autograd_method(new)
    before = set(_function_violations(old, kernel, autograd))
    added = [v for v in _function_violations(new, kernel, autograd) if v not in before or _inputs_moved(v, old, new)]
    if not kernel:
        added = _signature_changes(old, new) + added
    if added:
        what = "kernel" if kernel else "launcher"
        raise PolicyError(_message(f"the {what} {name}", added, "kernel" if kernel else "python"))


def check_statement(original: str, candidate: str) -> None:
    """The same allow-list for a launch statement (at module level or in a nested function) and the
    block of statements that may replace it: the launcher's rules, where the names the block does not
    bind are the program's values (their tensor attributes may be read, nothing stored into them)."""
    try:
        old, new = ast.parse(textwrap.dedent(original)), ast.parse(textwrap.dedent(candidate))
    except SyntaxError:
        return  # the scope check reports it
    added = _added(_statement_violations(new), _statement_violations(old))
    if added:
        raise PolicyError(_message("the launch statement", added, "python"))


def check_module_item(original: str | None, candidate: str, *, kernel: bool, method: bool = False) -> None:
    """The allow-list for one top-level item a candidate adds (`original` None) or changes beside the
    kernel: a @triton.jit function (`kernel`, the kernel's rules), a plain Python helper function (the
    launcher's rules) or a module constant (a literal, a tuple, arithmetic, tl.constexpr(...)).
    `method`: the function is a method of a class the program defines (an autograd.Function's
    forward/backward may then write its context); an item beside the kernel never is."""
    try:
        new = ast.parse(textwrap.dedent(candidate)).body
        old = ast.parse(textwrap.dedent(original)).body if original else []
    except SyntaxError:
        return  # the syntax check reports it
    if len(new) != 1 or not isinstance(new[0], (ast.FunctionDef, ast.Assign, ast.AnnAssign)):
        kinds = ", ".join(type(n).__name__ for n in new) or "nothing"
        raise PolicyError(
            f"code beside the kernel is one function or one constant per item, not {kinds}: a candidate adds "
            "@triton.jit functions, helper functions and constants (no classes, imports or other statements)"
        )
    item = new[0]
    before = _item_violations(old[0], kernel, method) if len(old) == 1 else []
    added = _added(_item_violations(item, kernel, method), before)
    if added:
        kind = "constant" if not isinstance(item, ast.FunctionDef) else "kernel" if kernel else "helper"
        name = item.name if isinstance(item, ast.FunctionDef) else quoted(_targets(item)[0])
        raise PolicyError(_message(f"the {kind} {name} beside the kernel", added, _mode(item, kernel)))


# --- violations of each kind of code


def _function_violations(fn: ast.FunctionDef | ast.AsyncFunctionDef, kernel: bool, autograd: bool = False) -> list[str]:
    """The constructs of `fn` outside the allow-list, in source order (a kernel's body too: the
    interpreter runs it as Python; its decorators and defaults: they run when the file is imported).
    `autograd`: `fn` is an autograd.Function's method, whose first parameter is the context."""
    mode = "kernel" if kernel else "python"
    parameters = [a.arg for a in parameters_of(fn.args)]
    scope = scope_of(fn, mode, parameters, context=parameters[0] if autograd and parameters else None)
    checker = Checker(scope)
    if isinstance(fn, ast.AsyncFunctionDef):
        scope.flag(f"async def {fn.name}", "an async function: a launcher is a plain function")
    for decorator in fn.decorator_list:
        checker.decorator(decorator, kernel)
    checker.defaults(fn.args)
    for node in [*_annotations(fn.args), fn.returns, *fn.body]:
        if node is not None:
            checker.visit(node)
    return scope.found


def _statement_violations(tree: ast.Module) -> list[str]:
    scope = scope_of(tree, "statement", [])
    checker = Checker(scope)
    for stmt in tree.body:
        checker.visit(stmt)
    return scope.found


def _item_violations(item: ast.stmt, kernel: bool, method: bool = False) -> list[str]:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _function_violations(item, kernel, autograd=method and not kernel and _autograd_method(item))
    if not isinstance(item, (ast.Assign, ast.AnnAssign)):
        return [f"`{quoted(item)}` (a statement other than a function or a constant)"]
    scope = Scope("python", frozenset())
    checker = Checker(scope)
    targets = _targets(item)
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        scope.flag(quoted(item), "a constant binds one name: NAME = value")
    if isinstance(item, ast.AnnAssign):
        checker.visit(item.annotation)
    if item.value is not None:
        _constant_value(item.value, scope)
        checker.visit(item.value)
    return scope.found


def _constant_value(value: ast.expr, scope: Scope) -> None:
    """A module constant's value: literals, tuples, arithmetic, names, the pure calls of CONSTANT_CALLS
    and math; no containers that can change (state shared between calls), lambdas or other calls."""
    for node in ast.walk(value):
        if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            scope.flag(
                quoted(node),
                "a list, dict or set at module level is state kept between calls: use a tuple or literals",
            )
        elif isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield)):
            scope.flag(quoted(node), "a constant is a literal, a tuple of literals or arithmetic of them")
        elif isinstance(node, ast.Call) and not _constant_call(node.func):
            scope.flag(
                quoted(node),
                "a call at module level: a constant is a literal, a tuple or arithmetic of them, "
                "tl.constexpr(...), math's functions or triton.cdiv/next_power_of_2",
            )


def _constant_call(func: ast.expr) -> bool:
    name = dotted_name(func)
    if name is None:
        return False
    name = name.replace("triton.language.", "tl.", 1)
    return name in CONSTANT_CALLS or (name.startswith("math.") and name[5:] in MATH)


# --- small helpers

AUTOGRAD_METHODS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})


def _autograd_method(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The form autograd calls with a context first: a static forward/backward/setup_context/jvp/vjp."""
    static = any(dotted_name(d) == "staticmethod" for d in fn.decorator_list)
    return static and fn.name in AUTOGRAD_METHODS and bool(parameters_of(fn.args))


def _inputs_moved(violation: str, old: ast.AST, new: ast.AST) -> bool:
    """Whether a construct the original has too (`violation`, quoted first) now works on other values: a
    statement binding a name it reads (`key` of `_CACHE[key] = value`, or `value`) differs between the
    original function and the candidate's. Grandfathered text with rebound inputs is new state."""
    quoted = re.match(r"`([^`]*)`", violation)
    if quoted is None:
        return False
    text = quoted.group(1)
    names = _names_in(text.replace("= ...", "= None"))
    target = text.split(" = ...")[0] if " = ..." in text else None
    for fn in (old, new):
        for node in ast.walk(fn):
            if target and isinstance(node, ast.Assign) and any(ast.unparse(t) == target for t in node.targets):
                names |= _names_in(ast.unparse(node.value))
    return _bindings(old, names) != _bindings(new, names)


def _names_in(code: str) -> set[str]:
    try:
        return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


def _bindings(fn: ast.AST, names: set[str]) -> list[str]:
    """The statements of `fn` that bind any of `names`, as text."""
    found = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.For, ast.comprehension)):
            bound = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.NamedExpr):
            bound = {node.target.id}
        else:
            continue
        if bound & names:
            found.append(ast.unparse(node.target if isinstance(node, ast.comprehension) else node).split("\n")[0])
    return sorted(found)


def _added(new: list[str], old: list[str]) -> list[str]:
    """What `new` has that `old` had not (grandfathering), in `new`'s order."""
    seen = set(old)
    return [v for v in new if v not in seen]


def _message(subject: str, added: list[str], mode: str) -> str:
    more = f"; and {len(added) - 6} more" if len(added) > 6 else ""
    return (
        f"{subject} contains what candidate code may not: {'; '.join(added[:6])}{more}. A rewrite may change how "
        f"the kernel computes and launches within an allow-list ({GUIDE[mode]}); not read files or the "
        "environment, inspect or patch the process, import modules or keep state between calls"
    )


def _mode(item: ast.stmt, kernel: bool) -> str:
    return "kernel" if kernel and isinstance(item, ast.FunctionDef) else "python"


def _targets(item: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return item.targets if isinstance(item, ast.Assign) else [item.target]


def _annotations(args: ast.arguments) -> list[ast.expr]:
    return [a.annotation for a in parameters_of(args) if a.annotation is not None]


def _function(source: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    return next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None
    )


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
