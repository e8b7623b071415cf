"""The timing's judgement of its own workload (validators/timing.py): a reference timed on lighter data
than the program's profile is not a speedup anyone can quote."""

from __future__ import annotations

from intelliperf.validators.runs.timing import another_workload


def test_a_reference_timed_far_below_its_profile_is_another_workload():
    # Liger's embedding backward on an H100: 3.009 ms per launch in the program (ids that repeat a padding
    # id, so atomics contend), 0.433 ms on fresh uniform ids
    problem = another_workload([0.433, 0.431, 0.436], 3.009e-3)
    assert problem is not None and problem.kind == "unverified"
    assert "0.433 ms" in problem.message and "3.009 ms" in problem.message


def test_a_reference_timed_at_or_above_its_profile_is_the_same_workload():
    assert another_workload([0.0261, 0.0262], 0.0240e-3) is None  # the flush and the launcher's own work add
    assert another_workload([0.9, 1.0, 1.1], 1.9e-3) is None  # within 2x below: noise and caches, not data
    assert another_workload([0.5], None) is None  # no profile (the validators' API on their own)


def test_a_microsecond_kernel_whose_profile_holds_the_launch_overhead_is_not_another_workload():
    """The profile's event-timed launch adds about 10 us (H100: vLLM's bmm 17.4 us profiled, 6.7 us timed):
    under that slack the ratio says nothing; past it the same ratio still does."""
    assert another_workload([0.0067, 0.0068], 0.0174e-3) is None
    assert another_workload([0.0047], 0.0166e-3) is None
    assert another_workload([0.04], 0.1e-3) is not None  # 60 us apart: more than the profile adds
