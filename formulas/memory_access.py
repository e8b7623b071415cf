"""memoryAccess: global loads and stores that use little of each 32-byte sector they move.

A warp's request is served in 32-byte sectors. When consecutive lanes read consecutive
elements, one sector serves 8 float32 lanes; when they are a row apart, every lane pulls its
own sector and uses 4 of its 32 bytes (12.5 %). The fix makes the lane index that varies
fastest walk contiguous memory: swap which index the program's lanes cover, or load a tile
along rows and transpose it in registers (`tl.trans`) before storing it along rows.

Evidence, best first: Nsight Compute (bytes used per sector moved, per kernel from
`smsp__sass_average_data_bytes_per_sector_mem_global_op_{ld,st}.pct`, per line from the
source page's ideal over theoretical L2 sectors); rocprofv3 on AMD (TA wavefronts over TCP
accesses, untested on hardware); the interpreter trace (a model: sectors per group of 32
consecutive lanes in block order). The trace's lane stride and the static view's instruction
widths are added to each flagged line whichever backend judged.
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import AccessSite, Evidence, Finding, KernelProfile, LineCounters, Metric
from intelliperf.pinpoint import source_line

from .base import Formula


class MemoryAccess(Formula["MemoryAccess.Options"]):
    name = "memoryAccess"
    recipes = "memoryAccess"  # (rewriters/recipes.py)
    summary = "global loads/stores use a small part of each 32-byte sector (uncoalesced access)"
    evidence = ("interpreter-trace", "static")
    counters = {
        "ncu": (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "gpu__time_duration.sum",
        ),
        "rocprofv3": (
            "TA_TOTAL_WAVEFRONTS_sum",
            "TCP_TOTAL_ACCESSES_sum",
            "TCP_TCC_READ_REQ_sum",
            "TCP_TCC_WRITE_REQ_sum",
        ),
    }
    metric = "sector_efficiency"
    sees_warps_offline = False  # (addresses per program and per launch: no warps in them)
    problem = (
        "Consecutive lanes of the kernel's loads or stores touch addresses far apart, so each 32-byte "
        "sector the memory system moves serves one lane and most of its bytes are wasted."
    )
    techniques = (
        "map the fastest-varying lane index (the last axis of the block) to the contiguous memory dimension",
        "for a transpose: load a 2-D tile along input rows, tl.trans it, and store it along output rows",
        "swap the roles of the program id and tl.arange so each program covers a contiguous stretch",
        "make block sizes multiples of 32 bytes / element size along the contiguous axis so loads vectorize",
    )

    class Options(Formula.Options):
        min_efficiency: float = Field(0.5, gt=0, le=1, description="flag lines that use less of each sector")
        min_share: float = Field(0.05, ge=0, le=1, description="ignore lines with less of the kernel's traffic")

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        counted = self.counter_evidence(evidence)
        efficiency = _measured_efficiency(counted) if counted is not None else None
        if counted is not None and efficiency is not None:
            return self._from_counters(kernel, counted, efficiency, evidence)
        traced = [ev for ev in evidence if ev.sites or ev.programs_sampled]
        if not traced:
            return self.no_evidence(kernel)
        # A one-lane access (a scalar load of an index or a flag) has nothing to coalesce.
        sites = [(ev, s) for ev in traced for s in ev.sites if not s.is_atomic and s.sectors and s.lanes > s.calls]
        common = dict(evidence_backend=self.backends(evidence), modelled=traced[0].modelled)
        if not sites:
            return self.finding(False, f"{kernel.name} makes no traced global load or store.", **common)
        total_bytes = sum(s.sectors for _, s in sites) * 32
        efficiency = sum(s.bytes_requested for _, s in sites) / total_bytes
        metric = Metric(
            name=self.metric, value=round(efficiency, 4), unit="of each 32-byte sector used", better="higher"
        )
        flagged = [
            (ev, s)
            for ev, s in sites
            if s.sector_efficiency < self.options.min_efficiency
            and s.sectors * 32 / total_bytes >= self.options.min_share
        ]
        if not flagged:
            return self.finding(
                False,
                f"{kernel.name}'s loads and stores use {efficiency:.0%} of each sector they "
                f"move (threshold {self.options.min_efficiency:.0%} per line).",
                metric=metric,
                **common,
            )
        worst = min(s.sector_efficiency for _, s in flagged)
        severity = "high" if worst < 0.25 else "medium"
        lines = [
            source_line(s.file, s.line, _detail(s, total_bytes) + self.compiled_at(evidence, s.file, s.line, (s.op,)))
            for _, s in flagged
        ]
        return self.finding(
            True,
            f"{len(flagged)} load/store line(s) of {kernel.name} are uncoalesced: at worst {worst:.1%} of each 32-byte "
            f"sector is used; overall {efficiency:.0%}. Make consecutive lanes touch consecutive elements.",
            severity=severity,
            metric=metric,
            lines=lines,
            **common,
        )

    def _from_counters(
        self, kernel: KernelProfile, counted: Evidence, efficiency: float, evidence: list[Evidence]
    ) -> Finding:
        """Judged on the hardware: the kernel's figure from whole-kernel counters (`efficiency`), the
        lines from the per-instruction ones (or, without them, the model's lines)."""
        metric = Metric(
            name=self.metric, value=round(efficiency, 4), unit="of each 32-byte sector used (measured)", better="higher"
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=False, metric=metric)
        sites = {(s.file, s.line): s for ev in evidence for s in ev.sites if not s.is_atomic and s.sectors}
        # An atomic's addresses are its data (a histogram bin, a token's row): its sectors are
        # atomicContention's concern, as in the trace path below.
        moved = [c for c in counted.lines if c.counters.get(THEORETICAL) and not _atomics_only(c)]
        total = sum(c.counters[THEORETICAL] for c in moved)
        flagged = [
            c
            for c in moved
            if c.counters.get(IDEAL, 0) / c.counters[THEORETICAL] < self.options.min_efficiency
            and c.counters[THEORETICAL] / total >= self.options.min_share
        ]
        if not moved and efficiency < self.options.min_efficiency:  # no line view: the model names the lines
            traced_bytes = sum(s.sectors for s in sites.values()) * 32
            lines = [
                source_line(s.file, s.line, _detail(s, traced_bytes) + " (line from the interpreter model)")
                for s in sites.values()
                if s.sector_efficiency < self.options.min_efficiency
            ]
            return self._flagged(kernel, efficiency, efficiency, lines, counted, common)
        if not flagged:
            return self.finding(
                False,
                f"{kernel.name}'s loads and stores use {efficiency:.0%} of each sector they "
                f"move, measured by {counted.backend} (threshold "
                f"{self.options.min_efficiency:.0%} per line).",
                **common,
            )
        worst = min(c.counters.get(IDEAL, 0) / c.counters[THEORETICAL] for c in flagged)
        lines = [
            source_line(
                c.file,
                c.line,
                _counted_detail(c, total, sites.get((c.file, c.line)))
                + self.compiled_at(evidence, c.file, c.line, ("load", "store")),
            )
            for c in flagged
        ]
        return self._flagged(kernel, worst, efficiency, lines, counted, common)

    def _flagged(self, kernel, worst, efficiency, lines, counted, common) -> Finding:
        return self.finding(
            True,
            f"{len(lines)} load/store line(s) of {kernel.name} are uncoalesced, measured by {counted.backend}: at "
            f"worst {worst:.1%} of each 32-byte sector is used; overall {efficiency:.0%}. Make consecutive lanes "
            "touch consecutive elements.",
            severity="high" if worst < 0.25 else "medium",
            lines=lines,
            **common,
        )


THEORETICAL = "L2 Theoretical Sectors Global"
IDEAL = "L2 Theoretical Sectors Global Ideal"
LD_PCT = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
ST_PCT = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"


def _atomics_only(c: LineCounters) -> bool:
    """Every global-memory instruction at the line is an atomic (ATOM/RED)."""
    memory = [i for i in c.instructions if i.startswith(("LDG", "STG", "ATOM", "RED"))]
    return bool(memory) and all(i.startswith(("ATOM", "RED")) for i in memory)


def _measured_efficiency(ev: Evidence) -> float | None:
    """Bytes used over bytes moved, loads and stores weighted by their sectors (ncu), or the
    TA wavefronts' lanes over TCP accesses (rocprofv3, as Omniperf computes coalescing)."""
    m = ev.metrics
    if ev.backend == "rocprofv3":
        if not m.get("TCP_TOTAL_ACCESSES_sum") or "TA_TOTAL_WAVEFRONTS_sum" not in m:
            return None
        return min(1.0, m["TA_TOTAL_WAVEFRONTS_sum"] * 64 / (m["TCP_TOTAL_ACCESSES_sum"] * 4))
    parts = [
        (m[pct] / 100, m[sectors])
        for pct, sectors in ((LD_PCT, LD_SECTORS), (ST_PCT, ST_SECTORS))
        if pct in m and m.get(sectors)
    ]
    moved = sum(s for _, s in parts)
    return sum(e * s for e, s in parts) / moved if moved else None


def _counted_detail(c: LineCounters, total: float, site: AccessSite | None) -> str:
    used = c.counters.get(IDEAL, 0) / c.counters[THEORETICAL]
    ops = "/".join(i for i in c.instructions if i.startswith(("LDG", "STG"))) or "global access"
    text = (
        f"{ops}: {used:.1%} of each sector used, measured ({c.counters[THEORETICAL]:,.0f} sectors moved, "
        f"{c.counters.get(IDEAL, 0):,.0f} needed); {c.counters[THEORETICAL] / total:.0%} of the kernel's sectors"
    )
    if site is not None:
        text += f"; model: {site.sector_efficiency:.1%}"
        if site.lane_stride_elems is not None:
            text += f", consecutive lanes {site.lane_stride_elems} element(s) apart"
    return text


def _detail(s: AccessSite, total_bytes: int) -> str:
    stride = ""
    if s.lane_stride_elems is not None:
        contiguous = " (contiguous)" if s.lane_stride_elems == 1 else ""
        stride = f"; consecutive lanes are {s.lane_stride_elems} element(s) apart{contiguous}"
    return (
        f"{s.op} of `{s.buffer or '?'}`: {s.sector_efficiency:.1%} of each sector used ({s.elem_bytes}-byte "
        f"elements{stride}); {s.sectors * 32 / total_bytes:.0%} of the kernel's traced sector traffic"
    )
