"""Head starts: a candidate's Pythons started before it exists (torch and Triton imported), each handed
its run where it fits (`HeadStart.fits`), the others started afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intelliperf import env as names
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.head_start import HeadStart, is_python
from intelliperf.workload.runner import bootstrap_env
from intelliperf.workload.workspace import confined_env

from ..settings import WORKER, ValidationSettings
from .performance import (
    started,
)
from .worker_processes import timing_env, worker_env, worker_folder, worker_kinds


@dataclass
class HeadStarts:
    """Pythons started for a candidate not made yet (`start_head_starts`): its program's and its workers' (the
    replay's, and each compute-sanitizer check's where they will run). `validate` hands each its run where
    it fits (`HeadStart.fits`) and starts the others afresh; what nothing took is stopped."""

    program: HeadStart | None  # None where the command is no Python's
    workers: dict[str, HeadStart]  # "replay", and each sanitizer check
    timing: dict[str, TimingHeadStart] = field(default_factory=dict)  # "reference", "candidate" (GPU)

    def take(self, name: str) -> HeadStart | None:
        return self.workers.pop(name, None)

    def heads(self) -> list[HeadStart]:
        return [h for h in (self.program, *self.workers.values(), *(t.head for t in self.timing.values())) if h]

    def stop(self) -> None:
        for head in (self.program, *self.workers.values()):
            if head is not None:
                head.stop()
        for timer in self.timing.values():
            timer.side.stop()


@dataclass
class TimingHeadStart:
    """A timing worker's Python started ahead (`start_head_starts`): its parent's end (`performance.started`), and
    the numbers of the pipe ends it inherited (commands in, answers out), which its `time` command names."""

    head: HeadStart
    side: Any
    fds: tuple[int, int]


@dataclass(frozen=True)
class CandidateLayout:
    """Where `validate` will have a candidate's files: its copy of the project (`root`), the validation's
    folder (`work_dir`), and the reference's replay inputs and copy of the project (made by
    `capture_reference`, or still to come: the head starts only bind them)."""

    root: Path
    work_dir: Path
    inputs: Path
    reference_root: Path


def start_head_starts(
    box: sandboxing.Sandbox,
    python: str,
    layout: CandidateLayout,
    *,
    interpret: bool,
    settings: ValidationSettings,
    env: dict,
    cuda: bool = False,
) -> HeadStarts:
    """Pythons started for a candidate not made yet, laid out as `validate` will have it (`layout`; its folders
    are made empty now), `env` the candidate's own (`Program.env`). On a GPU the two timing workers' too (they
    inherit their pipes now). `cuda`: the workers (not the program) make their CUDA contexts now, where the
    reference said they fit beside its run (`fits_beside`): under racecheck a context took 0.6 s of the
    worker's trial, the attempt's critical path on a pipelined GEMM (H100)."""
    root, work_dir, inputs = layout.root, layout.work_dir, layout.inputs
    cand_dir, home = work_dir / "candidate", work_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    # The bootstrap's variables only: the run's own (the recorder, the capture) are set when it comes.
    program_env = confined_env(
        box, bootstrap_env(interpret, secrets=tuple(settings.secrets)) | env, home, settings.seed
    )
    program = None
    if is_python(python):
        writable = (root, cand_dir, home)
        program = HeadStart.start(
            box, python, env=program_env, writable=writable, go_file=home / ".intelliperf-run.json"
        )
    workers = {}
    ours = {names.CUDA_AHEAD: "1"} if cuda and not interpret else {}
    for name, (wrap, extra) in worker_kinds(interpret, settings)[0].items():
        folder = worker_folder(work_dir, name)
        workers[name] = HeadStart.start(
            box,
            WORKER[0],
            env=confined_env(box, worker_env(interpret, folder, settings, env | extra | ours), home, settings.seed),
            writable=(folder, home),
            readable=(inputs, root),
            go_file=folder / ".intelliperf-run.json",
            wrap=tuple(wrap),
        )
    ahead = HeadStarts(program, workers)
    if not interpret and settings.timing:
        for name, project in (("reference", layout.reference_root), ("candidate", root)):
            ahead.timing[name] = _timing_ahead(box, project, inputs, work_dir / f"timing-{name}", settings, env | ours)
    return ahead


def _timing_ahead(
    box: sandboxing.Sandbox, project: Path, inputs: Path, out: Path, settings: ValidationSettings, env: dict
) -> TimingHeadStart:
    """One side's timing worker started ahead: `_timing_side`'s sandbox, environment and pipes, no job yet."""
    held: dict = {}

    def start(cmd_fd: int, out_fd: int):
        held["head"] = HeadStart.start(
            box,
            WORKER[0],
            env=timing_env(box, False, out, settings, env),  # (timing: compiled kernels only)
            writable=(out,),
            readable=(inputs, project),
            go_file=out / ".intelliperf-run.json",
            pass_fds=(cmd_fd, out_fd),
        )
        held["fds"] = (cmd_fd, out_fd)
        return held["head"].running.proc

    side = started(start)
    return TimingHeadStart(held["head"], side, held["fds"])
