"""What the parent asks of a worker that runs program code (replay, sanitizer and timing workers):
the job, written as job.json into the worker's folder. Its inner descriptions (kernel, launcher,
launch, plan) are the capture's manifest entries as `capture.describe_*` writes them. A worker's
answers are checked by the parent, never trusted; the job only says what to run."""

from __future__ import annotations

from typing import Any, TypedDict

TRIAL_BEGUN = "trial"  # the file in a candidate's out_dir naming the trial it began last (a crash then names it)


class ReplayJob(TypedDict, total=False):
    # the side's own code: its kernel (file, name, params), launcher (file, qualname, args) and first launch
    kernel: dict[str, Any]
    launcher: dict[str, Any] | None
    launch: dict[str, Any]
    # the reference's, for a candidate's job: what its kernel and launcher were, and what the kernel writes
    reference_params: list[Any]
    reference_launch: dict[str, Any]
    reference_launcher_args: list[dict[str, Any]]
    written: list[str]
    # the reference's preparation only: what it reads, indexes and locks, and how many trials to draw
    read: list[str]
    indexes: list[str]
    locks: list[str]
    trials: int
    seed: int
    program_inputs: str | None  # the launcher's arguments as the program passed them (a saved file), if kept
    skip: list[str]  # trials that made the reference fault on the device in an earlier worker
    # the trials the reference ran (label, mode, shapes, seed), replayed by the candidate in this order
    plan: list[dict[str, Any]]
    inputs_dir: str
    out_dir: str
    # the launcher trial a candidate's side calls once more with its Triton kernels made no-ops
    ablation: str | None
    # the trials of this mode a worker started ahead has already run ("kernel" or "launcher"), or None
    early_done: str | None
