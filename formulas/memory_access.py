"""memoryAccess: global loads and stores that use little of each 32-byte sector they move.

A warp's request is served in 32-byte sectors. When consecutive lanes read consecutive
elements, one sector serves 8 float32 lanes; when they are a row apart, every lane pulls its
own sector and uses 4 of its 32 bytes (12.5 %). The fix makes the lane index that varies
fastest walk contiguous memory: swap which index the program's lanes cover, or load a tile
along rows and transpose it in registers (`tl.trans`) before storing it along rows.

Evidence today: the interpreter trace (a model: sectors per group of 32 consecutive lanes in
block order), with the static view's instruction widths at each flagged line (a 32-bit scalar
store where a 128-bit one would do). Hardware counters come with the ncu backend.
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import AccessSite, Evidence, Finding, KernelProfile, Metric
from intelliperf.pinpoint import source_line

from .base import Formula


class MemoryAccess(Formula):
    name = "memoryAccess"
    summary = "global loads/stores use a small part of each 32-byte sector (uncoalesced access)"
    evidence = ("interpreter-trace", "static")
    metric = "sector_efficiency"
    problem = ("Consecutive lanes of the kernel's loads or stores touch addresses far apart, so each 32-byte "
               "sector the memory system moves serves one lane and most of its bytes are wasted.")
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
        traced = [ev for ev in evidence if ev.sites or ev.programs_sampled]
        if not traced:
            return self.no_evidence(kernel)
        sites = [(ev, s) for ev in traced for s in ev.sites if not s.is_atomic and s.sectors]
        common = dict(evidence_backend=self.backends(evidence), modelled=traced[0].modelled)
        if not sites:
            return self.finding(False, f"{kernel.name} makes no traced global load or store.", **common)
        total_bytes = sum(s.sectors for _, s in sites) * 32
        efficiency = sum(s.bytes_requested for _, s in sites) / total_bytes
        metric = Metric(name=self.metric, value=round(efficiency, 4), unit="of each 32-byte sector used",
                        better="higher")
        flagged = [(ev, s) for ev, s in sites if s.sector_efficiency < self.options.min_efficiency
                   and s.sectors * 32 / total_bytes >= self.options.min_share]
        if not flagged:
            return self.finding(False, f"{kernel.name}'s loads and stores use {efficiency:.0%} of each sector they "
                                       f"move (threshold {self.options.min_efficiency:.0%} per line).",
                                metric=metric, **common)
        worst = min(s.sector_efficiency for _, s in flagged)
        severity = "high" if worst < 0.25 else "medium"
        lines = [source_line(s.file, s.line, _detail(s, total_bytes) + self.compiled_at(evidence, s.file, s.line,
                                                                                        (s.op,)))
                 for _, s in flagged]
        return self.finding(
            True,
            f"{len(flagged)} load/store line(s) of {kernel.name} are uncoalesced: at worst {worst:.1%} of each 32-byte "
            f"sector is used; overall {efficiency:.0%}. Make consecutive lanes touch consecutive elements.",
            severity=severity, metric=metric, lines=lines, **common)


def _detail(s: AccessSite, total_bytes: int) -> str:
    stride = ""
    if s.lane_stride_elems is not None:
        contiguous = " (contiguous)" if s.lane_stride_elems == 1 else ""
        stride = f"; consecutive lanes are {s.lane_stride_elems} element(s) apart{contiguous}"
    return (f"{s.op} of `{s.buffer or '?'}`: {s.sector_efficiency:.1%} of each sector used ({s.elem_bytes}-byte "
            f"elements{stride}); {s.sectors * 32 / total_bytes:.0%} of the kernel's traced sector traffic")
