"""registerPressure: a program holds more live values than the register file gives it, so they spill.

A row kernel that loads a whole row into one block (`tl.arange(0, next_power_of_2(n_cols))`)
keeps every element of it live in registers across the reductions that follow. Past what a
thread may hold (255 32-bit registers on NVIDIA, 512 VGPRs per lane on AMD) the assembler
spills the rest to local memory: every spilled value is written out and read back through the
cache hierarchy, and a kernel that should be bound by its one pass over the data waits on
those round trips. The fix holds less at once: loop over the row in chunks (`tl.range`) and
accumulate the reductions, then reload for the output; or reorder the body so fewer block-wide
vectors are live together.

Evidence, best first: Nsight Compute (local-memory sectors loaded and stored against the
kernel's global traffic, registers per thread, occupancy); the static view of the compiled
kernel for each target (bytes of stack/scratch per thread from ptxas's cubin and the AMDGCN
listing, and the spill instructions per kernel line: SASS LDL/STL, AMDGCN scratch_load/store).
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import Evidence, Finding, KernelProfile, Metric, SourceLine, StaticFact
from intelliperf.pinpoint import source_line

from .base import Formula

LOCAL_LD = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
GLOBAL_LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
REGISTERS = "launch__registers_per_thread"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"


class RegisterPressure(Formula["RegisterPressure.Options"]):
    name = "registerPressure"
    recipes = "registerPressure"  # (rewriters/recipes.py)
    summary = "the kernel holds more live values than fit in registers and spills them to local memory"
    evidence = ("static",)
    counters = {
        "ncu": (LOCAL_LD, LOCAL_ST, GLOBAL_LD, GLOBAL_ST, REGISTERS, OCCUPANCY, "gpu__time_duration.sum"),
    }
    metric = "spilled_bytes_per_thread"
    problem = (
        "The kernel keeps more values live at once than a thread's registers hold, so the compiler spills "
        "them to local memory and every spilled value makes a round trip through the cache hierarchy."
    )
    techniques = (
        "loop over an oversized block in chunks with tl.range: accumulate the row's reductions chunk by "
        "chunk, then reload each chunk to compute and store the output",
        "reorder the body so fewer block-wide vectors are live at once (finish with one before loading the next)",
        "smaller BLOCK sizes with several programs per row, or more warps so each thread holds fewer elements",
        "fewer pipeline stages (num_stages) when the buffers of stages in flight are what does not fit",
    )

    class Options(Formula.Options):
        min_spill_bytes: int = Field(
            16, ge=0, description="bytes spilled per thread (static view) at which a kernel is flagged"
        )
        min_local_share: float = Field(
            0.25,
            ge=0,
            description="local-memory traffic over global traffic (measured) at which it is flagged: spills "
            "are cached, so a small share costs little next to the kernel's own traffic",
        )

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        counted = self.counter_evidence(evidence)
        if counted is not None and LOCAL_LD in counted.metrics:
            return self._from_counters(kernel, counted, evidence)
        static = [ev for ev in evidence if ev.resources]
        if not static:
            return self.no_evidence(kernel)
        usage = {t: r for ev in static for t, r in ev.resources.items() if "spill_bytes" in r}
        if not usage:
            return self.finding(False, f"no target reported {kernel.name}'s register use", evidence_backend="static")
        worst_target = max(usage, key=lambda t: usage[t]["spill_bytes"])
        spilled = usage[worst_target]["spill_bytes"]
        metric = Metric(name=self.metric, value=spilled, unit=f"bytes per thread ({worst_target})", better="lower")
        common = dict(metric=metric, evidence_backend="static", modelled=False)
        summary = _usage_summary(usage, self.num_warps(kernel))
        if spilled < self.options.min_spill_bytes:
            return self.finding(
                False,
                f"{kernel.name} fits in registers: {summary} (flagged from {self.options.min_spill_bytes} "
                "spilled bytes per thread).",
                **common,
            )
        return self.finding(
            True,
            f"{kernel.name} spills registers to local memory: {summary}. Hold fewer values at once: loop over the "
            "block in chunks with tl.range and accumulate, or reorder the body so fewer block-wide vectors are live.",
            severity="high" if spilled >= 1024 else "medium",
            lines=_spill_lines(evidence),
            **common,
        )

    def _from_counters(self, kernel: KernelProfile, counted: Evidence, evidence: list[Evidence]) -> Finding:
        m = counted.metrics
        local = (m.get(LOCAL_LD, 0.0) + m.get(LOCAL_ST, 0.0)) * 32
        moved = (m.get(GLOBAL_LD, 0.0) + m.get(GLOBAL_ST, 0.0)) * 32
        share = local / moved if moved else (float("inf") if local else 0.0)
        metric = Metric(name="local_memory_bytes", value=local, unit="bytes (measured)", better="lower")
        common = dict(metric=metric, evidence_backend=self.backends(evidence), modelled=False)
        measured = (
            f"{local:,.0f} bytes of local-memory traffic against {moved:,.0f} global, measured by {counted.backend}"
            + (f"; {m[REGISTERS]:.0f} registers per thread" if REGISTERS in m else "")
            + (f"; {m[OCCUPANCY]:.0f}% of the SM's warps active" if OCCUPANCY in m else "")
        )
        if not local or share < self.options.min_local_share:
            return self.finding(
                False,
                f"{kernel.name} does not spill enough to matter: {measured} (flagged from "
                f"{self.options.min_local_share:.0%} of the global traffic).",
                **common,
            )
        return self.finding(
            True,
            f"{kernel.name} spills registers: {measured}. Hold fewer values at once: loop over the block in chunks "
            "with tl.range and accumulate, or reorder the body so fewer block-wide vectors are live.",
            severity="high" if share >= 0.5 else "medium",
            lines=_spill_lines(evidence),
            **common,
        )


def _usage_summary(usage: dict[str, dict[str, float]], warps: int | None) -> str:
    parts = []
    for target, r in sorted(usage.items()):
        text = f"{target} {r.get('registers', 0):.0f} registers and {r['spill_bytes']:.0f} spilled bytes per thread"
        if target.startswith("cuda") and warps and r.get("registers"):
            # 64K 32-bit registers per SM, allocated per warp: programs of this size an SM holds at once
            programs = 65536 // (int(r["registers"]) * 32 * warps)
            text += f" ({programs} program(s) of {warps} warps per SM by registers)"
        elif "occupancy_waves" in r:
            text += f" (occupancy {r['occupancy_waves']:.0f} waves per SIMD)"
        parts.append(text)
    return "; ".join(parts)


def _spill_lines(evidence: list[Evidence], limit: int = 3):
    """The kernel lines with the most spill instructions (their values are the ones that do not fit)."""
    per_line: dict[tuple[str, int], list[StaticFact]] = {}
    for ev in evidence:
        for f in ev.facts:
            if f.kind in ("local_load", "local_store"):
                per_line.setdefault((f.file, f.line), []).append(f)
    ranked = sorted(per_line.items(), key=lambda item: -sum(f.count for f in item[1]))
    lines: list[SourceLine] = []
    for (file, line), facts in ranked:
        if len(lines) == limit:
            break
        per_target: dict[str, list[str]] = {}
        for f in facts:
            verb = "stores" if f.kind == "local_store" else "reloads"
            per_target.setdefault(f.target, []).append(f"{f.count} spill {verb} ({f.instruction})")
        found = source_line(file, line, "; ".join(f"{t}: {', '.join(v)}" for t, v in per_target.items()))
        if found.code:  # the assembler also puts spills at the function's closing line
            lines.append(found)
    return lines
