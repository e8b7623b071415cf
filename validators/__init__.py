"""Validators: correctness and timing verdicts for candidate kernels (`intelliperf.validators`).

    reference = capture_reference(Program(root, command), "my_kernel", interpret=False, work_dir=d)
    verdict = validate(reference, Program(copy, command), settings=ValidationSettings())
    # every run in a bubblewrap sandbox; ValidationSettings(sandbox=SandboxSettings(enabled=False)) opts out
    verdict.correct, verdict.faster, verdict.accepted, verdict.problems, verdict.speedup

Arranged by where the code runs:

    validate, replay_checks, correctness, compare, workload, settings, verdict
                intelliperf's process: the steps in order, every comparison and decision, what a
                validation is told and returns (the workers borrow compare's and correctness's helpers)
    runs/       intelliperf's process: the reference run, the workers started beside a candidate,
                the sanitizer and timing runs and what their answers say
    workers/    the replay, sanitizer and timing workers (`python -m intelliperf.validators.workers.replay`)
    inside/     the user's program: the output capture the bootstrap attaches to the recorder
    gate/       before anything runs: the source policy candidate code is held to

Parts import one way only (tests/unit/test_layers.py): runs/ uses workers/ and inside/, never the other
way. Imports only torch, triton, numpy and pydantic (never the LLM stack): it runs on GPU workers.
"""

if __name__ != "intelliperf.validators":  # this folder imported from the repository root as a top-level package
    raise ImportError(
        f"{__name__}: this folder is the package intelliperf.validators; import that (a top-level "
        "`validators` would be a second copy whose classes are not intelliperf's)"
    )


from intelliperf.workload.workspace import copy_project

from .compare import Tolerances, compare_buffer
from .runs.head_starts import CandidateLayout, HeadStarts, start_head_starts
from .runs.performance import judge, speedup_interval
from .runs.reference import ReferenceRun, capture_reference
from .settings import Program, SandboxSettings, ValidationSettings
from .validate import validate
from .verdict import Problem, Speedup, Verdict

__all__ = [
    "CandidateLayout",
    "HeadStarts",
    "Problem",
    "Program",
    "ReferenceRun",
    "SandboxSettings",
    "Speedup",
    "Tolerances",
    "ValidationSettings",
    "Verdict",
    "capture_reference",
    "compare_buffer",
    "copy_project",
    "judge",
    "speedup_interval",
    "start_head_starts",
    "validate",
]
