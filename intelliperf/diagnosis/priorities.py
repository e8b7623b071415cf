"""`--formula auto`: which diagnosed bottleneck `optimize` fixes first, and which kernels are launch-bound.

Every registered formula is asked of the top kernels (as `diagnose` does by default); each bottleneck found
weighs its kernel's share of the recorded kernel time times its severity (low 1, medium 2, high 3), and the
heaviest is fixed. The rest are named in the report, for a run of their own (`-f NAME`).

A kernel whose launch does less work than launching it costs (LAUNCH_US) is launch-bound: its idle lanes or
its locality cost a share of almost nothing, so `auto` leaves those findings there (atomics that serialise
and spilled registers still can cost more than the bytes say). On a GPU the work is the measured device time
per launch; under the interpreter it is estimated from the bytes of the launch's tensors at a GPU's copy rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..models import Evidence, Finding, KernelDiagnosis, KernelProfile, Report

AUTO = "auto"
ASK_ALL = "diagnoseOnly"  # the formula that asks every registered one
SEVERITY_WEIGHT = {"none": 0, "low": 1, "medium": 2, "high": 3}


LAUNCH_US = 4.0  # what launching a Triton kernel costs the device and the host, about (H100)
COPY_BYTES_PER_US = 2.95e6  # a large device-to-device copy on an H100 (docs/benchmarks.md)
SERIAL_NS = 1.0  # an atomic update of an address another update holds waits its turn: about a clock
WORK_SCALED = frozenset({"laneUtilization", "memoryLocality"})  # gains in proportion to the launch's work
DTYPE_BYTES = {"float64": 8, "int64": 8, "uint64": 8, "float32": 4, "int32": 4, "uint32": 4, "bool": 1}


def launch_bound(kernel: KernelProfile, interpreted: bool, evidence: Sequence[Evidence] = ()) -> str | None:
    """A sentence where `kernel`'s launches do less work than LAUNCH_US, else None. Without a GPU, atomic
    updates of one address (the trace's `updates_per_address`) count too: they take turns, about a
    nanosecond each (SERIAL_NS), however few bytes they move."""
    if interpreted:
        if not kernel.signatures:
            return None
        sig = kernel.signatures[0]
        tensors = {
            (a.name, tuple(a.shape or ()), a.dtype): math.prod(a.shape or ()) * _bytes(a.dtype)
            for a in sig.args
            if a.kind == "tensor"
        }
        serial = max((site.updates_per_address or 0 for ev in evidence for site in ev.sites), default=0)
        work = sum(tensors.values()) / COPY_BYTES_PER_US + serial * SERIAL_NS / 1e3
        how = f"its tensors hold {sum(tensors.values()):,} bytes, about {work:.2g} us of memory traffic on an H100"
        if serial:
            how += f" with {serial:,.0f} atomic updates of one address taking turns"
    else:
        work = kernel.mean_time_s * 1e6
        how = f"it runs {work:.2g} us per launch"
    if work >= LAUNCH_US:
        return None
    return (
        f"launch-bound: {how}, less than launching it costs (about {LAUNCH_US:g} us); idle lanes and locality "
        "are not worth fixing here (fewer, larger launches or fusing it with its neighbours are)"
    )


def _bytes(dtype: str | None) -> int:
    name = (dtype or "float32").removeprefix("torch.")
    return DTYPE_BYTES.get(name, 2 if "16" in name else 1 if "8" in name else 4)


def ranked_bottlenecks(report: Report) -> list[tuple[float, str, Finding]]:
    """(weight, kernel, finding) of every bottleneck present in the report's diagnoses, heaviest first (the
    kernel's rank, then the formula's name, break ties); not idle lanes or locality of a launch-bound kernel."""
    share = {k.name: k.share for k in report.kernels}
    found = [
        (share.get(d.kernel, 0.0) * SEVERITY_WEIGHT[f.severity], d.rank, d.kernel, f)
        for d in report.diagnoses
        for f in d.findings
        if f.present and f.formula != ASK_ALL and not _left_launch_bound(d, f)
    ]
    found.sort(key=lambda item: (-item[0], item[1], item[3].formula))
    return [(weight, kernel, finding) for weight, _, kernel, finding in found]


def left_launch_bound(report: Report) -> list[str]:
    """The bottlenecks `ranked_bottlenecks` leaves because their kernel is launch-bound, `FORMULA in KERNEL`."""
    found = [(d, f) for d in report.diagnoses for f in d.findings if f.present and _left_launch_bound(d, f)]
    return sorted(f"{f.formula} in {d.kernel}" for d, f in found)


def _left_launch_bound(d: KernelDiagnosis, f: Finding) -> bool:
    return bool(d.launch_bound) and f.formula in WORK_SCALED


def chosen_note(ranked: list[tuple[float, str, Finding]]) -> str:
    """What `auto` chose and what it left, for the report."""
    weight, kernel, finding = ranked[0]
    text = (
        f"--formula auto: fixing {finding.formula} in {kernel} ({finding.severity}, weight {weight:.2f}: the "
        "kernel's share of the time x its severity)"
    )
    rest = [f"{f.formula} in {k} ({f.severity}, {w:.2f})" for w, k, f in ranked[1:6]]
    if rest:
        text += "; also found, for a run with -f NAME: " + ", ".join(rest)
    return text
