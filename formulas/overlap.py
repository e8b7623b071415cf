"""overlap: a main loop whose memory and compute take turns instead of overlapping.

A GEMM or attention loop is fast when the loads of later iterations are in flight while the
tensor cores work on the current one (software pipelining: `num_stages`, asynchronous copies,
TMA). With `num_stages=1` every iteration waits for its own loads.

Evidence, best first: region timers (Proton, inserted by intelliperf around the loop's load,
dot and math statements; GPU only) give the share of the loop's time warps spend in memory
statements, i.e. waiting for loads: on the H100 the num_stages=1 GEMM example spent 46 % of
its loop there, the pipelined one 12 %. The static view (any machine, NVIDIA targets) says
whether the loop's loads compiled to synchronous `ld.global` or to asynchronous copies
(`cp.async`, TMA): the share of synchronous ones is the modelled metric.
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import Evidence, Finding, KernelProfile, Metric
from intelliperf.pinpoint import source_line
from intelliperf.profiling.regions import Instrumented, layout_of, untimed

from .base import Formula, same_file

ASYNC = ("async_copy", "tma")


class Overlap(Formula["Overlap.Options"]):
    name = "overlap"
    sweep_first = True  # its metric moves with pipelining depth and warps
    summary = "a loop whose memory and compute take turns (not software-pipelined)"
    evidence = ("static",)
    regions = True  # region timers on a GPU
    metric = "exposed_memory_share"
    problem = (
        "The kernel's main loop loads its tiles and only then computes on them, so the tensor cores wait for "
        "memory in every iteration: memory and compute do not overlap."
    )
    techniques = (
        "software-pipeline the loop: launch with num_stages=3 (or 2-4), or tl.range(..., num_stages=3) on the loop, "
        "so loads of later iterations become asynchronous copies issued ahead",
        "keep the loads as separate statements before the dot, with masks the pipeliner accepts",
        "on Hopper, TMA descriptors (tl.make_tensor_descriptor) for the tiles; warp specialisation "
        "(tl.range(..., warp_specialize=True)) where the Triton version supports it",
        "change BLOCK_K or the tile shape so more bytes are in flight per iteration",
    )

    class Options(Formula.Options):
        min_exposed: float = Field(
            0.1,
            ge=0,
            le=1,
            description="flag when warps spend this share of the loop in memory statements (region timers)",
        )

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        layout = layout_of(kernel.file, kernel.name, kernel.line)
        why = untimed(layout, kernel.name)
        if why:
            return self.finding(False, why + ".", evidence_backend="static")
        assert layout is not None and layout.loop_line is not None  # untimed() said why otherwise
        timed = next((ev for ev in evidence if ev.regions is not None and ev.regions.loop_cycles_per_warp), None)
        sync, total, where = _load_instructions(kernel, evidence, layout)
        if timed is not None:
            return self._from_timers(kernel, timed, evidence, layout, sync, total)
        if not total:
            return self.no_evidence(kernel)
        share = sync / total
        metric = Metric(
            name="synchronous_load_share",
            value=round(share, 4),
            unit="of the loop's global-load instructions are synchronous (static view, cuda:90)",
            better="lower",
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=True, metric=metric)
        if share == 0:
            return self.finding(
                False,
                f"{kernel.name}: the loop at line {layout.loop_line} loads through "
                f"asynchronous copies ({total} instructions): it is pipelined.",
                **common,
            )
        loop = _line(kernel, layout.loop_line, "the main loop (not pipelined)")
        return self.finding(
            True,
            f"{kernel.name}: the loop at line {layout.loop_line} loads with {sync} synchronous "
            "ld.global instruction(s) and no asynchronous copy: it is not software-pipelined, "
            "so each iteration waits for its loads. Region timers on a GPU measure how long.",
            severity="low",
            lines=[loop, *where],
            **common,
        )

    def _from_timers(self, kernel, timed: Evidence, evidence, layout: Instrumented, sync: int, total: int) -> Finding:
        r = timed.regions
        assert r is not None and layout.loop_line is not None  # chosen for its regions, in a loop
        exposed = r.exposed_memory_share or 0.0
        metric = Metric(
            name=self.metric,
            value=round(exposed, 4),
            unit="of the main loop's time in memory statements (region timers)",
            better="lower",
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=False, metric=metric)
        shares = (
            f"{exposed:.0%} in memory statements, {r.compute_share or 0:.0%} in compute, "
            f"{r.unattributed_share or 0:.0%} between statements"
        )
        if r.iteration_cycles:
            loop_time = f"{r.iteration_cycles:,.0f} cycles per iteration"
            figures = (
                f"per warp the loop takes {loop_time}; {shares}; overlap of memory and compute regions "
                f"across warps {r.overlap or 0:.0%}"
            )
        elif r.loop_cycles_per_warp:  # Proton's per-scope totals: no counts, no intervals
            loop_time = f"{r.loop_cycles_per_warp:,.0f} cycles per warp"
            figures = f"per warp the loop takes {loop_time} (Proton's per-scope totals); {shares}"
        else:
            loop_time, figures = "", "the loop was not timed"
        if r.problems:
            figures += ". Caution: " + "; ".join(r.problems)
        pipelined = total and sync == 0
        if exposed < self.options.min_exposed or pipelined:
            why = (
                "its loads are asynchronous copies (pipelined)"
                if pipelined
                else (f"below the {self.options.min_exposed:.0%} threshold")
            )
            return self.finding(False, f"{kernel.name}: {figures}; {why}.", **common)
        lines = [_line(kernel, layout.loop_line, f"the main loop: {loop_time} (measured)")]
        for stat in sorted(r.regions, key=lambda s: -(s.share_of_loop or 0)):
            if stat.share_of_loop and stat.first_line and stat.side in ("memory", "compute"):
                each = (
                    f"{stat.cycles_per_execution:,.0f} cycles per iteration"
                    if stat.cycles_per_execution is not None
                    else f"{stat.cycles_per_warp:,.0f} cycles per warp"
                )
                said = f"{stat.name}: {stat.share_of_loop:.0%} of the loop, {each} ({stat.side}, measured)"
                lines.append(_line(kernel, stat.first_line, said))
        severity = "high" if exposed >= 0.3 else "medium"
        return self.finding(
            True,
            f"{kernel.name}: {figures}. Memory and compute take turns: pipeline the loop "
            "(num_stages) so loads of later iterations are in flight during the dots.",
            severity=severity,
            lines=lines,
            **common,
        )


def _load_instructions(kernel: KernelProfile, evidence: list[Evidence], layout: Instrumented):
    """(synchronous global loads, all global loads) the static view saw at the loop's load lines
    for cuda:90 (or, where that view has none there, another target's), and those lines with
    what was compiled there."""
    load_lines = {
        ln for r in layout.regions if r.in_loop and r.kind == "load" for ln in range(r.first_line, r.last_line + 1)
    }
    if layout.via is not None:  # the helper is inlined: its instructions sit at a line of the call (Triton
        load_lines |= set(range(layout.via[1], (layout.via_end or layout.via[1]) + 1))  # 3.9: first, 3.6: last)
    facts = [
        f
        for ev in evidence
        for f in ev.facts
        if f.line in load_lines and same_file(f.file, kernel.file or "") and f.kind in ("load", *ASYNC)
    ]
    # a target whose view has no load at these lines (the kernel compiled for it differently): another target's
    chosen = [f for f in facts if f.target.startswith("cuda")] or facts
    sync = sum(f.count for f in chosen if f.kind == "load")
    total = sum(f.count for f in chosen)
    where = [(f.line, f"{f.count}x {f.instruction} ({f.target})") for f in chosen]
    lines: dict[int, list[str]] = {}
    for line, text in where:
        lines.setdefault(line, []).append(text)
    return sync, total, [_line(kernel, ln, "compiled: " + ", ".join(t)) for ln, t in sorted(lines.items())]


def _line(kernel: KernelProfile, line: int, detail: str):
    assert kernel.file is not None  # region timers instrument a kernel's file: it has one
    return source_line(kernel.file, line, detail)
