"""Compare a candidate's output buffers with the reference's, element by element.

Tolerances depend on the dtype (integers and booleans exact). A buffer the kernel accumulates
into with float atomics, or whose values a reduction made (tl.sum, tl.dot), may legitimately
differ by the order of the additions: its allowance grows with the square root of the number of
terms one element sums (the random-walk size of rounding errors; the caller counts them,
`correctness.reordering`), relative to the element's own scale: the largest reference value in its row
and in its column (every line of 16 or more elements through it), the smaller of them. NaN and
Inf positions must match; an output that is all zeros where the reference has signal fails even
when the values are tiny; with poisoned buffers (replay), elements still holding the poison were
never written.

Imports only numpy, torch and pydantic.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from .verdict import Difference, Problem

# (rtol, atol) per dtype; integers and booleans are compared exactly.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (1e-5, 1e-6),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float8_e4m3fn": (1.25e-1, 1e-3),
    "float8_e5m2": (2.5e-1, 1e-3),
}
TF32_TOLERANCE = (1e-3, 1e-5)  # float32 outputs of tf32 dots: a 10-bit mantissa
EPSILON = {"float64": 2.2e-16, "float32": 1.19e-7, "float16": 9.77e-4, "bfloat16": 7.81e-3}
LOWER_PRECISION = (("float16", 9.77e-4), ("bfloat16", 7.81e-3), ("float32", 1.19e-7))  # (float32: float64 only)
RANDOM_WALK_SIGMAS = 4
STAGNANT = 2.0  # terms x epsilon past which a running float sum stops absorbing its terms
# The shortest row or column whose largest value is an element's scale: a reordered sum's rounding follows its
# partial sums, and an element that cancels is small beside them; among 16 results of such sums one is of
# their size (all 16 below half of it: about 2e-7 for mixed signs), among 2 or 4 often none is.
LINE = 16
# A reduction written in a 16-bit format was fed 16-bit operands rounded inside the kernel (softmax
# probabilities before attention's second dot); another order or pipelining moves some of them across a
# rounding boundary. Units of the output format's rounding, at the element's scale, that this may cost.
ROUNDING_UNITS = 2
INT_POISON = -0x5A5A5A5A  # fills integer outputs before a replay; floats get NaN
# A replay's argument the call left bit for bit as it was given, saved as this instead of a copy: its
# value is the trial's input (inputs/<label>.pt), which the parent reads when the other side differs.
UNCHANGED = "unchanged"


class Tolerances(BaseModel):
    """Per-run tolerances: defaults by dtype, overridable (`{"float32": [1e-4, 1e-5]}`)."""

    overrides: dict[str, tuple[float, float]] = Field({}, description="dtype -> (rtol, atol)")
    tf32: bool = Field(False, description="float32 outputs come from tf32 dots: looser float32 tolerance")
    examples: int = Field(5, description="differing elements listed per mismatch")

    def for_dtype(self, dtype: str) -> tuple[float, float]:
        if dtype in self.overrides:
            return self.overrides[dtype]
        if dtype == "float32" and self.tf32:
            return TF32_TOLERANCE
        return DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))


def dtype_name(tensor) -> str:
    return str(tensor.dtype).replace("torch.", "")


def compare_buffer(
    ref,
    cand,
    *,
    name: str,
    dispatch: int | None,
    tol: Tolerances,
    terms: Reordering | None = None,
    poisoned: bool = False,
    atomic: bool = False,
) -> list[Problem]:
    """Problems of `cand` against `ref` (torch tensors on the host); empty when they agree.
    `terms`: the sums its elements may add in another order (`Reordering`: float atomics, reductions) and
    the float type the reference computes them in, where known;
    `atomic`: the reference writes it with atomics, whose NaN handling the hardware defines (a float
    atomic_max/min ignores a NaN operand), so a candidate that propagates a NaN there is not wrong: it
    gets a `nan-handling` problem, which the validator reports as a note."""
    terms = terms or Reordering()
    where = {"buffer": name, "dispatch": dispatch}
    label = _label(name, dispatch)
    if tuple(ref.shape) != tuple(cand.shape):
        return [
            Problem(kind="shape", message=f"{label}: shape {tuple(cand.shape)}, reference {tuple(ref.shape)}", **where)
        ]
    if ref.dtype != cand.dtype:
        return [
            Problem(kind="dtype", message=f"{label}: dtype {dtype_name(cand)}, reference {dtype_name(ref)}", **where)
        ]
    if identical(ref, cand):  # nothing below can object to the reference's own bits (its NaNs included)
        return []
    # (float8 has no host comparisons in torch: its buffers are judged in float64 at once)
    if ref.dtype.is_floating_point and ref.element_size() > 1 and agrees(ref, cand, tol, terms):
        return []
    return judged(ref, cand, label, where, tol, terms, poisoned, atomic)


class Reordering(NamedTuple):
    """How many terms an element may sum in an order the kernel's tiling or scheduling decides, and in which
    float type the reference computes it where that is known to be narrower than the output's or exactly it."""

    atomic: int | None = None  # float atomic adds, in the output's dtype, in any order
    reduced: int | None = None  # a reduction's, accumulated in float32 (or float64) in the tiling's order
    # "float32": a float64 output the reference computes in float32 is judged at float32's tolerance;
    # "float64": one it computes in float64 must hold float64's precision (errors the size of float32's
    # rounding are a `precision` problem, though float64's rtol of 1e-7 would pass one such rounding)
    computed_in: str | None = None


def judged(
    ref, cand, label: str, where: dict, tol: Tolerances, terms: Reordering, poisoned: bool, atomic: bool = False
):
    """Every check, on every element in float64: the problems with their counts and examples."""
    if not ref.dtype.is_floating_point:
        r, c = ref.reshape(-1).long().numpy(), cand.reshape(-1).long().numpy()
        problems = _unwritten(r == INT_POISON, c == INT_POISON, label, where) if poisoned else []
        return problems or _exact(r, c, ref.shape, label, where, tol.examples)
    r, c = ref.reshape(-1).double().numpy(), cand.reshape(-1).double().numpy()
    r_nan, c_nan = np.isnan(r), np.isnan(c)
    if poisoned:  # both start as NaN: a NaN the reference overwrote and the candidate did not
        problems = _unwritten(r_nan, c_nan, label, where)
        if problems:
            return problems
    problems = []
    dropped, added = np.flatnonzero(r_nan & ~c_nan), np.flatnonzero(c_nan & ~r_nan)
    if dropped.size:  # never acceptable: the candidate turns a NaN the reference produces into a number
        problems.append(
            Problem(
                kind="nan",
                elements=int(dropped.size),
                examples=_examples(dropped, r, c, ref.shape, tol),
                message=f"{label}: a number at {dropped.size} elements where the reference has NaN "
                "(NaN propagation dropped)",
                **where,
            )
        )
    if added.size:
        problems.append(
            Problem(
                kind="nan-handling" if atomic and not poisoned else "nan",
                elements=int(added.size),
                examples=_examples(added, r, c, ref.shape, tol),
                message=f"{label}: NaN at {added.size} elements where the reference has "
                + (
                    "a number from its float atomics, which ignore NaN operands: the candidate propagates "
                    "NaN instead (changes NaN handling)"
                    if atomic and not poisoned
                    else "none"
                    if not r_nan.any()
                    else "a number"
                ),
                **where,
            )
        )
    r_inf, c_inf = np.isinf(r), np.isinf(c)
    bad_inf = np.flatnonzero((r_inf | c_inf) & ~(r_nan | c_nan) & (r != c))
    if bad_inf.size:
        problems.append(
            Problem(
                kind="inf",
                elements=int(bad_inf.size),
                examples=_examples(bad_inf, r, c, ref.shape, tol),
                message=f"{label}: Inf does not match the reference at {bad_inf.size} elements",
                **where,
            )
        )
    return problems + _values(ref, r, c, label, where, tol, terms)


def _values(ref, r, c, label: str, where: dict, tol: Tolerances, terms: Reordering) -> list[Problem]:
    """The finite elements (`r`, `c`: flat float64) within the tolerance, the precision the reference computes
    in kept, and not all zeros where the reference has signal."""
    dtype = dtype_name(ref)
    finite = np.isfinite(r) & np.isfinite(c)
    rtol, atol, reach = _tolerance(tol, dtype, terms)
    allowed = np.maximum(atol, reach * local_scale(ref).double().numpy()) if reach else np.float64(atol)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite pairs were judged above
        err = np.abs(c - r)
        bad = np.flatnonzero(finite & (err > allowed + rtol * np.abs(r)))
    if bad.size:
        bounds = (rtol, float(np.max(np.broadcast_to(allowed, r.shape)[bad])))  # (the largest a failing one had)
        return [_mismatch(bad, r, c, label, where, bounds, dtype, _examples(bad, r, c, ref.shape, tol))]
    if _narrowed(r, c, dtype, terms):
        return [
            Problem(
                kind="precision",
                message=f"{label}: the candidate's errors have the size of float32 rounding, where the reference "
                "computes this float64 output in float64: was float64 math done in float32?",
                **where,
            )
        ]
    if finite.any() and np.any(r[finite] != 0) and not np.any(c[finite] != 0):
        return [
            Problem(
                kind="all-zero",
                message=f"{label}: the candidate's output is all zeros where the "
                f"reference's is not (largest reference value {np.abs(r[finite]).max():.3g})",
                **where,
            )
        ]
    return []


def _tolerance(tol: Tolerances, dtype: str, terms: Reordering) -> tuple[float, float, float]:
    """(rtol, atol, reach) for this buffer: an element may differ by rtol x its value plus the larger of atol
    and reach x its scale (`local_scale`; reach is 0 where nothing reorders). A sum in another order rounds
    differently: allow the random-walk rounding error of its terms, four standard deviations of it (one
    sequential sum of 1M same-sign float32 terms was off by 1.2), relative to the element's scale rather
    than its value, since a sum that cancels has small elements with the rounding of large partial sums
    (mixed-sign column sums: 284 of 32,768 elements past rtol). A float64 output the reference computes
    in float32 (`Reordering.computed_in`) takes float32's tolerance."""
    dtype = "float32" if dtype == "float64" and terms.computed_in == "float32" else dtype
    rtol, atol = tol.for_dtype(dtype)
    reach = 0.0
    for count, eps in (
        (terms.atomic, EPSILON.get(dtype, 0.0)),
        # a reduction of float16/bfloat16 values sums in float32 (tl.sum and tl.dot accumulate there)
        (terms.reduced, EPSILON["float64" if dtype == "float64" else "float32"] if dtype in EPSILON else 0.0),
    ):
        if count and count > 1:
            reach = max(reach, RANDOM_WALK_SIGMAS * eps * math.sqrt(count))
        if count and eps and count * eps > STAGNANT:
            # Past 2/eps terms a running float sum no longer absorbs terms of the average size (each rounds
            # to its ulp): the sum can be off by its own order (2^24 x 0.5 in float32 stops near 2^24), so
            # the order in which such an element was summed is all its value says.
            reach = 1.0
    if terms.reduced and terms.reduced > 1 and dtype in ("float16", "bfloat16"):
        reach = max(reach, ROUNDING_UNITS * EPSILON[dtype])
    return rtol, atol, reach


def local_scale(ref):
    """Per element of `ref` (flat, in its dtype): the scale its reordered sums round at, the largest finite
    magnitude of the reference along each of its lines (rows, columns: every dimension of at least LINE
    elements), the smallest of those; the whole buffer's largest where no dimension is that long. A row or
    column on a scale of its own (a weight channel 1000 times smaller than the rest) is judged at its scale:
    zeroed or garbled, it fails, where the buffer's largest value would have let it through."""
    import torch

    magnitude = (ref.double() if ref.element_size() == 1 else ref).detach().abs()  # (a max is exact in any dtype)
    magnitude = torch.where(torch.isfinite(magnitude), magnitude, torch.zeros_like(magnitude))
    if not magnitude.numel():
        return magnitude.reshape(-1)
    lines = [torch.amax(magnitude, dim=d, keepdim=True) for d in range(magnitude.dim()) if magnitude.shape[d] >= LINE]
    if not lines:
        return magnitude.max().expand(magnitude.numel())
    scale = lines[0]
    for line in lines[1:]:
        scale = torch.minimum(scale, line)
    return scale.expand(magnitude.shape).reshape(-1)


def agrees(ref, cand, tol: Tolerances, terms: Reordering) -> bool | None:
    """Whether `judged` would find nothing, decided cheaply: an element whose bits match the reference's
    passes every check, so only the others are converted and judged (a copy or a re-tiled kernel differs
    in none or a few; `judged` converts all of a 16M-element buffer to float64, 0.4-1.4 s on this 2-core
    machine). None where many differ (a reordered sum): the screen would save nothing."""
    import torch

    r, c = ref.reshape(-1).contiguous(), cand.reshape(-1).contiguous()
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[r.element_size()]
    differ = torch.nonzero(r.view(ints) != c.view(ints)).squeeze(1)
    if differ.numel() > r.numel() // 8:
        return None
    rd, cd = r[differ].double(), c[differ].double()
    if not torch.equal(torch.isnan(rd), torch.isnan(cd)):
        return False  # a NaN where the other side has a number (an unwritten poisoned element too)
    # Where the bits match the candidate is the reference; a differing pair with an infinity fails the
    # tolerance below, so the reference's finite elements are where both sides are finite.
    finite = r.abs() < math.inf
    nonzero = (r != 0) & finite
    if bool(nonzero.any()):
        nonzero[differ] = False
        if not bool(nonzero.any()) and not bool((cd[~torch.isnan(cd)] != 0).any()):
            return False  # all zeros where the reference is not
    dtype = dtype_name(ref)
    if dtype == "float64" and terms.computed_in == "float64":
        return None  # (the precision check looks at every element)
    rtol, atol, reach = _tolerance(tol, dtype, terms)
    allowed = torch.clamp(reach * local_scale(ref)[differ].double(), min=atol) if reach else atol
    numbers = ~torch.isnan(rd)
    return not bool(((cd - rd).abs() > allowed + rtol * rd.abs())[numbers].any())


def identical(ref, cand) -> bool:
    """Bit for bit, shape and dtype too: a memory comparison, where the element-wise checks convert to
    float64 first (seconds for the large buffers of a replay)."""
    import torch

    if tuple(ref.shape) != tuple(cand.shape) or ref.dtype != cand.dtype:
        return False
    # (a one-element view keeps its stride through reshape and contiguous: a clone lays it out afresh)
    flat = [t.reshape(-1) for t in (ref, cand)]
    as_bytes = [
        (t if t.stride(-1) == 1 else t.clone(memory_format=torch.contiguous_format)).view(torch.uint8) for t in flat
    ]
    return torch.equal(*as_bytes)


def _label(name: str, dispatch: int | None) -> str:
    return f"dispatch {dispatch}, buffer {name!r}" if dispatch is not None else f"buffer {name!r}"


def _unwritten(r_poison, c_poison, label, where) -> list[Problem]:
    missed = np.flatnonzero(c_poison & ~r_poison)
    if not missed.size:
        return []
    return [
        Problem(
            kind="unwritten",
            elements=int(missed.size),
            message=f"{label}: {missed.size} of {int((~r_poison).sum())} elements the reference writes were "
            f"never written by the candidate (they still hold the poison value); first at flat index "
            f"{int(missed[0])}",
            **where,
        )
    ]


def _exact(r, c, shape, label, where, examples: int) -> list[Problem]:
    bad = np.flatnonzero(r != c)
    if not bad.size:
        if np.any(r != 0) and not np.any(c != 0):
            return [Problem(kind="all-zero", message=f"{label}: all zeros where the reference is not", **where)]
        return []
    shown = [
        Difference(index=list(np.unravel_index(i, shape)), reference=float(r[i]), candidate=float(c[i]))
        for i in bad[:examples]
    ]
    kind = "all-zero" if not np.any(c != 0) else "mismatch"
    zeros = "; the candidate wrote all zeros" if kind == "all-zero" else ""
    return [
        Problem(
            kind=kind,
            elements=int(bad.size),
            max_abs_error=float(np.abs(c[bad] - r[bad]).max()),
            examples=shown,
            message=f"{label}: {bad.size} of {r.size} elements differ (integers must match exactly){zeros}",
            **where,
        )
    ]


def _examples(bad, r, c, shape, tol: Tolerances) -> list[Difference]:
    return [
        Difference(index=[int(x) for x in np.unravel_index(i, shape)], reference=float(r[i]), candidate=float(c[i]))
        for i in bad[: tol.examples]
    ]


def _mismatch(bad, r, c, label, where, bounds: tuple[float, float], dtype, examples: list[Difference]) -> Problem:
    """The elements past the `bounds` (rtol, atol), as one problem: all zeros, a lower precision's rounding, or
    a mismatch."""
    rtol, atol = bounds
    abs_err = np.abs(c[bad] - r[bad])
    rel_err = abs_err / np.maximum(np.abs(r[bad]), 1e-30)
    kind, why = "mismatch", ""
    if not np.any(c != 0):
        kind, why = "all-zero", "; the candidate wrote all zeros"
    else:
        lower = precision_like(r, c, dtype)
        if lower:
            kind = "precision"
            why = f"; the errors have the size of {lower} rounding: was {dtype} math done in {lower}?"
    return Problem(
        kind=kind,
        elements=int(bad.size),
        max_abs_error=float(abs_err.max()),
        max_rel_error=float(rel_err.max()),
        examples=examples,
        message=f"{label}: {bad.size} of {r.size} elements differ beyond rtol={rtol:g}, atol={atol:.3g} "
        f"(max abs error {abs_err.max():.3g}, max rel error {rel_err.max():.3g}){why}",
        **where,
    )


def _narrowed(r, c, dtype: str, terms: Reordering) -> bool:
    """A float64 output the reference computes in float64 whose errors look like float32 rounding."""
    return dtype == "float64" and terms.computed_in == "float64" and precision_like(r, c, dtype) == "float32"


def precision_like(r, c, dtype: str) -> str | None:
    """The lower precision whose rounding these errors look like, if any: the candidate's values
    are (nearly all) exactly representable in it while the reference's are not, or the relative
    errors scatter around that format's epsilon as rounding errors do (not one constant factor)."""
    if dtype not in ("float32", "float64"):
        return None
    ok = np.isfinite(r) & np.isfinite(c) & (r != 0)
    if ok.sum() < 8:
        return None
    r, c = r[ok], c[ok]
    rel = np.abs(c - r) / np.abs(r)
    median = float(np.median(rel))
    for name, eps in LOWER_PRECISION if dtype == "float64" else LOWER_PRECISION[:2]:
        if _representable(c, name).mean() > 0.9 and _representable(r, name).mean() < 0.5:
            return name
        if eps / 64 <= median <= eps and float(np.std(rel)) > 0.3 * float(np.mean(rel)):
            return name
    return None


def _representable(values, fmt: str):
    import torch

    t = torch.from_numpy(values.astype(np.float64))  # (float64 values, for float32 too)
    return (t.to(getattr(torch, fmt)).double() == t).numpy()
