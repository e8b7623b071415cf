"""Values of a knob the program's own checks refuse, so the knob search never proposes them.

A launcher often checks what it launches: `assert N % BLOCK_N == 0`, `if K % BLOCK_K != 0: raise`,
`assert BLOCK >= n_cols`, or sets `BLOCK = triton.next_power_of_2(n)` for one block to cover a row;
a kernel may `tl.static_assert(BLOCK_N <= HEAD_DIM)`. A value that fails one crashes the program
instead of testing a config, so it is never proposed, and the decline says why. The checks are
evaluated with the recorded launch's sizes; where a size is not recorded, only values on a check's
safe side are kept (divisors of a block size that divides, the far side of a bound).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from types import SimpleNamespace

from ..models import ArgInfo
from .base import RewriteRequest
from .kernel_syntax import launcher_source, plain_function
from .source import launch_call


@dataclass
class _Check:
    test: ast.expr
    holds: bool  # an assert's test holds; an `if test: raise` guard's does not
    text: str  # as the reason quotes it


class _Sizes:
    """A recorded tensor argument, as a launcher's checks read it."""

    def __init__(self, shape: list[int], strides: list[int] | None) -> None:
        self.shape, self.strides, self.ndim = tuple(shape), tuple(strides or ()), len(shape)

    def size(self, dim: int | None = None) -> object:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> object:
        return self.strides if dim is None else self.strides[dim]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return math.prod(self.shape)


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# What a check may call besides the recorded tensors' methods: the helpers launchers size blocks with.
_HELPERS = {
    **{f.__name__: f for f in (min, max, abs, len, int)},
    "cdiv": _cdiv,
    "next_power_of_2": _next_power_of_2,
    "triton": SimpleNamespace(cdiv=_cdiv, next_power_of_2=_next_power_of_2),
}
_UNKNOWN = object()
# What a check may be made of to be evaluated: names, numbers, attributes, calls, indexing, arithmetic,
# comparisons; no container, comprehension, lambda, string or power that a recorded size could make
# huge in the optimizer's own process (`[0] * n`, `2 ** n`).
_EVALUABLE = (
    *(ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop, ast.keyword, ast.Name, ast.Constant),
    *(ast.Attribute, ast.Subscript, ast.Slice, ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp),
    ast.Tuple,
)


def _evaluable(expr: ast.expr) -> bool:
    return all(
        isinstance(n, _EVALUABLE)
        and not isinstance(n, (ast.Pow, ast.LShift))
        and not (isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)))
        and not (isinstance(n, ast.Attribute) and n.attr.startswith("_"))
        for n in ast.walk(expr)
    )


def _evaluate(expr: ast.expr, names: dict[str, object]) -> object:
    """The expression's value from `names` and _HELPERS, or _UNKNOWN (a name or call they do not
    give, or a kind of expression not evaluated). It is the program's own code, run without builtins."""
    if not _evaluable(expr):
        return _UNKNOWN
    try:
        return eval(compile(ast.Expression(expr), "<check>", "eval"), {"__builtins__": {}}, {**_HELPERS, **names})
    except Exception:
        return _UNKNOWN


def _clauses(test: ast.expr, op: type) -> list[ast.expr]:
    """[a, b] of `a and b` (op ast.And: each must hold) or `a or b` (ast.Or: each must fail)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, op):
        return [c for v in test.values for c in _clauses(v, op)]
    return [test]


def _checks(fn: ast.AST) -> list[_Check]:
    """The asserts, `if ...: raise` guards and static_asserts of a function, one per clause."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            out += [_Check(t, True, f"assert {ast.unparse(t)}") for t in _clauses(node.test, ast.And)]
        elif isinstance(node, ast.If) and any(isinstance(st, ast.Raise) for st in node.body):
            out += [_Check(t, False, f"if {ast.unparse(t)}: raise") for t in _clauses(node.test, ast.Or)]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("static_assert") and node.args:
            out += [_Check(t, True, f"static_assert({ast.unparse(t)})") for t in _clauses(node.args[0], ast.And)]
    return out


def _covered(value: ast.expr) -> ast.expr | None:
    """`n` of a block size computed to cover it, `triton.next_power_of_2(n)` (one block a row: a
    smaller one leaves elements out); None when `min` caps it (the kernel then loops over blocks)."""
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    if any(ast.unparse(c.func) == "min" for c in calls):
        return None
    return next((c.args[0] for c in calls if ast.unparse(c.func).endswith("next_power_of_2") and c.args), None)


def _recorded(arg: ArgInfo) -> object:
    """What a check may read of a recorded argument: a scalar's value, a tensor's sizes (None: nothing)."""
    if arg.kind == "tensor" and arg.shape is not None:
        return _Sizes(arg.shape, arg.strides)
    return arg.value if arg.kind in ("scalar", "constexpr") and isinstance(arg.value, (int, float)) else None


def _passed(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    """{kernel parameter: the expression the launch passes for it}."""
    out: dict[str, ast.expr] = {}
    for param, arg in zip(params, call.args, strict=False):  # a launch may pass fewer
        if isinstance(arg, ast.Starred):
            break
        out[param] = arg
    return out | {k.arg: k.value for k in call.keywords if k.arg is not None}


@dataclass
class _Scope:
    """The kernel or its launcher, as its checks see the knob: the name it has there, the names the
    recorded launch gives values, the assignments before the launch (the launcher's), the checks."""

    var: str
    names: dict[str, object]
    assigns: list[ast.Assign]
    checks: list[_Check]

    def env(self, value: int) -> tuple[dict[str, object], set[str]]:
        """The names with the knob at `value`, and the names that follow it: an assignment that
        reads the knob is evaluated again (`n_blocks = N // BLOCK`); one that does not keeps the
        recorded value of what it assigns (the value the launch passed)."""
        env, moved = {**self.names, self.var: value}, {self.var}
        for st in self.assigns:
            targets = {n.id for t in st.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            reads = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
            if self.var in targets or (targets & self.names.keys() and not reads & moved):
                continue  # the pin overrides the knob's own assignment
            result = _evaluate(st.value, env)
            if result is _UNKNOWN:
                continue
            for target in st.targets:
                if isinstance(target, ast.Name):
                    env[target.id] = result
                elif isinstance(target, ast.Tuple) and isinstance(result, (tuple, list)):  # `M, N = x.shape`
                    unpacked = [e.id for e in target.elts if isinstance(e, ast.Name)]
                    if len(unpacked) == len(target.elts) == len(result):
                        env.update(zip(unpacked, result, strict=True))
            if reads & moved:
                moved |= targets
        return env, moved

    def refusal(self, original: int, value: int) -> str | None:
        """Why `value` would fail one of the checks the recorded launch passed (None: none)."""
        before, _ = self.env(original)
        after, moved = self.env(value)
        for check in self.checks:
            if not {n.id for n in ast.walk(check.test) if isinstance(n, ast.Name)} & moved:
                continue  # the knob does not reach it
            was, now = _evaluate(check.test, before), _evaluate(check.test, after)
            if was is not _UNKNOWN and bool(was) != check.holds:
                continue  # the recorded launch did not take this check's path
            if now is _UNKNOWN:
                why = _unevaluated(check, self.var, original, value)
            else:
                why = None if bool(now) == check.holds else f"`{check.text}` would fail"
            if why:
                return why
        return None


def _unevaluated(check: _Check, var: str, original: int, value: int) -> str | None:
    """Why `value` may fail a check the recording cannot evaluate, which `original` passed (None:
    it keeps to the check's safe side): a divisibility by the knob holds for the divisors of a value
    that divided; a bound on the knob, on its far side; anything else cannot be vouched for."""
    unknown = f"`{check.text}` cannot be evaluated from the recorded launch"
    if any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and _named(n.right, var) for n in ast.walk(check.test)
    ):
        return None if original % value == 0 else f"{unknown}; {value} does not divide {original}"
    test, holds = check.test, check.holds
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
    ):
        left, right = _named(test.left, var), _named(test.comparators[0], var)
        if left != right:
            larger = (isinstance(test.ops[0], (ast.Gt, ast.GtE)) == left) == holds  # the knob is bounded below
            if (value >= original) == larger:
                return None
            return f"{unknown}; only values {'above' if larger else 'below'} {original} keep it"
    return unknown


def _named(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def refused(request: RewriteRequest, knob: str, current: int, values: list[int]) -> dict[int, str]:
    """{value: why} of the `values` of the knob named `knob`, set to `current` at the recorded launch,
    that a check of the kernel or its launcher refuses, evaluated with the recorded launch's
    arguments where the check reads them."""
    kernel = plain_function(request.kernel.source)
    recorded = {a.name: a for a in request.profile.signatures[0].args} if request.profile.signatures else {}
    scalars = {n: v for n, a in recorded.items() if not isinstance(v := _recorded(a), (_Sizes, type(None)))}
    scopes = [_Scope(knob, scalars, [], _checks(kernel))]  # its tensors are pointers: no sizes there
    launcher = _launcher_scope(request, [a.arg for a in kernel.args.args], knob, recorded)
    scopes += [launcher] if launcher is not None else []
    out: dict[int, str] = {}
    for value in values:
        why = next((w for scope in scopes if (w := scope.refusal(current, value))), None)
        if why:
            out[value] = why
    return out


def _launcher_scope(
    request: RewriteRequest, params: list[str], knob: str, recorded: dict[str, ArgInfo]
) -> _Scope | None:
    """The launcher function as its checks see the knob, when the launch passes the knob by a name
    (a literal is pinned where it is, so no check reads it)."""
    tree = ast.parse(launcher_source(request)).body[0] if request.launcher is not None else None
    launcher = tree if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) else None  # not a launch statement
    call = launch_call(launcher, request.kernel.name) if launcher is not None else None
    if launcher is None or call is None:
        return None
    passed = _passed(call, params)
    var = passed.get(knob)
    if not isinstance(var, ast.Name):
        return None
    names = {
        e.id: value
        for p, e in passed.items()
        if isinstance(e, ast.Name) and p in recorded and (value := _recorded(recorded[p])) is not None
    }
    assigns = sorted(
        (n for n in ast.walk(launcher) if isinstance(n, ast.Assign) and n.lineno < call.lineno), key=lambda n: n.lineno
    )
    checks = _checks(launcher)
    for st in assigns:
        if any(_named(t, var.id) for t in st.targets) and (n := _covered(st.value)) is not None:
            covers = ast.parse(f"{var.id} >= ({ast.unparse(n)})", mode="eval").body
            checks.append(_Check(covers, True, f"{var.id} >= {ast.unparse(n)}, as `{ast.unparse(st)}` makes it"))
    return _Scope(var.id, names, assigns, checks)


def sizes_a_callers_tensor(request: RewriteRequest, knob: str) -> str | None:
    """Why the knob is not the launch's alone to move, where the launcher takes it from its caller (a
    parameter) and a tensor of the recorded launch has a dimension of its value: the caller likely sized
    that tensor by it (a split count, a scratch buffer), and a new value at the launch alone changes what is
    computed. (A local of the launcher is pinned where it is assigned: what is sized from it follows.)"""
    tree = ast.parse(launcher_source(request)).body[0] if request.launcher is not None else None
    launcher = tree if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    call = launch_call(launcher, request.kernel.name) if launcher is not None else None
    if launcher is None or call is None or not request.profile.signatures:
        return None
    var = _passed(call, [a.arg for a in plain_function(request.kernel.source).args.args]).get(knob)
    params = {a.arg for a in launcher.args.args + launcher.args.kwonlyargs}
    if not isinstance(var, ast.Name) or (param := _from_parameter(launcher, var.id, params)) is None:
        return None
    args = request.profile.signatures[0].args
    value = next((a.value for a in args if a.name == knob), None)
    sized = next((a for a in args if a.kind == "tensor" and value in (a.shape or [])), None)
    if sized is None or not isinstance(value, int) or value < 2:
        return None
    through = f" (through `{var.id}`)" if param != var.id else ""
    return (
        f"the caller passes it as `{param}`{through}, and `{sized.name}` has a dimension of {value}: moved at the "
        "launch alone, it no longer matches what the caller sized by it"
    )


def _from_parameter(launcher: ast.FunctionDef | ast.AsyncFunctionDef, name: str, params: set[str]) -> str | None:
    """The launcher's parameter `name` is, itself or through locals each assigned once from one name
    (`NUM_KV_SPLITS = num_kv_splits`): pinning such a local pins a copy, never what the caller sized."""
    seen: set[str] = set()
    while name not in params:
        if name in seen:
            return None
        seen.add(name)
        values = [
            node.value
            for node in ast.walk(launcher)
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and any(isinstance(t, ast.Name) and t.id == name for t in _targets(node))
        ]
        source = values[0] if len(values) == 1 else None
        if not isinstance(source, ast.Name):
            return None
        name = source.id
    return name


def _targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def a_modulus(request: RewriteRequest, knob: str) -> str | None:
    """Why the knob is no tile size, where the kernel takes something modulo it (`offs % PAGE_SIZE`): the
    period of the data's layout (a cache page, a group), fixed by how the data was laid out, not by the launch."""
    kernel = plain_function(request.kernel.source)
    for node in ast.walk(kernel):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _named(node.right, knob):
            return f"the kernel takes `{ast.unparse(node)}`: a period of the data's layout, not a tile size"
    return None
