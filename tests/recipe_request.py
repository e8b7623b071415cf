"""The RewriteRequest the optimize loop hands a recipe, built for the recipe tests from real code units,
and the recipe's answer applied to its program as the loop applies a candidate."""

from __future__ import annotations

from pathlib import Path

from intelliperf.formulas import default_registry
from intelliperf.models import Finding, KernelProfile, LaunchSignature
from intelliperf.optimization.apply import apply_candidate
from intelliperf.rewriters.base import Candidate, HardwareFacts, RewriteRequest
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
        recipes=found.recipes,
        hardware=HardwareFacts(device="test", sm_count=sm_count),
    )


def applied(
    request: RewriteRequest, tmp_path: Path, kernel: str, launcher: str | None = None, module: str | None = None
) -> Path:
    """The program with a recipe's kernel, launcher and code beside the kernel applied by the optimize
    loop's own `apply_candidate` (source policy, scope, no new imports), written to `tmp_path`."""
    cand = Candidate(rewriter="recipes", title="test", kernel=kernel, launcher=launcher, module=module)
    originals = {request.kernel.relpath: Path(request.kernel.file).read_text()}
    texts = apply_candidate(originals, request.kernel, request.launcher, cand)
    path = tmp_path / Path(request.kernel.file).name
    path.write_text(texts[request.kernel.relpath])
    return path
