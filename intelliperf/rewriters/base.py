"""The Rewriter extension point: a request with everything an engineer would want, a candidate back.

A rewriter never touches files. It returns new text for the kernel and, if it must, for the
launcher and for the code beside them (more kernels, helpers, constants); the optimize loop
splices them into a copy of the project, checks that nothing else changed and that the code
stays within the source policy, and validates the result. A rewriter with nothing (more) to offer returns a declined
Candidate with its reason, so the loop can say why it moved on.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from intelliperf.models import AccessSite, CandidateKind, Evidence, Finding, KernelProfile

from .source import CodeUnit


class HardwareFacts(BaseModel):
    device: str
    sm_count: int | None = None
    memory_bandwidth_gb_s: float | None = Field(None, description="measured device-to-device copy")
    shared_memory_per_sm_kb: float | None = None
    warp_size: int = 32
    note: str = ""

    def describe(self) -> str:
        parts = [self.device]
        parts += [f"{self.sm_count} SMs"] if self.sm_count else []
        parts += [f"{self.memory_bandwidth_gb_s:.0f} GB/s copy bandwidth"] if self.memory_bandwidth_gb_s else []
        if self.shared_memory_per_sm_kb:
            parts.append(f"{self.shared_memory_per_sm_kb:.0f} KiB shared memory per SM")
        parts.append(f"warp size {self.warp_size}")
        return ", ".join(parts) + (f" ({self.note})" if self.note else "")


class PastAttempt(BaseModel):
    """What the next rewrite learns from an earlier one."""

    number: int
    rewriter: str
    title: str
    outcome: str  # accepted / rejected / invalid
    reasons: str = ""
    diff: str | None = Field(None, description="the change that was tried, as a unified diff")
    chosen: dict | None = Field(None, description="a sweep's result: the config its autotuner chose")


class RewriteRequest(BaseModel):
    kernel: CodeUnit
    launcher: CodeUnit | None = Field(None, description="None when the launcher cannot be rewritten on its own")
    profile: KernelProfile
    finding: Finding
    formula: str
    formula_sees_warps: bool = Field(
        True, description="whether the formula's metric without a GPU changes with num_warps and num_stages"
    )
    problem: str
    techniques: list[str]
    metric: str | None
    hardware: HardwareFacts
    sites: list[AccessSite] = Field(default_factory=list, description="the kernel's traced memory-op lines")
    launch: dict = Field(
        default_factory=dict,
        description="the first captured launch: grid, options, args; written: the pointer arguments the kernel writes",
    )
    history: list[PastAttempt] = Field(default_factory=list)
    recipes: str | None = Field(None, description="the formula's recipe set (Formula.recipes; None: none)")
    sweep_first: bool = Field(False, description="the knob search sweeps warps and stages first (Formula.sweep_first)")
    evidence: list[Evidence] = Field(
        default_factory=list,
        description="the diagnosis's evidence for the kernel: static view, counters, region timers",
    )

    def constexprs(self) -> dict[str, object]:
        """The constexpr values of the most used launch signature."""
        if not self.profile.signatures:
            return {}
        return {a.name: a.value for a in self.profile.signatures[0].args if a.kind == "constexpr"}


class Candidate(BaseModel):
    rewriter: str
    title: str = Field(description="one line: what changed")
    rationale: str = ""
    kernel: str | None = Field(None, description="new text of the kernel function; None: unchanged")
    launcher: str | None = Field(None, description="new text of the launcher function; None: unchanged")
    module: str | None = Field(
        None,
        description="new or changed top-level code beside the kernel, in the kernel's file: more @triton.jit "
        "kernels and helpers, Python helpers the launcher calls, module constants; None: none",
    )
    declined: str | None = Field(None, description="why this rewriter has no candidate to offer")
    invalid: str | None = Field(None, description="why the answer cannot be applied (e.g. a syntax error)")
    invalid_kind: CandidateKind = Field(
        "scope", description="with `invalid`: no requested fields, not Python, more than the kernel, no change"
    )
    sweep: bool = Field(
        False,
        description="a screen, never a fix: the kernel under @triton.autotune over many "
        "configs, run to learn which one its autotuner chooses on this device",
    )
    tokens: int = 0
    answer: dict = Field(default_factory=dict, description="the raw answer, for transcripts")

    @classmethod
    def decline(cls, rewriter: str, reason: str) -> Candidate:
        return cls(rewriter=rewriter, title="no candidate", declined=reason)


class RewriterOptions(BaseModel):
    """A rewriter's options; unknown names are an error."""

    model_config = ConfigDict(extra="forbid")


OptionsT = TypeVar("OptionsT", bound=RewriterOptions)


class Rewriter(ABC, Generic[OptionsT]):
    """Subclass, set `name`, implement `rewrite`. Options go in a nested
    `class Options(Rewriter.Options)`, named in the base for the type checker:
    `class Mine(Rewriter["Mine.Options"])`."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""  # one line for `intelliperf rewriters`

    class Options(RewriterOptions):
        """Subclassed by each rewriter that takes options."""

    options: OptionsT

    def __init__(self, options: OptionsT | None = None) -> None:
        self.options = options if options is not None else cast(OptionsT, self.Options())

    @abstractmethod
    def rewrite(self, request: RewriteRequest) -> Candidate:
        """One candidate for the request (or a declined one)."""

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        """Best-of-N: `n` candidates for one round. Deterministic rewriters return one."""
        return [self.rewrite(request)]

    def next_untried(self, request: RewriteRequest, n: int) -> list[Candidate]:
        """Up to `n` different candidates from a rewriter that skips what its history says it tried:
        each is asked for with the ones before it marked as tried (a decline ends the list, and is
        returned alone when it comes first)."""
        out: list[Candidate] = []
        for _ in range(n):
            pending = [PastAttempt(number=0, rewriter=self.name, title=c.title, outcome="pending") for c in out]
            cand = self.rewrite(request.model_copy(update={"history": request.history + pending}))
            if cand.declined:
                return out or [cand]
            out.append(cand)
        return out
