"""`--formula auto`: the bottlenecks found, weighed by their kernel's share of the time and their severity."""

from __future__ import annotations

import sys

import pytest

from intelliperf.api import diagnose
from intelliperf.diagnosis.priorities import chosen_note, launch_bound, ranked_bottlenecks
from intelliperf.models import (
    AccessSite,
    ArgInfo,
    Evidence,
    Finding,
    KernelDiagnosis,
    KernelProfile,
    LaunchSignature,
    Report,
    RunInfo,
)


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


def _launched(elements: int, mean_time_s: float = 0.0) -> KernelProfile:
    x = ArgInfo(name="x_ptr", kind="tensor", dtype="float32", shape=[elements])
    out = ArgInfo(name="out_ptr", kind="tensor", dtype="float32", shape=[elements])
    sig = LaunchSignature(grid=[1, 1, 1], args=[x, out], launches=1, total_time_s=mean_time_s)
    return _kernel("k", 1.0).model_copy(update={"signatures": [sig], "mean_time_s": mean_time_s})


def test_a_launch_with_less_work_than_its_launch_costs_is_launch_bound():
    """4,096 floats in and out are 32 KiB, about 0.01 us of an H100's copy rate: launch-bound under the
    interpreter; 16M of them are 128 MiB, about 45 us: not. On a GPU the measured time decides."""
    small = launch_bound(_launched(4096), interpreted=True)
    assert small is not None and small.startswith("launch-bound: its tensors hold 32,768 bytes")
    assert launch_bound(_launched(1 << 24), interpreted=True) is None
    assert "runs 2.5 us per launch" in (launch_bound(_launched(1 << 24, 2.5e-6), interpreted=False) or "")
    assert launch_bound(_launched(4096, 40e-6), interpreted=False) is None


def test_atomic_updates_of_one_address_take_turns_and_count_as_work():
    """1M floats summed into one address move 4 MiB (1.4 us at copy rate), but the million updates wait for
    each other: not launch-bound. The same sum with 1,024 updates per address is."""

    def traced(updates: float) -> Evidence:
        site = AccessSite(
            file="k.py", line=3, op="atomic_add", is_atomic=True, elem_bytes=4, calls=1, lanes=1024,
            bytes_requested=4096, sectors=128, sector_efficiency=1.0, updates_per_address=updates,
        )  # fmt: skip
        return Evidence(backend="interpreter-trace", modelled=True, kernel="k", sites=[site])

    kernel = _launched(1 << 19)
    assert launch_bound(kernel, True, [traced(1 << 20)]) is None
    bound = launch_bound(kernel, True, [traced(1024)]) or ""
    assert bound.startswith("launch-bound") and "1,024 atomic updates of one address taking turns" in bound


def test_auto_leaves_idle_lanes_of_a_launch_bound_kernel_and_keeps_its_atomics():
    report = _report({"k": [_found("laneUtilization", "high"), _found("atomicContention", "low")]}, {"k": 1.0})
    report.diagnoses[0].launch_bound = "launch-bound: ..."
    assert [f.formula for _, _, f in ranked_bottlenecks(report)] == ["atomicContention"]


@pytest.mark.slow
def test_diagnose_says_a_small_programs_kernel_is_launch_bound(tmp_path):
    """A real program at a test's size: a 4,096-element copy under the interpreter."""
    program = tmp_path / "small_copy.py"
    program.write_text(
        "import torch, triton, triton.language as tl\n\n\n"
        "@triton.jit\ndef copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n\n"
        "x = torch.randn(4096)\nout = torch.empty_like(x)\ncopy_kernel[(4,)](x, out, 4096, BLOCK=1024)\n"
    )
    report = diagnose([sys.executable, str(program)], device="cpu", formula="laneUtilization")
    assert (report.diagnoses[0].launch_bound or "").startswith("launch-bound: its tensors hold 32,768 bytes")
