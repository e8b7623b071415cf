"""memoryLocality: the programs that run at once share little of what they load, though the grid reuses it.

A tiled kernel (a GEMM: program (m, n) reads row panel m of A and column panel n of B) reads
each panel from several programs. Whether those reads hit L2 depends on which programs run at
the same time: the first wave of the grid (one program per SM). Walking the tiles row-major,
a wave of 132 programs on a wide matrix covers one or two row panels and 132 column panels; a
grouped order (GROUP_M rows of tiles at a time, as in Triton's matmul tutorial) covers about
eleven of each, so the wave loads several times less distinct data and the rest comes from L2.
That loss costs DRAM traffic only where the data the grid loads between two reads of a line does
not fit in L2.

Stores have the same question: programs that each write a few bytes of many 32-byte sectors (a
split-K partial buffer with the split index innermost) leave those sectors part-written until the
programs writing the rest of them run. Where those are far behind in launch order and the output
does not fit in L2, each sector leaves L2 part-written and is read back from DRAM to be completed
(measured on an H100: 2.1 GB read and 2.1 GB written for a 128 MB output, 2.9x slower than the
same kernel with the split axis first).

Evidence: the interpreter trace's wave pass (the first wave's programs in launch order, each
through the first iteration of its loops): per loaded buffer the 128-byte lines one program touches, the
distinct lines the wave touches together, and from the buffer's size how many programs of the
grid read each line; per stored buffer how full the wave leaves the sectors it writes. The metric
(`wave_footprint_ratio`) is the worse of: what the wave loads over what the best rectangle of as
many tiles would load (where re-reads miss L2), and the sector bytes the wave's stores move over
the bytes they write (where the output does not fit in L2). With Nsight Compute the finding adds
the L2 hit rate and DRAM bytes.
"""

from __future__ import annotations

import ast
import math

from pydantic import Field

from intelliperf.models import (
    AccessSite,
    Evidence,
    Finding,
    KernelProfile,
    Metric,
    WaveBuffer,
    WaveFootprint,
    WaveStore,
)
from intelliperf.pinpoint import source_line
from intelliperf.profiling.trace import LINE_BYTES, WAVE_PROGRAMS

from .base import Formula

L2_HIT = "lts__t_sector_hit_rate.pct"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
MIB = 2**20


class MemoryLocality(Formula["MemoryLocality.Options"]):
    name = "memoryLocality"
    recipes = "memoryLocality"  # (rewriters/recipes.py)
    summary = "the programs that run at once share little of the data the grid reuses (tile order loses L2 reuse)"
    evidence = ("interpreter-trace",)
    counters = {
        "ncu": (L2_HIT, DRAM_READ, DRAM_WRITE, "lts__t_sectors_srcunit_tex_op_read.sum", "gpu__time_duration.sum")
    }
    metric = "wave_footprint_ratio"
    sees_warps_offline = False  # (addresses per program and per launch: no warps in them)
    problem = (
        "The programs that run at the same time work on tiles that share little data, so operands the grid "
        "reads many times are fetched from DRAM again instead of hitting L2, or output sectors they each write "
        "a part of leave L2 before the programs writing the rest of them run."
    )
    techniques = (
        "grouped program order: map the 1-D program id to tiles GROUP_M rows at a time (pid -> group, then "
        "pid_m = first_m + pid % group_size, pid_n = (pid % tiles_in_group) // group_size), GROUP_M about 8",
        "swizzle a 2-D grid the same way (flatten it, then regroup)",
        "persistent kernels that walk tiles in a grouped order",
        "when programs each write a slice of the same output sectors (a split index innermost in a partial-sum "
        "buffer), make that split the fastest-varying program index (program_id(0), or the inner index of a "
        "grouped 1-D order) so the programs completing a sector run together",
    )

    class Options(Formula.Options):
        min_ratio: float = Field(
            1.5, ge=1, description="flag when the wave moves this many times what the best program order would"
        )
        l2_mib: float = Field(50.0, gt=0, description="L2 cache modelled, MiB (H100 and H200: 50)")

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        traced = [ev for ev in evidence if ev.sites or ev.programs_sampled]
        if not traced:
            return self.no_evidence(kernel)
        common: dict = dict(evidence_backend=self.backends(evidence), modelled=traced[0].modelled)
        wave = next((ev.wave for ev in traced if ev.wave is not None), None)
        if wave is None:
            programs = max(ev.programs_total for ev in traced)
            why = (
                f"{kernel.name}'s grid ({programs} programs) runs in about one wave: program order cannot lose "
                "L2 reuse."
                if programs < 2 * WAVE_PROGRAMS
                else f"the trace did not reach {kernel.name}'s first wave ({'; '.join(traced[0].notes) or 'no note'}), "
                "so this formula cannot judge it."
            )
            return self.finding(False, why, **common)
        l2 = self.options.l2_mib * MIB
        loads_ratio, loads_text = _loads(kernel.name, wave, l2, self.options.min_ratio)
        stores_ratio, stores_text, store = _stores(wave, l2)
        ratio = max(loads_ratio, stores_ratio)
        common["metric"] = Metric(
            name=self.metric,
            value=round(ratio, 3),
            unit="DRAM traffic of the wave's program order / the best order's (loads past L2, part-written sectors)",
            better="lower",
        )
        measured = _measured(self.counter_evidence(evidence))
        if ratio < self.options.min_ratio:
            return self.finding(
                False,
                f"{kernel.name}'s program order keeps reuse in L2: {loads_text}; {stores_text} "
                f"(flagged from {self.options.min_ratio:g}x).{measured}",
                **common,
            )
        lines = _order_lines(kernel)
        found = [
            text for r, text in ((loads_ratio, loads_text), (stores_ratio, stores_text)) if r >= self.options.min_ratio
        ]
        if stores_ratio >= self.options.min_ratio and store is not None:
            lines += _store_lines(traced, store.buffer)
        return self.finding(
            True,
            f"{kernel.name}'s program order loses L2 reuse: {'; '.join(found)}.{measured}",
            severity="high" if ratio >= 3 else "medium",
            lines=lines,
            **common,
        )


def _loads(name: str, wave: WaveFootprint, l2: float, min_ratio: float) -> tuple[float, str]:
    """The wave's loads over the best order's, counted only where the lines re-read miss L2."""
    reused = sorted((b for b in wave.buffers if b.reuse >= 2), key=lambda b: -b.lines)[:2]
    if len(reused) < 2:
        return 1.0, f"{name} reads at most one operand that several programs share, so no tile order loads less"
    a, b = reused
    actual = a.lines_per_program * a.panels + b.lines_per_program * b.panels
    best = _best_rectangle(a, b, wave.programs, wave.programs_total)
    ratio = actual / best if best else 1.0
    shape = (
        f"the first {wave.programs} programs cover {a.panels:.1f} tile(s) of `{a.buffer}` and {b.panels:.1f} of "
        f"`{b.buffer}` (each read by about {a.reuse:.0f} and {b.reuse:.0f} programs of the grid), {ratio:.2f}x "
        "what the best order of as many tiles would load"
    )
    if ratio < min_ratio:
        return ratio, shape
    between = _loaded_between_reads(a, b, wave)
    if between <= l2:
        return 1.0, (
            f"{shape}, but the grid loads about {_size(between)} between two reads of a line by different "
            f"waves, within the L2 ({_size(l2)}), so the re-reads hit L2"
        )
    return ratio, (
        f"{shape}; the grid loads about {_size(between)} between two reads of a line by different waves, "
        f"more than the L2 holds ({_size(l2)})"
    )


def _loaded_between_reads(a: WaveBuffer, b: WaveBuffer, wave: WaveFootprint) -> float:
    """Bytes the grid loads between two reads of a line by programs of different waves. A line's
    readers are taken as spread evenly over the launch order (total / reuse programs apart; a
    grouped order's readers cluster, with more between the clusters), and each program loads the
    wave's whole-loop data over its programs."""
    per_program = sum(x.lines * LINE_BYTES * x.loop_calls for x in (a, b)) / wave.programs
    return max(wave.programs_total / x.reuse for x in (a, b)) * per_program


def _stores(wave: WaveFootprint, l2: float) -> tuple[float, str, WaveStore | None]:
    """The sector bytes the wave's stores move over the bytes they write, for the worst output that
    the grid writes whole, that does not fit in L2, and whose sectors the wave leaves part-written."""
    complete = [s for s in wave.stores if s.bytes_per_program * wave.programs_total >= 0.9 * s.buffer_bytes]
    if not complete:
        return 1.0, "its stores write no output whole", None
    worst = min(complete, key=lambda s: s.sector_fill)
    fill = (
        f"the first {wave.programs} programs write {worst.bytes_per_program:,.0f} bytes each of `{worst.buffer}` "
        f"and fill {worst.sector_fill:.0%} of the 32-byte sectors they write into"
    )
    if worst.sector_fill > 0.5:
        return 1.0, fill, worst
    if worst.buffer_bytes <= l2:
        fits = (
            f"{fill}, but the whole output ({_size(worst.buffer_bytes)}) fits in L2 ({_size(l2)}), where the "
            "sectors wait for the rest of their bytes"
        )
        return 1.0, fits, worst
    spills = (
        f"{fill}; the programs writing the rest of each sector run later, and the output "
        f"({_size(worst.buffer_bytes)}) does not fit in L2 ({_size(l2)}), so sectors leave L2 part-written and "
        "are read back from DRAM to be completed. Order the programs so those writing the same sectors run "
        "together: the index that splits the output's contiguous axis fastest (program_id(0), or the inner "
        "index of a grouped 1-D order)"
    )
    return 1.0 / worst.sector_fill, spills, worst


def _size(nbytes: float) -> str:
    return f"{nbytes / MIB:.2g} MiB" if nbytes < 10 * MIB else f"{nbytes / MIB:,.0f} MiB"


def _store_lines(traced: list[Evidence], buffer: str):
    sites: list[AccessSite] = [s for ev in traced for s in ev.sites if s.op == "store" and s.buffer == buffer]
    return [source_line(s.file, s.line, f"part-written sectors of `{buffer}`") for s in sites]


def _best_rectangle(a: WaveBuffer, b: WaveBuffer, programs: int, total: int) -> float:
    """Lines loaded by the cheapest x-by-y block of tiles holding `programs` of them: x distinct tiles
    of `a`, y of `b`. Each tile of `a` is read by the programs along b (its reuse), so the grid has
    total/reuse(a) tiles of `a` to choose from, and total/reuse(b) of `b`."""
    along_a = max(1, round(total / a.reuse))
    along_b = max(1, round(total / b.reuse))
    costs = [
        a.lines_per_program * x + b.lines_per_program * math.ceil(programs / x)
        for x in range(1, min(programs, along_a) + 1)
        if math.ceil(programs / x) <= along_b
    ]
    return min(costs) if costs else a.lines_per_program * a.panels + b.lines_per_program * b.panels


def _order_lines(kernel: KernelProfile):
    """The kernel's lines that turn the program id into a tile index (what a grouped order rewrites)."""
    if not kernel.file or not kernel.line:
        return []
    try:
        tree = ast.parse(open(kernel.file, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return []
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.lineno == kernel.line), None)
    if fn is None:
        return []
    derived: set[str] = set()
    lines = []
    for stmt in (s for s in ast.walk(fn) if isinstance(s, ast.Assign)):
        uses = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        calls_pid = any(isinstance(n, ast.Attribute) and n.attr == "program_id" for n in ast.walk(stmt.value))
        if calls_pid or uses & derived and any(isinstance(n, (ast.FloorDiv, ast.Mod)) for n in ast.walk(stmt.value)):
            derived |= {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            lines.append(stmt.lineno)
    return [source_line(kernel.file, n, "program id to tile index") for n in sorted(set(lines))]


def _measured(counted: Evidence | None) -> str:
    if counted is None:
        return ""
    m = counted.metrics
    if L2_HIT not in m:
        return ""
    dram = f", {m[DRAM_READ] / 1e6:,.0f} MB read from DRAM" if DRAM_READ in m else ""
    dram += f", {m[DRAM_WRITE] / 1e6:,.0f} MB written" if DRAM_WRITE in m else ""
    return f" Measured by {counted.backend}: L2 hit rate {m[L2_HIT]:.0f}%{dram}."
