"""memoryLocality: the programs that run at once share little of what they load, though the grid reuses it.

A tiled kernel (a GEMM: program (m, n) reads row panel m of A and column panel n of B) reads
each panel from several programs. Whether those reads hit L2 depends on which programs run at
the same time: the first wave of the grid (one program per SM). Walking the tiles row-major,
a wave of 132 programs on a wide matrix covers one or two row panels and 132 column panels; a
grouped order (GROUP_M rows of tiles at a time, as in Triton's matmul tutorial) covers about
eleven of each, so the wave loads several times less distinct data and the rest comes from L2.

Evidence: the interpreter trace's wave pass (the first wave's programs in launch order, each up
to its loop's second iteration): per loaded buffer the 128-byte lines one program touches, the
distinct lines the wave touches together, and from the buffer's size how many programs of the
grid read each line. For the two reused operands with the most data, the formula compares what
the wave loads with what the best rectangle of as many tiles would load (`wave_footprint_ratio`).
With Nsight Compute the finding adds the L2 hit rate and DRAM bytes.
"""

from __future__ import annotations

import ast
import math

from pydantic import Field

from intelliperf.models import Evidence, Finding, KernelProfile, Metric, WaveBuffer
from intelliperf.pinpoint import source_line
from intelliperf.profiling.trace import WAVE_PROGRAMS

from .base import Formula

L2_HIT = "lts__t_sector_hit_rate.pct"
DRAM_READ = "dram__bytes_read.sum"


class MemoryLocality(Formula["MemoryLocality.Options"]):
    name = "memoryLocality"
    summary = "the programs that run at once share little of the data the grid reuses (tile order loses L2 reuse)"
    evidence = ("interpreter-trace",)
    counters = {"ncu": (L2_HIT, DRAM_READ, "lts__t_sectors_srcunit_tex_op_read.sum", "gpu__time_duration.sum")}
    metric = "wave_footprint_ratio"
    problem = (
        "The programs that run at the same time work on tiles that share little data, so operands the grid "
        "reads many times are fetched from DRAM again instead of hitting L2."
    )
    techniques = (
        "grouped program order: map the 1-D program id to tiles GROUP_M rows at a time (pid -> group, then "
        "pid_m = first_m + pid % group_size, pid_n = (pid % tiles_in_group) // group_size), GROUP_M about 8",
        "swizzle a 2-D grid the same way (flatten it, then regroup)",
        "persistent kernels that walk tiles in a grouped order",
    )

    class Options(Formula.Options):
        min_ratio: float = Field(
            1.5, ge=1, description="flag when the wave loads this many times what the best tile order would"
        )

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
        reused = sorted((b for b in wave.buffers if b.reuse >= 2), key=lambda b: -b.lines)[:2]
        measured = _measured(self.counter_evidence(evidence))
        if len(reused) < 2:
            return self.finding(
                False,
                f"{kernel.name} reads at most one operand that several programs share, so no tile order "
                f"loads less.{measured}",
                **common,
            )
        a, b = reused
        actual = a.lines_per_program * a.panels + b.lines_per_program * b.panels
        best = _best_rectangle(a, b, wave.programs, wave.programs_total)
        ratio = actual / best if best else 1.0
        common["metric"] = Metric(
            name=self.metric, value=round(ratio, 3), unit="wave's loaded lines / best tile order's", better="lower"
        )
        shape = (
            f"the first {wave.programs} programs cover {a.panels:.1f} tile(s) of `{a.buffer}` and {b.panels:.1f} of "
            f"`{b.buffer}` (each read by about {a.reuse:.0f} and {b.reuse:.0f} programs of the grid)"
        )
        if ratio < self.options.min_ratio:
            return self.finding(
                False,
                f"{kernel.name}'s program order keeps reuse in L2: {shape}, {ratio:.2f}x what the best order of "
                f"as many tiles would load (flagged from {self.options.min_ratio:g}x).{measured}",
                **common,
            )
        return self.finding(
            True,
            f"{kernel.name}'s program order loses L2 reuse: {shape}, {ratio:.1f}x the data the best order of as "
            "many tiles would load. Walk the tiles in groups (GROUP_M rows of tiles at a time) so the programs "
            f"that run together share their operands.{measured}",
            severity="high" if ratio >= 3 else "medium",
            lines=_order_lines(kernel),
            **common,
        )


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
    return f" Measured by {counted.backend}: L2 hit rate {m[L2_HIT]:.0f}%{dram}."
