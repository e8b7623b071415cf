"""`search`: a validated search over launch and compile knobs, emitted as a pinned config.

The knobs are what the launcher passes at the kernel's launch call: block-size constexprs
(names with BLOCK, TILE, SIZE, CHUNK or GROUP; other constexprs such as a bin count change
the result, not the speed), `num_warps` and `num_stages`; and in the kernel, the software
pipelining depth of its `range`/`tl.range` loops (`tl.range(..., num_stages=s)`). Each candidate changes one knob of
the recorded configuration (x2 and /2 first, then x4 and /4) and is validated and timed like
any other candidate, so a config only wins on the validators' measured speed (or, on CPU, the
formula's modelled metric). For contention, split knobs (SPLIT_K) move first: fewer programs
adding into each output is the fix itself.

Knobs interact, so on a GPU the search also screens them jointly: a *sweep* candidate puts the
kernel under `@triton.autotune` over num_warps x num_stages (the space of
benchmarks/autotune_baseline.py; num_warps alone for a kernel without a loop), the loop runs its
program as a screen (its outputs compared, nothing more) and reads from the run's recording which
config the autotuner chose; the sweep itself is never the fix, its choice is the next candidate,
pinned and validated in full. The sweep comes first where the formula's metric moves
with pipelining and warps (overlap, bankConflict), else after the single knob moves.

A value the program's own checks refuse is never tried: the launcher's asserts and `if ...: raise`
guards and the kernel's static_asserts that read the knob, evaluated with the recorded launch's
sizes (where a size is not recorded, only values on a check's safe side: divisors of a block size
that divides, the far side of a bound), and a block the launcher sizes with next_power_of_2 to
cover a row never shrinks; the decline lists each value left out and why.

The patch pins the value in the launcher: a literal is replaced; a launcher parameter is
assigned at the top of the launcher (callers that pass their own value are overridden, which
is what a pinned config means); a missing `num_warps`/`num_stages` keyword is added.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..models import ArgInfo
from ..syntax import end, indent_of, last_line
from .base import Candidate, Rewriter, RewriteRequest
from .source import Node, grid_of, launch_call, lines_of, node_span, replace_spans

TUNABLE = re.compile(r"BLOCK|TILE|SIZE|CHUNK|GROUP|SPLIT", re.I)
CONSTEXPR_RANGE = (16, 16384)
WARPS_RANGE = (1, 32)
STAGES_RANGE = (1, 6)


@dataclass
class Knob:
    name: str
    value: int | None
    tries: tuple[int, ...]  # in the order they are tried
    low: int
    high: int
    loop_line: int | None = None  # a loop of the kernel (line in its source), not the launch call
    blocked: dict[int, str] = field(default_factory=dict)  # values the program's own checks refuse: why

    def values(self) -> list[int]:
        return [
            v
            for i, v in enumerate(self.tries)
            if self.low <= v <= self.high and v != self.value and v not in self.tries[:i] and v not in self.blocked
        ]


def knobs(request: RewriteRequest) -> tuple[list[Knob], list[str]]:
    """The knobs of the recorded launch, and why others were left alone."""
    signature = request.profile.signatures[0] if request.profile.signatures else None
    out, skipped = [], []
    tuned = decorated_names(request.kernel.source)
    for name, value in request.constexprs().items():
        if name in tuned:
            skipped.append(f"{name} (set by the kernel's @triton.{tuned[name]})")
        elif not TUNABLE.search(name):
            skipped.append(f"{name} (changes what the kernel computes, not how)")
        elif isinstance(value, int) and value > 0 and not value & (value - 1):
            split = re.search("SPLIT", name, re.I) is not None
            tries: tuple[int, ...] = (value * 2, value // 2, value * 4, value // 4)
            if split and request.formula == "atomicContention":
                tries = (value // 2, value // 4, value * 2)  # fewer programs adding into each output first
            out.append(Knob(name, value, tries, 1 if split else CONSTEXPR_RANGE[0], CONSTEXPR_RANGE[1]))
    if request.formula == "atomicContention":
        out.sort(key=lambda k: re.search("SPLIT", k.name, re.I) is None)
    warps = (signature.num_warps if signature else None) or 4
    stages = signature.num_stages if signature else None
    if "num_warps" in tuned:
        skipped.append("num_warps and num_stages (set by the kernel's @triton.autotune configs)")
    else:
        out.append(Knob("num_warps", warps, (warps * 2, warps // 2), *WARPS_RANGE))
        if stages:
            out.append(Knob("num_stages", stages, (stages + 1, stages - 1), *STAGES_RANGE))
    for loop, over in _loops(ast.parse(request.kernel.source)):
        current = next(
            (
                k.value.value
                for k in over.keywords
                if k.arg == "num_stages" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, int)
            ),
            None,
        )
        out.append(Knob("num_stages", current, (2, 3, 4, 1), *STAGES_RANGE, loop_line=loop.lineno))
    if request.formula == "overlap":  # pipelining depth is the fix the formula names first
        out.sort(key=lambda k: k.name != "num_stages")
        for knob in out:
            if knob.name == "num_stages" and knob.value == 1 and not knob.loop_line:
                knob.tries = (3, 2, 4)
    for knob in out:
        if not knob.loop_line and knob.value is not None:
            knob.blocked = refused(request, knob)
            skipped += [f"{knob.name}={v} ({why})" for v, why in knob.blocked.items()]
    return out, skipped


def decorated_names(kernel: str) -> dict[str, str]:
    """{name: decorator} of what @triton.autotune configs (and num_warps/num_stages with them) or
    @triton.heuristics set: pinning those at the launch conflicts with the decorator."""
    fn = _function(kernel)
    out: dict[str, str] = {}
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        kind = _decorator(dec)
        if kind == "autotune":
            out |= {"num_warps": kind, "num_stages": kind}
            configs = (n for n in ast.walk(dec) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("Config"))
            for call in configs:
                if call.args and isinstance(call.args[0], ast.Dict):
                    out |= {
                        k.value: kind
                        for k in call.args[0].keys
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                    }
        elif kind == "heuristics":
            values = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "values"), None)
            if isinstance(values, ast.Dict):
                out |= {name: kind for name in _string_keys(values)}
    return out


def _function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    fn = ast.parse(source).body[0]
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError("the kernel is not a plain function")
    return fn


def _string_keys(mapping: ast.Dict) -> list[str]:
    return [k.value for k in mapping.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _decorator(dec: ast.Call) -> str:
    """`autotune` of `@triton.autotune(...)`."""
    return ast.unparse(dec.func).rsplit(".", 1)[-1]


def _loops(tree: ast.AST) -> list[tuple[ast.For, ast.Call]]:
    """`for` loops over `range(...)` or `tl.range(...)` (not static_range: it is unrolled), with that call."""
    return [
        (n, n.iter)
        for n in ast.walk(tree)
        if isinstance(n, ast.For)
        and isinstance(n.iter, ast.Call)
        and ast.unparse(n.iter.func) in ("range", "tl.range", "triton.language.range")
    ]


# --- values the program's own checks refuse -------------------------------------------------------
# A launcher often checks what it launches: `assert N % BLOCK_N == 0`, `if K % BLOCK_K != 0: raise`,
# `assert BLOCK >= n_cols`, or sets `BLOCK = triton.next_power_of_2(n)` for one block to cover a row;
# a kernel may `tl.static_assert(BLOCK_N <= HEAD_DIM)`. A value that fails one crashes the program
# instead of testing a config, so it is never proposed, and the decline says why.


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


def refused(request: RewriteRequest, knob: Knob) -> dict[int, str]:
    """{value: why} of the knob's values a check of the kernel or its launcher refuses, evaluated
    with the recorded launch's arguments where the check reads them."""
    if knob.value is None:
        return {}
    kernel = _function(request.kernel.source)
    recorded = {a.name: a for a in request.profile.signatures[0].args} if request.profile.signatures else {}
    scalars = {n: v for n, a in recorded.items() if not isinstance(v := _recorded(a), (_Sizes, type(None)))}
    scopes = [_Scope(knob.name, scalars, [], _checks(kernel))]  # its tensors are pointers: no sizes there
    launcher = _launcher_scope(request, [a.arg for a in kernel.args.args], knob.name, recorded)
    scopes += [launcher] if launcher is not None else []
    out: dict[int, str] = {}
    for value in knob.values():
        why = next((w for scope in scopes if (w := scope.refusal(knob.value, value))), None)
        if why:
            out[value] = why
    return out


def _launcher_scope(
    request: RewriteRequest, params: list[str], knob: str, recorded: dict[str, ArgInfo]
) -> _Scope | None:
    """The launcher function as its checks see the knob, when the launch passes the knob by a name
    (a literal is pinned where it is, so no check reads it)."""
    tree = ast.parse(_launcher_source(request)).body[0] if request.launcher is not None else None
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


def pin_loop(kernel: str, line: int, value: int) -> str:
    """The kernel with the loop at `line` software-pipelined over `value` stages (`tl.range`)."""
    call = next(over for loop, over in _loops(ast.parse(kernel)) if loop.lineno == line)
    keyword = next((k for k in call.keywords if k.arg == "num_stages"), None)
    added = (keyword.value, str(value)) if keyword is not None else _keyword_added(kernel, call, "num_stages", value)
    edits: list[tuple[Node, str]] = [added]
    if ast.unparse(call.func) == "range":  # plain range has no stages: make it tl.range
        edits.append((call.func, "tl.range"))
    return replace_spans(kernel, edits)


def _keyword_added(text: str, call: ast.Call, name: str, value: int) -> tuple[Node, str]:
    """The edit that adds `name=value` right after the call's last argument (a trailing comma
    and one argument a line, as black writes calls, stay valid)."""
    arguments: list[Node] = [*call.args, *call.keywords]
    last = max(arguments, key=end, default=None)
    if last is None:  # `f()`: the call itself, its closing parenthesis after the new keyword
        return call, _segment(text, call)[:-1] + f"{name}={value})"
    return last, _segment(text, last) + f", {name}={value}"


def _segment(text: str, node: Node) -> str:
    start, stop = node_span(text, node)
    return text[start:stop]


def pin(launcher: str, kernel: str, knob: str, value: int, params: list[str] | None = None) -> str:
    """The launcher (a function, or a launch statement) with `knob` fixed to `value` at the
    kernel's launch call: a keyword or positional literal is replaced, a launcher parameter is
    assigned at the top of the launcher, a `**kwargs` is overridden, a missing keyword is added.
    The same literal or name in the grid expression follows (a grid of cdiv(n, 1024) with BLOCK=1024)."""
    tree = ast.parse(launcher)
    fn = tree.body[0] if isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    call = launch_call(tree, kernel)
    if call is None:
        raise ValueError(f"the launcher does not launch {kernel}[grid](...) directly")
    keyword = next((k for k in call.keywords if k.arg == knob), None)
    index = (params or []).index(knob) if knob in (params or []) else None
    current = (
        keyword.value
        if keyword is not None
        else call.args[index]
        if index is not None
        and index < len(call.args)
        and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
        else None
    )
    starred = next((k for k in call.keywords if k.arg is None), None)
    fn_params = {a.arg for a in fn.args.args + fn.args.kwonlyargs} if fn is not None else set()
    if current is None and starred is not None:  # **cfg may hold the knob: override it there
        return replace_spans(launcher, [(starred.value, f"{{**{ast.unparse(starred.value)}, {knob!r}: {value}}}")])
    if current is None:
        return replace_spans(launcher, [_keyword_added(launcher, call, knob, value)])
    if isinstance(current, ast.Constant):
        grid = [n for n in ast.walk(grid_of(call)) if isinstance(n, ast.Constant) and n.value == current.value]
        return replace_spans(launcher, [(n, str(value)) for n in [current, *grid]])
    if isinstance(current, ast.Name) and fn is not None and current.id in fn_params:
        first = fn.body[0]
        at = (
            fn.body[1]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(fn.body) > 1)
            else first
        )
        return _assign_line(launcher, at.lineno - 1, at, current.id, value, knob)
    if isinstance(current, ast.Name) and fn is None:  # a launch statement: the name's uses in it
        uses = [n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id == current.id]
        return replace_spans(launcher, [(n, str(value)) for n in uses])
    if isinstance(current, ast.Name) and fn is not None:  # a local of the launcher: after its last assignment
        return _pin_local(launcher, fn, call, current.id, value, knob)
    raise ValueError(f"{knob}={ast.unparse(current)} is set by an expression the search does not rewrite")


def _pin_local(
    launcher: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, name: str, value: int, knob: str
) -> str:
    """`name = value` right after the last statement, in the block that holds the launch, that
    assigns `name` before it (so buffers sized from the name later follow it too), or just
    before the launch statement when no statement of that block assigns it."""
    block, launch = next(
        (b, st) for node in ast.walk(fn) for b in _blocks(node) for st in b if any(n is call for n in ast.walk(st))
    )
    before = block[: block.index(launch)]
    assigns = [
        st
        for st in before
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(st))
    ]
    anchor = assigns[-1] if assigns else launch
    return _assign_line(launcher, last_line(anchor) if assigns else launch.lineno - 1, anchor, name, value, knob)


def _assign_line(launcher: str, row: int, like: ast.stmt, name: str, value: int, knob: str) -> str:
    """The launcher with `name = value` inserted as line `row` (0-based), indented as `like`."""
    lines = lines_of(launcher)
    indent = indent_of(lines[like.lineno - 1])
    lines.insert(row, f"{indent}{name} = {value}  # intelliperf search: pinned {knob}")
    return "\n".join(lines) + "\n"


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    return [b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(node, f, None), list)]


def widen_autotune(kernel: str) -> str | None:
    """The kernel with its @triton.autotune config list widened by each config's pipelining and
    warp neighbours (num_stages +/- 1, num_warps x2), so the autotuner itself picks among more; None
    when the decorator's configs are not an argument the search can wrap (`**kwargs`)."""
    try:
        fn = _function(kernel)
    except (SyntaxError, ValueError):
        return None
    dec = next((d for d in fn.decorator_list if isinstance(d, ast.Call) and _decorator(d) == "autotune"), None)
    if dec is None:
        return None
    configs = next((k.value for k in dec.keywords if k.arg == "configs"), None)
    if configs is None and dec.args and not isinstance(dec.args[0], ast.Starred):
        configs = dec.args[0]  # autotune(configs, key): the tutorials' `autotune(list(filter(keep, configs)), ...)`
    if configs is None:
        return None
    # The configs' own text (comments and all) in parentheses: any expression, a conditional
    # `A if c else B` too, stays one iterable.
    wider = replace_spans(kernel, [(configs, WIDENED.format(configs=_segment(kernel, configs)))])
    try:
        ast.parse(wider)
    except SyntaxError:  # not expected; never hand on a kernel that does not parse
        return None
    return wider


# A config's neighbours are copies made by its own class from its attributes (a triton.Config's
# attributes are its constructor's keywords), so the decorator needs no name the file may not
# import as such (`triton`, `Config`: `from triton import autotune, Config`, `import triton as tr`),
# and keep what the config sets besides warps and stages (pre_hook, num_ctas, maxnreg). The
# configs' expression is the outermost iterable, evaluated where the decorator is (a class body's
# names too); dict.fromkeys drops a neighbour equal to a config already listed (Config compares
# by value), so the autotuner times no config twice.
WIDENED = (
    "list(dict.fromkeys(_ip_v for _ip_c in ({configs}) for _ip_v in (_ip_c, *("
    '_ip_c.__class__(**{{**_ip_c.__dict__, "num_warps": _ip_w, "num_stages": _ip_s}}) for _ip_w, _ip_s in ('
    "(_ip_c.num_warps, _ip_c.num_stages + 1), (_ip_c.num_warps, _ip_c.num_stages - 1), "
    "(_ip_c.num_warps * 2, _ip_c.num_stages)) if _ip_s >= 1 and (_ip_w <= 16 or _ip_w == _ip_c.num_warps)))))"
)


SWEEP_WARPS = (1, 2, 4, 8, 16)
SWEEP_STAGES = (1, 2, 3, 4)  # pipelining depths: swept only where the kernel has a loop to pipeline
SWEEP = "sweep: "  # how every sweep's title starts
SWEEP_FIRST = ("overlap", "bankConflict")  # formulas whose metric moves with pipelining depth and warps
# A screen's benchmark, not the measurement a choice is judged by (the pinned choice is timed with
# statistics): each config 25 ms after 5 ms of warm-up, against Triton's 100 and 25 (0.12 s a config
# on the H100, benchmarks/sweep_cost.py).
SWEEP_BENCH = (
    "lambda kernel_call, quantiles: triton.testing.do_bench(kernel_call, warmup=5, rep=25, quantiles=quantiles)"
)


# Registers a thread may hold on NVIDIA GPUs: a config whose tile accumulator alone needs more spills all
# of it (never the autotuner's choice) and is the slowest to compile: a 128x128 GEMM tile on one warp
# took ptxas 23 s, on two 4.7 s, on four 1-2 s (sm_90, Triton 3.9 on the CPU machine).
REGISTERS_PER_THREAD = 255


def sweep_warps(kernel: str, constexprs: dict) -> tuple[int, ...]:
    """The num_warps values a sweep tries: those whose threads can hold the kernel's largest tile
    accumulator (`tl.zeros`/`tl.full` of a shape the launch's constexprs give) in registers."""
    elements = _largest_tile(kernel, constexprs)
    fits = tuple(w for w in SWEEP_WARPS if elements <= REGISTERS_PER_THREAD * 32 * w)
    return fits or SWEEP_WARPS[-1:]


def _largest_tile(kernel: str, constexprs: dict) -> int:
    """Elements of the largest tile the kernel allocates with a shape known at the launch (0: none)."""
    largest = 0
    for node in ast.walk(_function(kernel)):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Tuple, ast.List))):
            continue
        if ast.unparse(node.func).split(".")[-1] not in ("zeros", "full"):
            continue
        dims = [
            e.value if isinstance(e, ast.Constant) else constexprs.get(e.id) if isinstance(e, ast.Name) else None
            for e in node.args[0].elts
        ]
        if all(isinstance(d, int) and d > 0 for d in dims):
            largest = max(largest, math.prod(dims))  # type: ignore[arg-type]  # ints, checked above
    return largest


def sweep_title(stages: bool, warps: tuple[int, ...] = SWEEP_WARPS) -> str:
    left_out = [w for w in SWEEP_WARPS if w not in warps]
    why = f"; num_warps {', '.join(map(str, left_out))} left out: its threads cannot hold the tile" if left_out else ""
    if stages:
        return f"sweep: num_warps x num_stages ({len(warps) * len(SWEEP_STAGES)} configs{why}) through triton.autotune"
    return f"sweep: num_warps ({len(warps)} configs; no loop to pipeline{why}) through triton.autotune"


def has_loop(kernel: str) -> bool:
    """Whether the kernel has a loop, the only code num_stages changes (software pipelining)."""
    return any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(_function(kernel)))


def sweep_kernel(kernel: str, written: list[str], warps: tuple[int, ...] = SWEEP_WARPS) -> str:
    """The kernel under `@triton.autotune` over num_warps x num_stages (num_warps alone where it has no
    loop), a screen the loop runs to learn which config the autotuner picks on this device (the
    launch's own num_warps/num_stages are overridden by the config's), each config benchmarked
    briefly (SWEEP_BENCH). Outputs the kernel writes are restored after each config's benchmark, so
    accumulating kernels do not add up the benchmark runs."""
    fn = _function(kernel)
    jit = next(
        (
            d
            for d in fn.decorator_list
            if ast.unparse(d.func if isinstance(d, ast.Call) else d) in ("triton.jit", "triton.language.jit")
        ),
        None,
    )
    if jit is None:
        raise ValueError(
            "the kernel is not decorated with @triton.jit by that name, so the sweep cannot name triton.autotune"
        )
    first = min(fn.decorator_list, key=lambda d: d.lineno)
    lines = lines_of(kernel)
    indent = indent_of(lines[first.lineno - 1])
    configs = (
        f"[triton.Config({{}}, num_warps=w, num_stages=s) for w in {warps} for s in {SWEEP_STAGES}]"
        if has_loop(kernel)
        else f"[triton.Config({{}}, num_warps=w) for w in {warps}]"
    )
    decorator = (
        f"{indent}@triton.autotune(configs={configs}, key=[], restore_value={sorted(written)!r}, "
        f"do_bench={SWEEP_BENCH})"
    )
    lines.insert(first.lineno - 1, decorator)
    return "\n".join(lines) + "\n"


def unpinned(launcher: str, kernel: str) -> str:
    """The launcher with the launch's own num_warps/num_stages dropped, for the sweep: Triton's
    autotuner passes the config's values beside the launch's keywords, which would collide. The
    sweep is a screen, never the patch, so a keyword becomes `**{}` (valid anywhere a keyword is)."""
    call = launch_call(ast.parse(launcher), kernel)
    if call is None:
        raise ValueError(f"the launcher does not launch {kernel}[grid](...) directly")
    edits: list[tuple[Node, str]] = [(k, "**{}") for k in call.keywords if k.arg in ("num_warps", "num_stages")]
    edits += [
        (
            k.value,
            f"{{_ip_k: _ip_v for _ip_k, _ip_v in ({ast.unparse(k.value)}).items() "
            "if _ip_k not in ('num_warps', 'num_stages')}",
        )
        for k in call.keywords
        if k.arg is None
    ]
    return replace_spans(launcher, edits)


def _launcher_source(request: RewriteRequest) -> str:
    if request.launcher is None:
        raise ValueError("the launch cannot be rewritten (it is outside the project)")
    return textwrap.dedent(request.launcher.source)


def _swept(request: RewriteRequest) -> dict | None:
    """The config an earlier sweep's autotuner chose, if one ran (its num_stages only where it swept them)."""
    for a in request.history:
        if a.rewriter == "search" and a.title.startswith(SWEEP) and a.chosen:
            return a.chosen if "num_stages" in a.title else {k: v for k, v in a.chosen.items() if k != "num_stages"}
    return None


class SearchRewriter(Rewriter):
    """On a GPU, a sweep of num_warps x num_stages through the kernel's own autotuner first (for
    formulas that pipelining and warps move) and its choice pinned; then one knob change per
    candidate, then pairs of launch knobs moved together, in a fixed order, skipping configs
    already tried. An autotuned kernel first gets its config list widened."""

    name = "search"
    summary = "offline: launch and compile knobs (block sizes, num_warps, num_stages), pinned in the launcher"

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        return self.next_untried(request, n)

    def rewrite(self, request: RewriteRequest) -> Candidate:
        found, skipped = knobs(request)
        if request.launcher is None:
            found = [k for k in found if k.loop_line]
            skipped.append("the launch configuration (the launch is not a statement of the project)")
        tried = {a.title for a in request.history if a.rewriter == self.name}
        widened = widen_autotune(request.kernel.source)
        if widened is not None and WIDEN not in tried:
            return Candidate(
                rewriter=self.name,
                title=WIDEN,
                kernel=widened,
                rationale="let the kernel's own autotuner choose among more pipelining depths and warps",
            )
        reasons: list[str] = []
        sweep = self._sweep(request, found, tried, reasons)
        if sweep is not None:
            return sweep
        for moves in _moves(found, _swept(request)):
            title = ", ".join(_title(request, knob, value) for knob, value in moves)
            if title in tried:
                continue
            try:
                return self._candidate(request, moves, title)
            except ValueError as exc:
                reasons.append(str(exc))
        why = "every knob value in range was tried" if not reasons else "; ".join(dict.fromkeys(reasons))
        left = f"; left alone: {', '.join(skipped)}" if skipped else ""
        return Candidate.decline(self.name, why + left)

    def _sweep(
        self, request: RewriteRequest, found: list[Knob], tried: set[str], reasons: list[str]
    ) -> Candidate | None:
        """The sweep, when it is this candidate's turn: on a GPU (the interpreter has no timer to tune
        with), for a kernel the search can pin warps and stages of, first for formulas that
        pipelining and warps move, else once every single knob move was tried."""
        pinnable = any(k.name == "num_warps" and not k.loop_line for k in found)
        if any(t.startswith(SWEEP) for t in tried) or not pinnable or request.hardware.device.startswith("no GPU"):
            return None
        singles = {_title(request, k, v) for k in found for v in k.values()}
        if request.formula not in SWEEP_FIRST and not singles <= tried:
            return None
        warps = sweep_warps(request.kernel.source, request.constexprs())
        try:
            kernel = sweep_kernel(request.kernel.source, request.launch.get("written") or [], warps)
            launcher = unpinned(_launcher_source(request), request.kernel.name)
        except ValueError as exc:
            reasons.append(str(exc))
            return None
        return Candidate(
            rewriter=self.name,
            title=sweep_title(has_loop(request.kernel.source), warps),
            kernel=kernel,
            launcher=launcher,
            sweep=True,
            rationale="let Triton's autotuner time every num_warps x num_stages config on this device (num_warps "
            "alone where the kernel has no loop to pipeline); "
            "its choice is then validated as a pinned config",
        )

    def _candidate(self, request: RewriteRequest, moves: list[tuple[Knob, int]], title: str) -> Candidate:
        kernel = launcher = None
        params = [a.arg for a in _function(request.kernel.source).args.args]
        for knob, value in moves:
            if knob.loop_line:
                kernel = pin_loop(kernel or request.kernel.source, knob.loop_line, value)
            else:
                launcher = pin(launcher or _launcher_source(request), request.kernel.name, knob.name, value, params)
        return Candidate(
            rewriter=self.name, title=title, kernel=kernel, launcher=launcher, rationale="launch with " + title
        )


WIDEN = "autotune configs widened (num_stages +/-1, num_warps x2)"


def _title(request: RewriteRequest, knob: Knob, value: int) -> str:
    where = f"loop at line {request.kernel.line + knob.loop_line - 1} " if knob.loop_line else ""
    return f"{where}{knob.name}={value} (was {knob.value if knob.value is not None else 'default'})"


def _moves(found: list[Knob], swept: dict | None = None) -> list[list[tuple[Knob, int]]]:
    """The config a sweep chose (its warps and stages together), then each knob's values alone,
    then every pair of two different knobs at their first two values (a block size with
    num_warps, num_warps with num_stages): knobs interact."""
    launch = {k.name: k for k in found if not k.loop_line and k.name in ("num_warps", "num_stages")}
    if swept and "num_warps" in launch:  # a launch the search can pin; stages may not have been recorded
        launch.setdefault("num_stages", Knob("num_stages", None, (), *STAGES_RANGE))
    chosen = [[(launch[n], swept[n]) for n in launch if swept.get(n) not in (None, launch[n].value)]] if swept else []
    single = [[(k, v)] for k in found for v in k.values()]
    pairs = [
        [(a, va), (b, vb)]
        for i, a in enumerate(found)
        for b in found[i + 1 :]
        if (a.name, a.loop_line) != (b.name, b.loop_line)
        for va in a.values()[:2]
        for vb in b.values()[:2]
    ]
    return [m for m in chosen if m] + single + pairs
