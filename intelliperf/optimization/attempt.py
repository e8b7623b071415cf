"""One attempt: a candidate applied in a copy of the project, validated (once more on a busy machine
after a timeout), measured and judged; its patch and files saved under the out-dir."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..files import output_folder
from ..models import Attempt, Optimization, Problem, Verdict
from ..profiling.aggregate import load_recording
from ..profiling.inside.window import tuned_configs
from ..rewriters import Candidate
from ..rewriters.source import NotPython, ScopeError, unified_diff
from ..validators import HeadStarts, Program, ReferenceRun, ValidationSettings, copy_project, validate
from ..validators.gate.policy import PolicyError
from ..validators.runs.beside import busy, run_limit
from ..workload.devices import pinned_env
from ..workload.head_start import HeadStart
from ..workload.workspace import in_copy
from .apply import apply_candidate
from .head_start import TimersBeside, before_timing, start_next, timers_beside
from .measure import measure_candidate
from .session import AttemptHeadStarts, Session, Target
from .verdict import decide, timed_out


@dataclass(frozen=True)
class Validating:
    """One validation of a candidate: the reference it is checked against, its files ({relpath: text}), the
    folder its copy and captures go in, the GPU it runs on, and the validation's settings."""

    reference: ReferenceRun
    changes: dict[str, str]
    where: Path
    device: str | None
    settings: ValidationSettings


def run_attempt(
    s: Session, opt: Optimization, target: Target, cand: Candidate, work: Path, number: int, device: str | None
) -> Attempt:
    """One candidate: applied to the project's files, validated in a copy, measured and judged."""
    started = time.perf_counter()
    attempt = Attempt(
        number=number,
        rewriter=cand.rewriter,
        title=cand.title,
        rationale=cand.rationale,
        status="invalid",
        tokens=cand.tokens,
        before=opt.baseline.model_copy(),
    )
    changes = _applied(s, attempt, target, cand)
    if changes is None:
        return attempt
    attempt.files = sorted(changes)
    attempt.diff = "".join(unified_diff(rel, s.originals[rel], text) for rel, text in changes.items())
    save_attempt(s, attempt, changes)
    ahead, s.ahead = s.ahead, None  # (none is started where candidates are spread over GPUs)
    where = ahead.where if ahead else work / f"attempt-{number}"
    attempt.device = device
    s.progress(f"attempt {number}: validating {cand.rewriter} candidate ({cand.title})")
    settings = s.validation.model_copy(update={"screen": True}) if cand.sweep else s.validation
    v = Validating(target.reference, changes, where, device, settings)
    beside = _start_beside(s, cand, v, work, number)
    program, verdict = _first_validation(s, opt, attempt, v, ahead, beside)
    if timed_out(verdict) and s.validation.timeout_s is None and busy():
        program, verdict = _once_more_when_busy(s, v, ahead, beside, number)
        ahead = beside = None  # stopped: their folders went with the first copy
    start_next(s, work, number, v.reference)  # not earlier (but beside a screen): they would take CPU from its timing
    attempt.verdict = verdict
    attempt.seconds.update(verdict.seconds)
    begin = time.perf_counter()
    _metric_after(s, attempt, cand, program, where, ahead.timers if ahead else None, beside, v.reference)
    attempt.seconds["metric"] = round(time.perf_counter() - begin, 3)
    decide(s, attempt)
    shutil.rmtree(where, ignore_errors=True)  # the copy and its captures: the report has what matters
    attempt.seconds["total"] = round(time.perf_counter() - started, 3)  # the stages above overlap in part
    return attempt


def _applied(s: Session, attempt: Attempt, target: Target, cand: Candidate) -> dict[str, str] | None:
    """The candidate's {relpath: new text}; None where it is invalid or breaks the scope or the source policy
    (said in `attempt.problems`)."""
    if cand.invalid:
        attempt.set_problems([Problem(kind=cand.invalid_kind, message=cand.invalid)])
        return None
    try:
        return apply_candidate(s.originals, target.kernel, target.launcher, cand)
    except PolicyError as exc:
        attempt.set_problems([Problem(kind="policy", message=str(exc))])
        return None
    except (ScopeError, SyntaxError) as exc:
        kind = "syntax" if isinstance(exc, (SyntaxError, NotPython)) else "scope"
        attempt.set_problems([Problem(kind=kind, message=str(exc))])
        return None


def _start_beside(s: Session, cand: Candidate, v: Validating, work: Path, number: int) -> TimersBeside | None:
    """What starts beside the candidate's validation: the next candidate's Pythons (beside a screen, or a
    candidate timed on a GPU), and, for a timed candidate, its region-timer run (returned)."""
    if cand.sweep:  # a screen is not timed, and its choice comes next: the choice's Pythons start beside it
        start_next(s, work, number, v.reference)
    beside = None if cand.sweep else timers_beside(s, v.reference, v.changes, v.where, v.device)
    if not cand.sweep and _timed_on_gpu(s):
        # The next candidate's Pythons start beside this validation (2.4-3.0 s of start-up it would otherwise
        # wait for, H100), without CUDA contexts (this one's run and workers hold the GPU's room); the timing
        # waits until their start-up is over, as it does for the region-timer run beside it.
        start_next(s, work, number)
    return beside


def _first_validation(
    s: Session,
    opt: Optimization,
    attempt: Attempt,
    v: Validating,
    ahead: AttemptHeadStarts | None,
    beside: TimersBeside | None,
) -> tuple[Program, Verdict]:
    """`validated`, in the Pythons started `ahead` for it; on any exit but its end the run `beside` gets its
    turn back, and a Ctrl-C is recorded in the report as this attempt, interrupted."""
    try:
        started_ahead = ahead.validation if ahead else None
        quiet = before_timing(s, beside)
        return validated(s, v, started_ahead, quiet)
    except BaseException as exc:
        if beside is not None:  # never leave its turn held: its run would wait for it forever
            beside.finish(0)
        if isinstance(exc, KeyboardInterrupt):  # the report keeps the attempt whose folder is already there
            attempt.status = "interrupted"
            stopped = "stopped by the user (Ctrl-C) while it was being validated; not judged"
            attempt.set_problems([Problem(kind="interrupted", message=stopped)])
            opt.attempts.append(attempt)
            s.write()
        raise


def _once_more_when_busy(
    s: Session, v: Validating, ahead: AttemptHeadStarts | None, beside: TimersBeside | None, number: int
) -> tuple[Program, Verdict]:
    """A candidate that timed out while the machine was busy, validated again with twice the time in a fresh
    copy; what was started `ahead` of it and `beside` it is stopped."""
    # The limit scales with the load when the attempt starts; load that came later can still kill a good
    # candidate. Once more, with twice the time, in a fresh copy: a timeout says nothing about correctness.
    load = os.getloadavg()[0]
    s.progress(
        f"attempt {number}: timed out while the machine was busy (load {load:.1f} on {os.cpu_count()} "
        "cores); once more with twice the time"
    )
    if ahead is not None:  # its folders go: a Python started in them would not see the new copy
        ahead.stop()
    if beside is not None:  # the run beside it (its folder goes too), measured again after the validation
        beside.finish(0)
    shutil.rmtree(v.where, ignore_errors=True)
    program, verdict = validated(
        s, replace(v, settings=v.settings.model_copy(update={"patience": 2 * v.settings.patience}))
    )
    verdict.notes.append(
        f"validated a second time after a timeout on a busy machine (load {load:.1f} on "
        f"{os.cpu_count()} cores), with twice the time"
    )
    return program, verdict


def _metric_after(
    s: Session,
    attempt: Attempt,
    cand: Candidate,
    program: Program,
    where: Path,
    timers: HeadStart | None,
    beside: TimersBeside | None,
    reference: ReferenceRun,
) -> None:
    """`attempt.after` from a correct candidate's run (and, for a formula reading region timers, from the run
    `beside` its validation, or one more now in the Python `timers` started for it); a sweep's choice. What
    was started for it and not taken is stopped."""
    assert attempt.verdict is not None  # measured after validation
    correct = attempt.verdict.correct
    early = beside.finish(run_limit(reference, s.validation) if correct else 0) if beside is not None else None
    if correct:  # the candidate's own (validation) run, recorded
        recording = load_recording(where / "validation" / "candidate")
        attempt.after = measure_candidate(s, recording, program, not cand.sweep, where, timers, early)
        attempt.after.metric_source = "candidate-process"
        if cand.sweep:
            mine = [p for p in recording.kernels if p.name == s.profile.name]
            attempt.chosen = tuned_configs(mine).get(s.profile.name, {})
    if timers is not None:
        timers.stop()  # where nothing took it


def validated(
    s: Session, v: Validating, ahead: HeadStarts | None = None, quiet: Callable[[], str | None] | None = None
) -> tuple[Program, Verdict]:
    """The candidate's copy of the project, and the validators' verdict on it: its program and workers in
    the Pythons `ahead` started for them where they fit."""
    copy = copy_project(s.root, v.changes, v.where / "project", exclude=(s.out_dir,))
    program = Program(
        copy,
        in_copy(s.report.run.command, s.root, copy),
        copy / Path(s.report.run.cwd).resolve().relative_to(s.root),
        env=pinned_env(v.device),
    )
    return program, validate(
        v.reference,
        program,
        work_dir=v.where / "validation",
        settings=v.settings,
        trace=s.candidate_trace or s.trace,
        ahead=ahead,
        quiet=quiet,
    )


def _timed_on_gpu(s: Session) -> bool:
    return s.report.run.mode != "interpreter" and s.validation.timing


def attempt_dir(s: Session, number: int) -> Path:
    return s.out_dir / "attempts" / f"{number:02d}"


def save_attempt(s: Session, attempt: Attempt, changes: dict[str, str]) -> None:
    output_folder(s.out_dir)
    folder = attempt_dir(s, attempt.number)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "candidate.patch").write_text(attempt.diff)
    for rel, text in changes.items():
        target = folder / "files" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
