"""`--formula auto`: the bottlenecks found, weighed by their kernel's share of the time and their severity."""

from __future__ import annotations

from intelliperf.models import Finding, KernelDiagnosis, KernelProfile, Report, RunInfo
from intelliperf.priorities import chosen_note, ranked_bottlenecks


def _kernel(name: str, share: float) -> KernelProfile:
    return KernelProfile(
        id=f"{name}@k.py:1", name=name, file="k.py", line=1, launches=1, timed_launches=1,
        total_time_s=share, mean_time_s=share, share=share, signatures=[],
    )  # fmt: skip


def _found(formula: str, severity: str, present: bool = True) -> Finding:
    return Finding(formula=formula, present=present, severity=severity, explanation="x")


def _report(diagnoses: dict[str, list[Finding]], shares: dict[str, float]) -> Report:
    run = RunInfo(command=["python", "p.py"], cwd="/", mode="interpreter", device="cpu", time_source="wall",
                  duration_s=1.0, processes=1, launches=2, versions={})  # fmt: skip
    return Report(
        tool_version="0", created="now", formula="diagnoseOnly", run=run,
        kernels=[_kernel(n, s) for n, s in shares.items()], top=list(shares), selected=None,
        diagnoses=[KernelDiagnosis(kernel=k, rank=i + 1, findings=f, evidence=[]) for i, (k, f) in
                   enumerate(diagnoses.items())],
    )  # fmt: skip


def test_a_medium_bottleneck_in_the_hot_kernel_outweighs_a_high_one_in_a_cold_kernel():
    report = _report(
        {
            "hot": [_found("laneUtilization", "medium"), _found("atomicContention", "none", present=False)],
            "cold": [_found("atomicContention", "high")],
        },
        {"hot": 0.8, "cold": 0.2},
    )
    ranked = ranked_bottlenecks(report)
    assert [(k, f.formula) for _, k, f in ranked] == [("hot", "laneUtilization"), ("cold", "atomicContention")]
    assert ranked[0][0] == 0.8 * 2 and ranked[1][0] == 0.2 * 3
    note = chosen_note(ranked)
    assert (
        note.startswith("--formula auto: fixing laneUtilization in hot (medium") and "atomicContention in cold" in note
    )


def test_nothing_present_ranks_nothing():
    report = _report({"k": [_found("memoryAccess", "none", present=False)]}, {"k": 1.0})
    assert ranked_bottlenecks(report) == []
