"""`search`: a validated search over launch and compile knobs, emitted as a pinned config.

The knobs are what the launcher passes at the kernel's launch call: block-size constexprs
(names with BLOCK, TILE, SIZE, CHUNK or GROUP; other constexprs such as a bin count change
the result, not the speed), `num_warps` and `num_stages`; and in the kernel, the software
pipelining depth of its `range`/`tl.range` loops (`tl.range(..., num_stages=s)`). Each candidate changes one knob of
the recorded configuration (x2 and /2 first, then x4 and /4) and is validated and timed like
any other candidate, so a config only wins on the validators' measured speed (or, on CPU, the
formula's modelled metric).

The patch pins the value in the launcher: a literal is replaced; a launcher parameter is
assigned at the top of the launcher (callers that pass their own value are overridden, which
is what a pinned config means); a missing `num_warps`/`num_stages` keyword is added.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from .base import Candidate, Rewriter, RewriteRequest

TUNABLE = re.compile(r"BLOCK|TILE|SIZE|CHUNK|GROUP", re.I)
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

    def values(self) -> list[int]:
        return [v for i, v in enumerate(self.tries)
                if self.low <= v <= self.high and v != self.value and v not in self.tries[:i]]


def launch_call(tree: ast.AST, kernel: str) -> ast.Call | None:
    """The `kernel[grid](...)` call in `tree`, if there is one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            target = node.func.value
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name == kernel:
                return node
    return None


def knobs(request: RewriteRequest) -> tuple[list[Knob], list[str]]:
    """The knobs of the recorded launch, and why others were left alone."""
    signature = request.profile.signatures[0] if request.profile.signatures else None
    out, skipped = [], []
    for name, value in request.constexprs().items():
        if not TUNABLE.search(name):
            skipped.append(f"{name} (changes what the kernel computes, not how)")
        elif isinstance(value, int) and value > 0 and not value & (value - 1):
            out.append(Knob(name, value, (value * 2, value // 2, value * 4, value // 4), *CONSTEXPR_RANGE))
    warps = (signature.num_warps if signature else None) or 4
    out.append(Knob("num_warps", warps, (warps * 2, warps // 2), *WARPS_RANGE))
    stages = signature.num_stages if signature else None
    if stages:
        out.append(Knob("num_stages", stages, (stages + 1, stages - 1), *STAGES_RANGE))
    for loop in _loops(ast.parse(request.kernel.source)):
        current = next((k.value.value for k in loop.iter.keywords if k.arg == "num_stages"
                        and isinstance(k.value, ast.Constant)), None)
        out.append(Knob("num_stages", current, (2, 3, 4, 1), *STAGES_RANGE, loop_line=loop.lineno))
    if request.formula == "overlap":  # pipelining depth is the fix the formula names first
        out.sort(key=lambda k: k.name != "num_stages")
        for knob in out:
            if knob.name == "num_stages" and knob.value == 1 and not knob.loop_line:
                knob.tries = (3, 2, 4)
    return out, skipped


def _loops(tree: ast.AST) -> list[ast.For]:
    """`for` loops over `range(...)` or `tl.range(...)` (not static_range: it is unrolled)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
            and ast.unparse(n.iter.func) in ("range", "tl.range", "triton.language.range")]


def pin_loop(kernel: str, line: int, value: int) -> str:
    """The kernel with the loop at `line` software-pipelined over `value` stages (`tl.range`)."""
    loop = next(n for n in _loops(ast.parse(kernel)) if n.lineno == line)
    call = loop.iter
    lines = kernel.splitlines()
    keyword = next((k for k in call.keywords if k.arg == "num_stages"), None)
    if keyword is not None:
        _put(lines, keyword.value, str(value))
    else:
        _add_keyword(lines, call, "num_stages", value)
    if ast.unparse(call.func) == "range":  # plain range has no stages: make it tl.range
        _put(lines, call.func, "tl.range")
    return "\n".join(lines) + "\n"


def _put(lines: list[str], node: ast.expr, text: str) -> None:
    """Replace the source of a one-line expression by `text`."""
    row = lines[node.lineno - 1]
    lines[node.lineno - 1] = row[: node.col_offset] + text + row[node.end_col_offset:]


def _add_keyword(lines: list[str], call: ast.Call, name: str, value: int) -> None:
    """Add `name=value` just before the call's closing parenthesis."""
    row, col = call.end_lineno - 1, call.end_col_offset - 1
    sep = ", " if call.args or call.keywords else ""
    lines[row] = lines[row][:col].rstrip() + f"{sep}{name}={value}" + lines[row][col:]


def pin(launcher: str, kernel: str, knob: str, value: int) -> str:
    """The launcher with `knob` fixed to `value` at the kernel's launch call."""
    tree = ast.parse(launcher)
    fn = tree.body[0]
    call = launch_call(fn, kernel)
    if call is None:
        raise ValueError(f"the launcher does not launch {kernel}[grid](...) directly")
    lines = launcher.splitlines()
    keyword = next((k for k in call.keywords if k.arg == knob), None)
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    if keyword is None:
        _add_keyword(lines, call, knob, value)
    elif isinstance(keyword.value, ast.Constant):
        _put(lines, keyword.value, str(value))
    elif isinstance(keyword.value, ast.Name) and keyword.value.id in params:
        first = fn.body[0]
        at = fn.body[1] if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                            and len(fn.body) > 1) else first
        indent = re.match(r"\s*", lines[at.lineno - 1]).group(0)
        lines.insert(at.lineno - 1, f"{indent}{keyword.value.id} = {value}  # intelliperf search: pinned {knob}")
    else:
        raise ValueError(f"{knob}={ast.unparse(keyword.value)} is set by an expression the search does not rewrite")
    return "\n".join(lines) + "\n"


class SearchRewriter(Rewriter):
    """One knob change per candidate, in a fixed order, skipping configs already tried."""

    name = "search"

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        return self.next_untried(request, n)

    def rewrite(self, request: RewriteRequest) -> Candidate:
        found, skipped = knobs(request)
        if request.launcher is None:
            found = [k for k in found if k.loop_line]
            skipped.append("the launch configuration (the launcher is not a top-level function or method)")
        tried = {a.title for a in request.history if a.rewriter == self.name}
        reasons = []
        for knob in found:
            for value in knob.values():
                where = f"loop at line {request.kernel.line + knob.loop_line - 1} " if knob.loop_line else ""
                title = f"{where}{knob.name}={value} (was {knob.value if knob.value is not None else 'default'})"
                if title in tried:
                    continue
                if knob.loop_line:
                    return Candidate(rewriter=self.name, title=title, rationale=f"pipeline the {where}over {value} "
                                     "stages", kernel=pin_loop(request.kernel.source, knob.loop_line, value))
                try:
                    launcher = pin(textwrap.dedent(request.launcher.source), request.kernel.name, knob.name, value)
                except ValueError as exc:
                    reasons.append(str(exc))
                    break
                return Candidate(rewriter=self.name, title=title, launcher=launcher,
                                 rationale=f"launch with {knob.name}={value} instead of {knob.value}")
        why = "every knob value in range was tried" if not reasons else "; ".join(reasons)
        left = f"; left alone: {', '.join(skipped)}" if skipped else ""
        return Candidate.decline(self.name, why + left)
