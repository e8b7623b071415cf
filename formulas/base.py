"""The Formula extension point: one bottleneck, the evidence it needs, and a verdict."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from intelliperf.errors import UsageError
from intelliperf.models import Evidence, Finding, KernelProfile


class FormulaOptions(BaseModel):
    """A formula's options (`-O name=value`); unknown names are an error."""

    model_config = ConfigDict(extra="forbid")


OptionsT = TypeVar("OptionsT", bound=FormulaOptions)


class FormulaCatalog(Protocol):
    """The registered formulas as a formula sees them (a `Registry` is one): names and instances.

    Formulas that combine others (diagnoseOnly) look the others up through it; naming the
    protocol here, not the Registry, keeps this module free of the registry that loads formulas.
    """

    def names(self) -> list[str]: ...

    def create(self, name: str, **options) -> Formula: ...


class Formula(ABC, Generic[OptionsT]):
    """A bottleneck detector. Subclass it, set the class attributes, implement `diagnose`.

    Options go in a nested `class Options(Formula.Options)`; name it in the base for the type
    checker: `class Mine(Formula["Mine.Options"])` (a plain `Formula` base works as well).

    `diagnose` gets the kernel's profile and every evidence item gathered for it (the backend
    is named in each item) and returns a Finding. It must not raise for a kernel that simply
    lacks the bottleneck or the evidence: say so in the Finding.
    """

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    evidence: ClassVar[tuple[str, ...]] = ("interpreter-trace",)
    # Hardware counters per profiler backend ("ncu", "rocprofv3"), gathered when a GPU and the
    # profiler are there; a formula prefers them to the interpreter model and the static view.
    counters: ClassVar[dict[str, tuple[str, ...]]] = {}
    # Region timers (Proton instrumentation of the kernel, on a GPU): Evidence.regions.
    regions: ClassVar[bool] = False
    metric: ClassVar[str | None] = None  # the figure a fix must improve
    # Whether the metric without a GPU (the interpreter's trace, the static view) changes with num_warps and
    # num_stages; where not, the knob search moves neither without a GPU (an attempt its evidence cannot judge).
    sees_warps_offline: ClassVar[bool] = True
    problem: ClassVar[str] = ""  # what a rewriter is told the problem is
    techniques: ClassVar[tuple[str, ...]] = ()  # known fixes, for the rewriter
    # What the offline rewriters try for it: the recipe set of the recipes rewriter (a key of
    # intelliperf.rewriters.recipes.RECIPES; None: none), and whether the knob search sweeps num_warps x
    # num_stages through the kernel's autotuner first (a metric pipelining depth and warps move) or last.
    recipes: ClassVar[str | None] = None
    sweep_first: ClassVar[bool] = False

    class Options(FormulaOptions):
        """Subclassed by each formula that takes options."""

    options: OptionsT

    def __init__(self, **options) -> None:
        try:
            self.options = cast(OptionsT, self.Options(**options))
        except ValidationError as exc:
            fields = ", ".join(self.Options.model_fields) or "(none)"
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UsageError(
                f"bad options for formula {self.name!r}: {problems}", hint=f"Options it takes: {fields}."
            ) from None

    @abstractmethod
    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        """Whether `kernel` has this formula's bottleneck, on the given evidence."""

    def evaluate(self, kernel: KernelProfile, evidence: list[Evidence], registry: FormulaCatalog) -> list[Finding]:
        """All findings this formula reports for a kernel (one, unless it combines formulas)."""
        return [self.diagnose(kernel, evidence)]

    def needs(self, registry: FormulaCatalog) -> set[str]:
        """The evidence backends to gather before this formula can judge a kernel."""
        return set(self.evidence)

    def wants_regions(self, registry: FormulaCatalog) -> bool:
        """Whether to run the region-timer pass (Proton) for this formula on a GPU."""
        return self.regions

    def counter_metrics(self, registry: FormulaCatalog, backend: str) -> list[str]:
        """The metrics to collect with `backend` for this formula."""
        return list(self.counters.get(backend, ()))

    @staticmethod
    def num_warps(kernel: KernelProfile) -> int | None:
        """Warps per program of the kernel's most used launch signature (None: not recorded)."""
        return kernel.signatures[0].num_warps if kernel.signatures else None

    @staticmethod
    def counter_evidence(evidence: list[Evidence]) -> Evidence | None:
        """The hardware counters among the evidence, when a profiler pass gathered them."""
        return next((ev for ev in evidence if not ev.modelled and ev.metrics), None)

    def finding(self, present: bool, explanation: str, **fields) -> Finding:
        """A Finding with this formula's name filled in."""
        fields.setdefault("severity", "none")
        return Finding(formula=self.name, present=present, explanation=explanation, **fields)

    @staticmethod
    def backends(evidence: list[Evidence]) -> str:
        """The backends that actually contributed, e.g. 'interpreter-trace+static'."""
        return (
            "+".join(ev.backend for ev in evidence if ev.sites or ev.facts or ev.programs_sampled or ev.metrics)
            or "none"
        )

    @staticmethod
    def compiled_at(evidence: list[Evidence], file: str, line: int, kinds: tuple[str, ...]) -> str:
        """What the static view saw at a kernel line, per target: '; compiled: cuda:90 8x atom...'."""
        per_target: dict[str, list[str]] = {}
        for ev in evidence:
            for f in ev.facts:
                if f.line == line and f.kind in kinds and same_file(f.file, file):
                    width = f" ({f.width_bits}-bit)" if f.width_bits else ""
                    per_target.setdefault(f.target, []).append(f"{f.count}x {f.instruction}{width}")
        if not per_target:
            return ""
        return "; compiled: " + "; ".join(f"{t} {', '.join(v)}" for t, v in per_target.items())

    def no_evidence(self, kernel: KernelProfile) -> Finding:
        # The first backend named is the one the formula judges on; the others add detail.
        return self.finding(
            False, f"no {self.evidence[0]} evidence was gathered for {kernel.name}, so this formula cannot judge it"
        )


def same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b) or os.path.basename(a) == os.path.basename(b)
