"""The knobs of the knob search: what a recorded launch can be tuned by, and the moves tried.

A knob is a block-size constexpr the launch passes (names with BLOCK, TILE, SIZE, CHUNK, GROUP or
SPLIT; not one the caller sized a tensor by, nor one the kernel takes a modulus by), `num_warps`,
`num_stages`, or the pipelining depth of one of the kernel's range loops. Each knob lists the values
tried, in order, without those the program's own checks refuse (search_checks.py); `knob_moves` turns
the knobs into the configs the search proposes, one a candidate.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .base import RewriteRequest
from .kernel_syntax import decorator_name, plain_function, range_loops
from .search_checks import a_modulus, refused, sizes_a_callers_tensor

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
    skipped: list[str] = []
    tuned = decorated_names(request.kernel.source)
    out = _constexpr_knobs(request, tuned, skipped)
    if request.formula == "atomicContention":
        out.sort(key=lambda k: re.search("SPLIT", k.name, re.I) is None)
    warps = (signature.num_warps if signature else None) or 4
    stages = signature.num_stages if signature else None
    blind = request.hardware.device.startswith("no GPU") and not request.formula_sees_warps
    if "num_warps" in tuned:
        skipped.append("num_warps and num_stages (set by the kernel's @triton.autotune configs)")
    elif blind:
        skipped.append(f"num_warps and num_stages ({request.formula}'s evidence without a GPU does not see them)")
    else:
        out.append(Knob("num_warps", warps, (warps * 2, warps // 2), *WARPS_RANGE))
        if stages:
            out.append(Knob("num_stages", stages, (stages + 1, stages - 1), *STAGES_RANGE))
    loops = [] if blind else range_loops(ast.parse(request.kernel.source))
    for loop, over in loops:
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
            knob.blocked = refused(request, knob.name, knob.value, knob.values())
            skipped += [f"{knob.name}={v} ({why})" for v, why in knob.blocked.items()]
    return out, skipped


def _constexpr_knobs(request: RewriteRequest, tuned: dict[str, str], skipped: list[str]) -> list[Knob]:
    """The block-size constexprs the launch alone sets; why each other constexpr is left alone goes to
    `skipped`."""
    out = []
    for name, value in request.constexprs().items():
        if name in tuned:
            skipped.append(f"{name} (set by the kernel's @triton.{tuned[name]})")
        elif not TUNABLE.search(name):
            skipped.append(f"{name} (changes what the kernel computes, not how)")
        elif why := sizes_a_callers_tensor(request, name) or a_modulus(request, name):
            skipped.append(f"{name} ({why})")
        elif isinstance(value, int) and value > 0 and not value & (value - 1):
            split = re.search("SPLIT", name, re.I) is not None
            tries: tuple[int, ...] = (value * 2, value // 2, value * 4, value // 4)
            if split and request.formula == "atomicContention":
                tries = (value // 2, value // 4, value * 2)  # fewer programs adding into each output first
            out.append(Knob(name, value, tries, 1 if split else CONSTEXPR_RANGE[0], CONSTEXPR_RANGE[1]))
    return out


def decorated_names(kernel: str) -> dict[str, str]:
    """{name: decorator} of what @triton.autotune configs (and num_warps/num_stages with them) or
    @triton.heuristics set: pinning those at the launch conflicts with the decorator."""
    fn = plain_function(kernel)
    out: dict[str, str] = {}
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        kind = decorator_name(dec)
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


def _string_keys(mapping: ast.Dict) -> list[str]:
    return [k.value for k in mapping.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def knob_moves(found: list[Knob], swept: dict | None = None) -> list[list[tuple[Knob, int]]]:
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
