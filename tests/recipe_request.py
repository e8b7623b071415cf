"""The RewriteRequest the optimize loop hands a recipe, built for the recipe tests from real code units."""

from __future__ import annotations

from intelliperf.formulas import default_registry
from intelliperf.models import Finding, KernelProfile, LaunchSignature
from intelliperf.rewriters.base import HardwareFacts, RewriteRequest
from intelliperf.rewriters.source import CodeUnit


def recipe_request(
    kernel: CodeUnit,
    launcher: CodeUnit | None,
    formula: str,
    signature: LaunchSignature | None = None,
    sm_count: int | None = None,
) -> RewriteRequest:
    """`formula` found in `kernel`, its first launch `signature` (None: nothing recorded); the problem,
    techniques and metric are the formula's own."""
    profile = KernelProfile(
        id=f"{kernel.name}@{kernel.relpath}:{kernel.line}",
        name=kernel.name,
        file=kernel.file,
        line=kernel.line,
        launches=1,
        timed_launches=1,
        total_time_s=1e-3,
        mean_time_s=1e-3,
        share=1.0,
        signatures=[signature] if signature else [],
    )
    found = default_registry().get(formula)
    return RewriteRequest(
        kernel=kernel,
        launcher=launcher,
        profile=profile,
        finding=Finding(formula=formula, present=True, severity="high", explanation=found.problem),
        formula=formula,
        problem=found.problem,
        techniques=list(found.techniques),
        metric=found.metric,
        hardware=HardwareFacts(device="test", sm_count=sm_count),
    )
