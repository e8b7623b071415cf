"""What a validation returns: a verdict with reasons a person and a rewriter can act on."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ProblemKind = Literal[
    "crash", "timeout", "not-launched", "dispatch-count", "side-stream", "shape", "dtype", "missing-output",
    "mismatch", "nan", "inf", "all-zero", "unwritten", "precision", "stale-result", "replay-failed", "slower",
    "not-faster", "implausible-speed", "capture", "unverified", "race", "aliased-output", "policy", "sanitizer",
]


class Difference(BaseModel):
    index: list[int]
    reference: float
    candidate: float


class Problem(BaseModel):
    """One reason the candidate is rejected."""

    kind: ProblemKind
    message: str
    dispatch: int | None = None
    buffer: str | None = None
    elements: int | None = Field(None, description="elements that differ")
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    examples: list[Difference] = []


class Speedup(BaseModel):
    """Reference time / candidate time, with a bootstrap interval over interleaved pairs."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.95
    reference_ms: float
    candidate_ms: float
    pairs: int
    method: str


class Verdict(BaseModel):
    correct: bool
    faster: bool | None = Field(None, description="None: speed was not measured (no GPU, or not correct)")
    accepted: bool = False
    speedup: Speedup | None = None
    problems: list[Problem] = []
    checks: list[str] = Field([], description="what was compared, for the report and the PR body")
    notes: list[str] = []
    seconds: dict[str, float] = {}

    def reasons(self) -> str:
        """The problems as text for the next rewrite attempt."""
        return "\n".join(f"- [{p.kind}] {p.message}" for p in self.problems)
