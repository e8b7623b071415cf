"""What the report says of the bottleneck where the winner's own run gave the formula no evidence: no after-value
and no "removed", in the console line, report.md and the PR body alike."""

from __future__ import annotations

from intelliperf.delivery.report import bottleneck_claim
from intelliperf.formulas.overlap import Overlap
from intelliperf.models import Attempt, KernelProfile, Measure, Optimization
from intelliperf.optimization.measure import measure
from intelliperf.optimization.verdict import removed

PROFILE = KernelProfile(
    id="gemm_kernel@gemm.py:18", name="gemm_kernel", file="gemm.py", line=18, launches=1, timed_launches=1,
    total_time_s=0.5, mean_time_s=0.5, share=1.0, signatures=[],
)  # fmt: skip


def _won(after: Measure) -> Optimization:
    before = Measure(metric=0.42, metric_name="synchronous_load_share", metric_unit="of the loop's loads", present=True)
    attempt = Attempt(number=1, rewriter="search", title="num_stages=3", status="accepted", before=before, after=after)
    opt = Optimization(
        kernel="gemm_kernel", formula="overlap", rewriters=["search"], status="won", budget={}, baseline=before,
        attempts=[attempt], winner=1,
    )  # fmt: skip
    opt.bottleneck_removed = removed(attempt)
    return opt


def test_a_winner_whose_run_gave_the_formula_no_evidence_claims_no_after_value():
    """overlap's own answer for a kernel it has no evidence of (no static view and no region timers in the
    winner's run): neither present nor absent, and the claim says it was not re-diagnosed."""
    unjudged = Overlap().no_evidence(PROFILE)
    after = measure(unjudged, PROFILE, "wall time (interpreter)")
    assert after.metric is None and after.present is None
    opt = _won(after)
    claim = bottleneck_claim(opt)
    assert opt.bottleneck_removed is None
    assert claim.startswith("not re-diagnosed (the overlap formula had no evidence from the winner's run)"), claim
    assert claim.endswith("synchronous_load_share 0.42 -> ? of the loop's loads") and "removed" not in claim


def test_the_claim_follows_the_re_diagnosis_not_the_metric():
    """A metric that moved but a finding still present is "improved, still present"; absent is "removed"."""
    still = Measure(metric=0.2, metric_name="synchronous_load_share", present=True, severity="medium")
    opt = _won(still)
    opt.attempts[0].metric_improved = True
    assert bottleneck_claim(opt).startswith("improved, still present (medium): synchronous_load_share 0.42 -> 0.2")
    gone = _won(Measure(metric=0.0, metric_name="synchronous_load_share", present=False, severity="none"))
    assert gone.bottleneck_removed is True and bottleneck_claim(gone).startswith("removed: the overlap formula finds")
