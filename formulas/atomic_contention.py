"""atomicContention: atomics that update the same address one after another.

The hardware serialises atomics to one address, so an `atomic_add` where a whole block adds
into one cell runs one lane at a time. The textbook fix reduces inside the program first
(`tl.sum`, a privatised histogram) and issues one atomic per program and address.

Between programs, a subset of the grid can queue on the same addresses (split-K partials, the
programs of one lock, a frequent token's gradient row): the trace estimates, from a sample of
programs that cannot alias with the index structure, how many other programs of the grid
update each address an op updates.

The metric is the work that serialises: atomic updates landing on the most-updated address in one launch,
estimated over the grid from the sampled programs. It moves only when updates go away (a reduction in the
program, a privatised table, partials), never with the block size alone.

Evidence: the interpreter trace measures the depth (lanes per address in one call), which no
hardware counter reports. With Nsight Compute the finding adds what the hardware saw: atomic
instructions executed and L2 atomic requests for the kernel, and per flagged line the share of
the kernel's warp-stall samples that sit at its atomic instructions (the time it costs).
"""

from __future__ import annotations

from pydantic import Field

from intelliperf.models import AccessSite, Evidence, Finding, KernelProfile, Metric
from intelliperf.pinpoint import source_line

from .base import Formula, same_file


class AtomicContention(Formula["AtomicContention.Options"]):
    name = "atomicContention"
    recipes = "atomicContention"  # (rewriters/recipes.py)
    summary = "many lanes of one atomic instruction update the same address and are serialised"
    evidence = ("interpreter-trace", "static")
    counters = {
        "ncu": (
            "smsp__sass_inst_executed_op_global_atom.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
            "lts__t_requests_op_atom.sum",
            "lts__t_sectors_op_atom.sum",
            "gpu__time_duration.sum",
        ),
        "rocprofv3": ("TCP_TCC_ATOMIC_WITH_RET_REQ_sum", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum", "TCC_ATOMIC_sum"),
    }
    metric = "atomic_updates_per_address"
    sees_warps_offline = False  # (addresses per program and per launch: no warps in them)
    problem = (
        "Lanes of a single atomic instruction update the same memory address, so the hardware applies "
        "them one after another."
    )
    techniques = (
        "reduce within the program first (tl.sum / tl.reduce) and issue one atomic per program",
        "privatise: accumulate a per-program histogram (tl.histogram or a local table) and add it once per bin",
        "spread the updates over several copies of the target and combine them in a second, small pass",
        "sum runs first: where neighbouring lanes update the same address (sorted or repeated indices), a "
        "segmented scan (tl.associative_scan over (run started, value), runs found by comparing each lane's "
        "address with its neighbours' via tl.gather) sums each run, and only a run's last lane issues the atomic",
        "per-program partials plus a reduce step: when every program adds into the same cells (a norm "
        "backward's dW), each program sums several rows in registers and writes one partial row, reduced by a "
        "second kernel or by torch in the launcher",
    )

    class Options(Formula.Options):
        min_depth: int = Field(4, ge=2, description="lanes per address in one atomic call at which a line is flagged")
        min_programs: float = Field(
            4,
            ge=1,
            description="other programs updating the same address (estimated over the grid) at which a line is flagged",
        )
        min_atomic_share: float = Field(
            0.1,
            ge=0,
            le=1,
            description="every program adding into the same cells: the atomic's lanes over the program's loaded "
            "lanes at which it is flagged",
        )

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        traced = [ev for ev in evidence if ev.sites or ev.programs_sampled]
        if not traced:
            return self.no_evidence(kernel)
        atomics = [(ev, s) for ev in traced for s in ev.sites if s.is_atomic]
        if not atomics:
            return self.finding(
                False,
                f"{kernel.name} issues no atomic operation.",
                evidence_backend=traced[0].backend,
                modelled=traced[0].modelled,
            )
        worst_ev, worst = max(atomics, key=lambda pair: pair[1].lanes_per_address_max or 0)
        depth = worst.lanes_per_address_max or 0
        flagged = [(ev, s) for ev, s in atomics if (s.lanes_per_address_max or 0) >= self.options.min_depth]
        across = [(ev, s) for ev, s in atomics if (ev, s) not in flagged and self._between_programs(ev, s)]
        # the work that serialises, whatever the block: updates landing on one address in a launch, lanes of a
        # call and programs of the grid alike (a block half the size halves the lanes per call, not this)
        updates = max((s.updates_per_address or s.lanes_per_address_max or 0) for _, s in atomics)
        metric = Metric(name=self.metric, value=updates, unit="atomic updates per address per launch", better="lower")
        common = dict(metric=metric, evidence_backend=self.backends(evidence), modelled=worst_ev.modelled)
        if not flagged and across:
            return self._across(kernel, across, evidence, common)
        if not flagged:
            most = max((s.other_programs_per_address or 0 for _, s in atomics), default=0)
            return self.finding(
                False,
                f"Every atomic in {kernel.name} updates at most {depth} address(es) per lane group "
                f"(threshold {self.options.min_depth}): no contention within an instruction; between programs "
                f"at most {most:.0f} other program(s) update an address (threshold "
                f"{self.options.min_programs:g}), or every program adds once into a few shared cells (the "
                "reduce-then-atomic form).",
                **common,
            )
        severity = "high" if depth >= 32 else "medium" if depth >= 8 else "low"
        counted = self.counter_evidence(evidence)
        lines = [
            source_line(
                s.file,
                s.line,
                _detail(ev, s)
                + _measured_at(counted, s.file, s.line)
                + self.compiled_at(evidence, s.file, s.line, ("atomic",)),
            )
            for ev, s in flagged
        ]
        return self.finding(
            True,
            f"{len(flagged)} atomic line(s) of {kernel.name} serialise: at worst {depth} lanes of one "
            f"{worst.op} call update the same address of `{worst.buffer or '?'}`, so they run one after "
            f"another. {_within_fix(worst)}" + _measured(counted),
            severity=severity,
            lines=lines,
            **common,
        )

    def _between_programs(self, ev: Evidence, s: AccessSite) -> bool:
        """Programs of the grid queue on the same addresses, with a lock or a vector of atomics
        (two or more cells: one cell hit by many lanes of a call is min_depth's case). A subset of
        the grid sharing cells (split-K partials, the rows of one lock, a frequent token's row) is
        flagged; when every program adds into the same cells, only where those adds are a real part
        of each program's memory work (a norm backward adding its row's dW): a privatised table
        added once beside many more loads, or one scalar per program, is the reduce-then-atomic
        form this formula recommends."""
        others = s.other_programs_per_address or 0
        if others < self.options.min_programs:
            return False
        if s.op in ("atomic_cas", "atomic_xchg"):
            return True
        if (s.distinct_addresses or 0) < 2:
            return False
        whole_grid = bool(ev.programs_total) and others >= 0.5 * (ev.programs_total - 1)
        return not whole_grid or _atomic_share(ev, s) >= self.options.min_atomic_share

    def _across(self, kernel: KernelProfile, across: list, evidence: list[Evidence], common: dict) -> Finding:
        counted = self.counter_evidence(evidence)
        worst_ev, worst = max(across, key=lambda pair: pair[1].other_programs_per_address or 0)
        others = worst.other_programs_per_address or 0
        lines = [
            source_line(
                s.file,
                s.line,
                _across_detail(ev, s)
                + _measured_at(counted, s.file, s.line)
                + self.compiled_at(evidence, s.file, s.line, ("atomic",)),
            )
            for ev, s in across
        ]
        fix = (
            "a lock serialises the programs that share it: give each program its own partial buffer and "
            "reduce them in a second pass"
            if worst.op in ("atomic_cas", "atomic_xchg")
            else "accumulate per-program partials (or sort/segment the updates) and reduce them in a second, small "
            "pass, or shrink the split so fewer programs update each address"
        )
        return self.finding(
            True,
            f"{len(across)} atomic line(s) of {kernel.name} serialise between programs ({_kind(worst, worst_ev)}): "
            f"about {others:.0f} other "
            f"programs of the grid update each address that one {worst.op} updates (estimated from "
            f"{worst_ev.programs_sampled} sampled programs of {worst_ev.programs_total}), so their updates queue at "
            f"the memory. Fix: {fix}." + _measured(counted),
            severity="high" if others >= 32 else "medium",
            lines=lines,
            **common,
        )


def _atomic_share(ev: Evidence, s: AccessSite) -> float:
    """The atomic's lanes per program over the lanes the program loads: how much of its memory work
    queues behind other programs."""
    loaded = sum(x.lanes for x in ev.sites if x.op == "load") / max(ev.programs_sampled, 1)
    return (s.lanes_per_program or 0) / loaded if loaded else 1.0


def _across_detail(ev: Evidence, s: AccessSite) -> str:
    return (
        f"{s.op} on `{s.buffer or '?'}`: about {s.other_programs_per_address:.0f} other programs update each "
        f"address it updates ({s.lanes_per_program:.0f} lanes per program; {s.distinct_addresses} distinct "
        f"address(es) over {ev.programs_sampled} sampled programs)"
    )


def _kind(s: AccessSite, ev: Evidence) -> str:
    if s.op in ("atomic_cas", "atomic_xchg"):
        return "a lock"
    if ev.programs_total and (s.other_programs_per_address or 0) >= 0.5 * (ev.programs_total - 1):
        return "every program adds into the same cells"
    return "a subset of the programs adds into the same cells"


def _detail(ev: Evidence, s: AccessSite) -> str:
    per_call = s.lanes / max(s.calls, 1)
    return (
        f"{s.op} on `{s.buffer or '?'}`: {s.lanes_per_address_max} of {per_call:.0f} lanes per call hit one "
        f"address (mean {s.lanes_per_address_mean:.1f}); {s.distinct_addresses} distinct address(es) over "
        f"{ev.programs_sampled} sampled programs, up to {s.ops_per_address_max} atomic ops on one"
    )


def _measured(counted: Evidence | None) -> str:
    if counted is None:
        return ""
    m = counted.metrics
    parts = [
        f"{m[k]:,.0f} {label}"
        for k, label in (
            ("smsp__sass_inst_executed_op_global_atom.sum", "atomic warp instructions"),
            ("lts__t_requests_op_atom.sum", "L2 atomic requests"),
            ("TCC_ATOMIC_sum", "L2 atomics"),
        )
        if k in m
    ]
    return f" Measured by {counted.backend}: {', '.join(parts)}." if parts else ""


def _measured_at(counted: Evidence | None, file: str, line: int) -> str:
    """The share of the kernel's warp-stall samples at this line's instructions (ncu)."""
    if counted is None or not counted.lines:
        return ""
    samples = "Warp Stall Sampling (All Samples)"
    total = sum(c.counters.get(samples, 0.0) for c in counted.lines)
    here = next((c for c in counted.lines if c.line == line and same_file(c.file, file)), None)
    if not total or here is None:
        return ""
    return f"; measured: {here.counters.get(samples, 0.0) / total:.0%} of the kernel's warp-stall samples at this line"


def _within_fix(site: AccessSite) -> str:
    """The fix for lanes of one call sharing addresses: one address for all, a few bins, or runs."""
    if site.one_address_per_call():
        return "Reduce the block within the program first and issue one atomic per program."
    return (
        "Combine the lanes that share an address in the program first, then issue one atomic per address: "
        "a per-program histogram (tl.histogram) for a few bins, or, where neighbouring lanes share an "
        "address (sorted or repeated indices), a segmented sum of each run."
    )
