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

The parts: search_knobs.py (the knobs and the moves tried), search_checks.py (values the program's
own checks refuse), search_edits.py (pinning a knob, widening autotune configs), search_sweep.py
(the autotuned sweep); this module holds the rewriter that orders them into candidates.
"""

from __future__ import annotations

from .base import Candidate, Rewriter, RewriteRequest
from .kernel_syntax import launcher_source, plain_function
from .search_edits import pin, pin_loop, widen_autotune
from .search_knobs import Knob, decorated_names, knob_moves, knobs
from .search_sweep import (
    SWEEP,
    SWEEP_STAGES,
    SWEEP_WARPS,
    has_loop,
    sweep_kernel,
    sweep_title,
    sweep_warps,
    unpinned,
)

# The rewriter, and what tests and benchmarks import from here (defined in the modules above).
__all__ = [
    "SWEEP",
    "SWEEP_STAGES",
    "SWEEP_WARPS",
    "WIDEN",
    "Knob",
    "SearchRewriter",
    "decorated_names",
    "knobs",
    "pin",
    "pin_loop",
    "sweep_kernel",
    "sweep_title",
    "sweep_warps",
    "unpinned",
    "widen_autotune",
]


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
        for moves in knob_moves(found, _swept(request)):
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
        if not request.sweep_first and not singles <= tried:
            return None
        warps = sweep_warps(request.kernel.source, request.constexprs())
        try:
            kernel = sweep_kernel(request.kernel.source, request.launch.get("written") or [], warps)
            launcher = unpinned(launcher_source(request), request.kernel.name)
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
        params = [a.arg for a in plain_function(request.kernel.source).args.args]
        for knob, value in moves:
            if knob.loop_line:
                kernel = pin_loop(kernel or request.kernel.source, knob.loop_line, value)
            else:
                launcher = pin(launcher or launcher_source(request), request.kernel.name, knob.name, value, params)
        return Candidate(
            rewriter=self.name, title=title, kernel=kernel, launcher=launcher, rationale="launch with " + title
        )


WIDEN = "autotune configs widened (num_stages +/-1, num_warps x2)"


def _title(request: RewriteRequest, knob: Knob, value: int) -> str:
    where = f"loop at line {request.kernel.line + knob.loop_line - 1} " if knob.loop_line else ""
    return f"{where}{knob.name}={value} (was {knob.value if knob.value is not None else 'default'})"
