"""bankConflict: shared-memory accesses whose lanes collide on the same bank.

Shared memory has 32 banks of 4 bytes; lanes of one warp that hit different addresses in one
bank are served one after another, in extra wavefronts. Triton kernels touch shared memory
behind the scenes: reductions across warps (`tl.sum(x, axis=0)` when axis 0 spans warps),
layout conversions (`tl.trans`, `tl.permute`, `tl.gather`) and the operands of `tl.dot`. The
costly case measured on the H100 (examples/bank_conflict/) is such an exchange inside a loop:
a column reduction per tile had 82 % of its shared wavefronts in conflict.

Evidence, best first: Nsight Compute (bank conflicts over shared wavefronts per kernel; the
conflicts per line from the source page's N-way column); rocprofv3 on AMD (LDS bank-conflict
cycles over LDS active cycles, untested on hardware); the static view (no GPU): a line inside
a loop whose compiled code stores to and loads from shared memory (a round trip through it,
not the staging of a dot operand) is a likely conflict site, which only counters can confirm.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import Field

from intelliperf.models import Evidence, Finding, KernelProfile, Metric
from intelliperf.pinpoint import loop_lines, source_line

from .base import Formula, same_file

CONFLICTS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
WAVEFRONTS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
)
GLOBAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
EXCESS = "Shared Excess Wavefronts"  # ncu.EXCESS_SHARED, per line
Sites = dict[tuple[str, int], int]  # (file, line) -> shared instructions per thread at a loop line


class BankConflict(Formula["BankConflict.Options"]):
    name = "bankConflict"
    sweep_first = True  # its metric moves with pipelining depth and warps
    summary = "shared-memory accesses whose lanes collide on a bank (extra wavefronts)"
    evidence = ("static",)
    counters = {
        "ncu": (
            *CONFLICTS,
            *WAVEFRONTS,
            *GLOBAL_SECTORS,
            "smsp__sass_inst_executed_op_shared_ld.sum",
            "smsp__sass_inst_executed_op_shared_st.sum",
            "gpu__time_duration.sum",
        ),
        "rocprofv3": ("SQ_LDS_BANK_CONFLICT", "SQ_LDS_IDX_ACTIVE", "SQ_INSTS_LDS"),
    }
    metric = "bank_conflict_share"
    problem = (
        "The kernel exchanges data through shared memory (a reduction across warps, a layout conversion) "
        "in a pattern where lanes of a warp hit the same bank, so each access is replayed in extra "
        "wavefronts."
    )
    techniques = (
        "move the exchange out of the loop: accumulate the tile in registers and reduce across warps once at the end",
        "reduce along the axis a warp already holds (the contiguous, last axis) so no exchange between warps is needed",
        "change num_warps or the block shape so the reduced axis stays within a warp",
        "for transposes, use tiles whose row length in bytes is not a multiple of 128, or a wider element type",
    )

    class Options(Formula.Options):
        min_share: float = Field(0.2, ge=0, le=1, description="flag when this share of shared wavefronts conflict")
        min_weight: float = Field(
            0.1,
            ge=0,
            description="and the conflicts amount to this share of the kernel's "
            "global sectors (so a rare exchange is not flagged)",
        )
        min_line_share: float = Field(0.05, ge=0, le=1, description="name lines with this share of the conflicts")
        min_weight_once: float = Field(
            1.0,
            ge=0,
            description="for an exchange outside every loop (once per "
            "program, after the loop): conflicts per global sector "
            "at which it is flagged",
        )

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        counted = self.counter_evidence(evidence)
        sites = _round_trips_in_loops(kernel, evidence)  # the static view's exchange lines, read once
        if counted is not None and counted.backend == "ncu" and all(m in counted.metrics for m in WAVEFRONTS):
            return self._from_ncu(kernel, counted, evidence, sites)
        if counted is not None and counted.backend == "rocprofv3" and counted.metrics.get("SQ_LDS_IDX_ACTIVE"):
            return self._from_rocprof(kernel, counted, evidence, sites)
        if not any(ev.facts for ev in evidence):
            return self.no_evidence(kernel)
        return self._from_static(kernel, evidence, sites)

    def _from_ncu(self, kernel: KernelProfile, counted: Evidence, evidence: list[Evidence], sites: Sites) -> Finding:
        m = counted.metrics
        conflicts = sum(m.get(c, 0.0) for c in CONFLICTS)
        wavefronts = sum(m[w] for w in WAVEFRONTS)
        sectors = sum(m.get(s, 0.0) for s in GLOBAL_SECTORS)
        share = conflicts / wavefronts if wavefronts else 0.0
        weight = conflicts / sectors if sectors else (1.0 if conflicts else 0.0)
        metric = Metric(
            name=self.metric,
            value=round(share, 4),
            unit="of shared-memory wavefronts are bank conflicts (measured)",
            better="lower",
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=False, metric=metric)
        figures = (
            f"{conflicts:,.0f} of {wavefronts:,.0f} shared-memory wavefronts are bank conflicts ({share:.0%}), "
            f"{weight:.2f} per global sector moved"
        )
        if not wavefronts:
            return self.finding(False, f"{kernel.name} issues no shared-memory access (measured by ncu).", **common)
        if share < self.options.min_share or weight < self.options.min_weight:
            return self.finding(
                False,
                f"{kernel.name}: {figures} (thresholds {self.options.min_share:.0%} and {self.options.min_weight:g}).",
                **common,
            )
        if _exchange_in_loop(kernel, counted, evidence, sites) is False and weight < self.options.min_weight_once:
            return self.finding(
                False,
                f"{kernel.name}: {figures}, but no loop line exchanges data through shared "
                "memory: the conflicts come from an exchange done once per program (a "
                "reduction after the loop), a small cost next to the data the loop moves "
                f"(flagged from {self.options.min_weight_once:g} conflicts per sector).",
                **common,
            )
        per_line = [c for c in counted.lines if c.counters.get(EXCESS)]
        total = sum(c.counters[EXCESS] for c in per_line)
        lines = []
        for c in sorted(per_line, key=lambda c: -c.counters[EXCESS]):
            if c.counters[EXCESS] / total < self.options.min_line_share:
                continue
            file, line, moved = self._kernel_line(kernel, sites, c.file, c.line)
            ops = "/".join(i for i in c.instructions if i.startswith(("LDS", "STS")))
            lines.append(
                source_line(
                    file,
                    line,
                    f"{ops}: {c.counters[EXCESS]:,.0f} extra wavefronts from bank "
                    f"conflicts, {c.counters[EXCESS] / total:.0%} of the kernel's (measured){moved}"
                    + self.compiled_at(evidence, file, line, ("shared_load", "shared_store")),
                )
            )
        if not lines:
            lines = self._static_lines(sites, evidence)
        return self.finding(
            True,
            f"{kernel.name} has shared-memory bank conflicts: {figures}. "
            "Move the exchange out of the loop or keep the reduced axis within a warp.",
            severity="high" if share >= 0.5 else "medium",
            lines=lines,
            **common,
        )

    @staticmethod
    def _kernel_line(kernel: KernelProfile, sites: Sites, file: str, line: int) -> tuple[str, int, str]:
        """A line in a Triton helper (tl.sum's combine in standard.py) back to the kernel's line.
        Some Triton versions (3.6) drop the call site from the SASS line table; the static view,
        read from LLVM IR, keeps it: take the one loop line that round-trips through shared memory."""
        if not kernel.file or same_file(file, kernel.file):
            return file, line, ""
        candidates = list(sites)
        if len(candidates) != 1:
            return file, line, f"; measured inside Triton's {Path(file).name}:{line}, call site unknown"
        return (
            *candidates[0],
            f"; measured inside Triton's {Path(file).name}:{line}, the kernel line from the static view",
        )

    def _from_rocprof(
        self, kernel: KernelProfile, counted: Evidence, evidence: list[Evidence], sites: Sites
    ) -> Finding:
        m = counted.metrics
        share = m.get("SQ_LDS_BANK_CONFLICT", 0.0) / m["SQ_LDS_IDX_ACTIVE"]
        metric = Metric(
            name=self.metric,
            value=round(share, 4),
            unit="of LDS active cycles stalled on bank conflicts (measured)",
            better="lower",
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=False, metric=metric)
        if share < self.options.min_share:
            return self.finding(
                False,
                f"{kernel.name}: {share:.0%} of LDS cycles are bank-conflict stalls "
                f"(threshold {self.options.min_share:.0%}).",
                **common,
            )
        return self.finding(
            True,
            f"{kernel.name} stalls {share:.0%} of its LDS cycles on bank conflicts "
            "(rocprofv3); lines from the static view.",
            severity="high" if share >= 0.5 else "medium",
            lines=self._static_lines(sites, evidence),
            **common,
        )

    def _from_static(self, kernel: KernelProfile, evidence: list[Evidence], sites: Sites) -> Finding:
        count = sum(n for n in sites.values())
        metric = Metric(
            name="shared_round_trips_in_loops",
            value=count,
            unit="shared-memory instructions per thread at loop lines that store and load shared memory (static)",
            better="lower",
        )
        common = dict(evidence_backend=self.backends(evidence), modelled=True, metric=metric)
        if not sites:
            return self.finding(
                False,
                f"{kernel.name}'s compiled code makes no round trip through shared memory "
                "inside a loop (static view; bank conflicts need ncu to be measured).",
                **common,
            )
        return self.finding(
            True,
            f"likely bank conflicts in {kernel.name}: {len(sites)} line(s) inside a loop "
            "exchange data through shared memory every iteration (static view, cuda "
            "targets). Only counters can confirm conflicts: run on an NVIDIA GPU with ncu.",
            severity="low",
            lines=self._static_lines(sites, evidence),
            **common,
        )

    def _static_lines(self, sites: Sites, evidence: list[Evidence]):
        return [
            source_line(
                file,
                line,
                f"{n} shared-memory instruction(s) per thread each iteration "
                "(a store and load round trip)"
                + self.compiled_at(evidence, file, line, ("shared_load", "shared_store")),
            )
            for (file, line), n in sites.items()
        ]


def _exchange_in_loop(kernel: KernelProfile, counted: Evidence, evidence: list[Evidence], sites: Sites) -> bool | None:
    """Whether the measured conflicts can come from inside a loop: the static view saw a round
    trip through shared memory at a loop line, or ncu put conflicts at one. None (unknown) when
    neither view could place them: no compiled facts and no conflict at a line of the kernel's file."""
    if sites:
        return True
    conflicted = [c for c in counted.lines if c.counters.get(EXCESS)]
    at_kernel = [c.line for c in conflicted if kernel.file and same_file(c.file, kernel.file)]
    if kernel.file and any(line in loop_lines(kernel.file, kernel.line) for line in at_kernel):
        return True
    compiled = any(f.target.startswith("cuda") for ev in evidence for f in ev.facts)
    placed = bool(conflicted) and len(at_kernel) == len(conflicted)  # none inside a helper with its call site lost
    return False if compiled or placed else None


_REDUCTIONS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}


def _reduction_lines(file: str) -> set[int]:
    """Lines whose every reduction folds a 1-D block to a scalar: across warps that passes one
    value per warp through shared memory, not a block exchange that bank conflicts come from.
    A reduction of a 2-D block along one axis (a column sum) does exchange a block: kept."""
    try:
        tree = ast.parse(Path(file).read_text())
    except (OSError, SyntaxError):
        return set()
    two_d: set[str] = set()
    assigns = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))), key=lambda n: n.lineno)
    for node in assigns:  # names bound to 2-D blocks, in source order (one pass is enough for straight code)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if _is_2d(node.value, two_d):
            two_d |= {t.id for t in targets if isinstance(t, ast.Name)}
    lines: dict[int, bool] = {}
    for call in (
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _REDUCTIONS and n.args
    ):
        scalar = not _is_2d(call.args[0], two_d)
        lines[call.lineno] = lines.get(call.lineno, True) and scalar
    return {line for line, scalar in lines.items() if scalar}


def _is_2d(expr: ast.AST, two_d: set[str]) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id in two_d:
            return True
        if isinstance(n, ast.Subscript) and any(
            isinstance(e, ast.Constant) and e.value is None
            for e in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice])
        ):
            return True
        if (
            isinstance(n, ast.Call)
            and n.args
            and isinstance(n.args[0], (ast.Tuple, ast.List))
            and len(n.args[0].elts) >= 2
            and getattr(n.func, "attr", "") in ("zeros", "full", "reshape", "view")
        ):
            return True
    return False


def _round_trips_in_loops(kernel: KernelProfile, evidence: list[Evidence]) -> Sites:
    """(file, line) -> shared instructions per thread, for kernel lines inside a loop that both
    store to and load from shared memory and issue no dot (operand staging is not an exchange).
    NVIDIA targets only: the AMDGCN line table puts inlined reductions at the helper's line."""
    if not kernel.file:
        return {}
    in_loop = loop_lines(kernel.file, kernel.line) - _reduction_lines(kernel.file)
    kinds: dict[tuple[str, int], dict[str, int]] = {}
    for ev in evidence:
        for f in ev.facts:
            if f.target.startswith("cuda") and f.line in in_loop:
                per = kinds.setdefault((f.file, f.line), {})
                per[f.kind] = per.get(f.kind, 0) + f.count
    return {
        where: k.get("shared_load", 0) + k.get("shared_store", 0)
        for where, k in sorted(kinds.items())
        if k.get("shared_load") and k.get("shared_store") and not k.get("mma")
    }
