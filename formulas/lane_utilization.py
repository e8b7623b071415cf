"""laneUtilization: blocks much wider than the data, so most lanes of each instruction are masked off.

Triton's lanes are the elements of a block: `tl.arange(0, BLOCK)` with `mask=offs < n` keeps
`n` of them. When BLOCK is rounded far above the data (`next_power_of_2` of twice what a row
holds, one program per head of 64 elements in a 128-wide block) the masked-off lanes still take
registers, issue slots and warps: the kernel runs a program twice the size of its work, and
the grid holds fewer rows than the GPU could run at once. This is IntelliPerf's branch
divergence as Triton has it (no divergent branches, masked lanes instead). The fix sizes the
block from the real extent and packs several rows or heads into one program ([ROWS, BLOCK]).

A block smaller than the program's threads (num_warps x 32) wastes lanes too: every thread holds
at least one element, so the extra threads repeat the others' work.

Evidence: the interpreter trace counts, per load/store line, the lanes its calls issued and the
ones their masks kept; with Nsight Compute the finding adds the share of thread instructions
executed with their predicate on.
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import AccessSite, Evidence, Finding, KernelProfile, Metric
from intelliperf.pinpoint import source_line

from .base import Formula

THREADS = "smsp__thread_inst_executed.sum"
THREADS_ON = "smsp__thread_inst_executed_pred_on.sum"
WARP_INSTRUCTIONS = "smsp__inst_executed.sum"


class LaneUtilization(Formula["LaneUtilization.Options"]):
    name = "laneUtilization"
    recipes = "laneUtilization"  # (rewriters/recipes.py)
    summary = "blocks are much wider than the data, so most lanes of the kernel's memory operations are masked off"
    evidence = ("interpreter-trace",)
    counters = {"ncu": (THREADS, THREADS_ON, WARP_INSTRUCTIONS, "launch__grid_size", "gpu__time_duration.sum")}
    metric = "lane_utilization"
    problem = (
        "The kernel's blocks are far wider than the data they cover, so most lanes of its loads, stores and "
        "arithmetic are masked off and still cost registers, issue slots and warps."
    )
    techniques = (
        "size BLOCK from the real extent (next_power_of_2 of what a row or head holds, not of twice that)",
        "pack several rows or heads into one program with a 2-D block [ROWS, BLOCK] and shrink the grid",
        "when only half of a block is used (rotating halves, real/imaginary parts), load the halves as two "
        "half-width blocks",
    )

    class Options(Formula.Options):
        min_utilization: float = Field(
            0.6, gt=0, le=1, description="flag when the kernel's memory lanes are active less than this share"
        )
        min_share: float = Field(0.05, ge=0, le=1, description="ignore lines with less of the kernel's issued lanes")
        min_flagged_share: float = Field(
            0.25, ge=0, le=1, description="also flag when lines below min_utilization issue this share of the lanes"
        )

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        traced = [ev for ev in evidence if ev.sites or ev.programs_sampled]
        if not traced:
            return self.no_evidence(kernel)
        threads = 32 * (self.num_warps(kernel) or 4)
        # A scalar access (one lane per call: an index, a flag) has no lanes to waste.
        sites = [
            s for ev in traced for s in ev.sites if not s.is_atomic and s.lanes_issued and s.lanes_issued > s.calls
        ]
        common: dict = dict(evidence_backend=self.backends(evidence), modelled=traced[0].modelled)
        if not sites:
            return self.finding(False, f"{kernel.name} issues no traced block-wide load or store.", **common)
        lanes = {id(s): _lanes(s, threads) for s in sites}
        issued = sum(lanes.values())
        used = sum(s.lanes for s in sites) / issued
        common["metric"] = Metric(
            name=self.metric, value=round(used, 4), unit="of issued lanes active", better="higher"
        )
        measured = _measured(self.counter_evidence(evidence))
        flagged = sorted(
            (
                s
                for s in sites
                if s.lanes / lanes[id(s)] < self.options.min_utilization
                and lanes[id(s)] / issued >= self.options.min_share
            ),
            key=lambda s: -lanes[id(s)],
        )
        wasted_share = sum(lanes[id(s)] for s in flagged) / issued
        if used >= self.options.min_utilization and wasted_share < self.options.min_flagged_share:
            return self.finding(
                False,
                f"{used:.0%} of the lanes {kernel.name}'s loads and stores issue are active (flagged below "
                f"{self.options.min_utilization:.0%}).{measured}",
                **common,
            )
        small = [s for s in flagged if (s.lanes_issued or 0) / max(s.calls, 1) < threads]
        cause = (
            f" {len(small)} of them hold fewer elements than the program's {threads} threads, which then repeat "
            "each other's work."
            if small
            else ""
        )
        only_threads = small == flagged and all(s.lanes >= 0.95 * (s.lanes_issued or 0) for s in small)
        fix = (
            "Give each program fewer warps (32 x num_warps no more than its block) or a larger block."
            if only_threads  # the masks keep every element: the idle lanes are threads without one
            else "Size the block from the real extent and pack several rows or heads into each program."
        )
        return self.finding(
            True,
            f"{kernel.name}'s {'threads outnumber its blocks' if only_threads else 'blocks are mostly masked off'}: "
            f"{used:.0%} of the lanes its loads and stores issue are "
            f"active; {len(flagged)} line(s) below {self.options.min_utilization:.0%} carry {wasted_share:.0%} of "
            f"them.{cause} {fix}" + measured,
            severity="high" if used < 0.3 else "medium",
            lines=[source_line(s.file, s.line, _detail(s, threads)) for s in flagged],
            **common,
        )


def _lanes(s: AccessSite, threads: int) -> float:
    """The lanes a site's calls occupy: each call's block, or the program's threads when the block is
    smaller (every thread holds at least one element; the extra ones duplicate the work)."""
    return max(s.lanes_issued or 0, threads * s.calls)


def _detail(s: AccessSite, threads: int) -> str:
    per_call = (s.lanes_issued or 0) / max(s.calls, 1)
    text = (
        f"{s.op} of `{s.buffer or '?'}`: {s.lanes / max(s.calls, 1):.0f} of {per_call:.0f} lanes per call active "
        f"({s.lanes / _lanes(s, threads):.0%} of the lanes it occupies)"
    )
    return text + (f"; the block is smaller than the program's {threads} threads" if per_call < threads else "")


def _measured(counted: Evidence | None) -> str:
    if counted is None:
        return ""
    m = counted.metrics
    if not m.get(THREADS):
        return ""
    on = m.get(THREADS_ON, 0.0) / m[THREADS]
    per_warp = m[THREADS] / m[WARP_INSTRUCTIONS] if m.get(WARP_INSTRUCTIONS) else None
    warp = f", {per_warp:.1f} of 32 threads active per warp instruction" if per_warp is not None else ""
    return f" Measured by {counted.backend}: {on:.0%} of thread instructions executed with their predicate on{warp}."
