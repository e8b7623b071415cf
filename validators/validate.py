"""`capture_reference` once, then `validate(reference, candidate)`: the verdict the optimize loop acts on.

Every process that runs program code runs in the sandbox (`intelliperf.workload.sandbox`), the
reference's too, so both sides see the same files and variables; every program run is seeded
identically (INTELLIPERF_SEED: Python, NumPy, torch).

One module per step: `settings.py` (what a validation is told), `runs/reference.py` (1), `runs/worker_processes.py`,
`runs/beside.py` and `runs/head_starts.py` (the processes beside the run), `replay_checks.py` (4),
`runs/sanitizers.py` (4b), `runs/timing.py` (5); this module runs them in order.

1. The reference (`runs/reference.py`; the same workload as profiled, `workload.py`): a pristine copy of
   the project runs with the capture on (a second run, when a candidate differs, shows whether it is
   deterministic), then the reference side of the replay draws every trial's inputs and saves the
   reference's outputs on them. Captures and outputs are the ground truth: kept in a folder no
   candidate sandbox shows, checksummed, and re-verified before each comparison.
2. The candidate program, in its own copy, with a timeout. A crash, hang, CUDA error or import
   error is a failed validation with the tail of its output, never an exception.
3. In-program comparison of every kept dispatch (`correctness.py`), with its guards.
4. The candidate side of the replay, in another process, on the saved inputs; compared here.
   A candidate that no replay could check is "unverified", never accepted.
   On a GPU, compute-sanitizer (memcheck, racecheck) replays the candidate's first trials beside it.
5. On a GPU, when correct: the two sides timed in two processes, interleaved (`runs/performance.py`).
Comparison happens only here, in intelliperf's process, on data handed out of the sandbox.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from intelliperf import env as names
from intelliperf.files import NotRegularFile
from intelliperf.profiling.inside.untouched import replaced_message
from intelliperf.workload.runner import Running, TraceSettings
from intelliperf.workload.workspace import Confinement, confined, in_copy

from .correctness import (
    VALUE_KINDS,
    compare_captures,
    load_capture,
)
from .replay_checks import candidate_job, compare_replay, launcher_changed, loaded_outside, noted
from .runs.beside import WorkersBeside, default_limit, fits_beside, run_limit
from .runs.head_starts import HeadStarts
from .runs.reference import ReferenceRun, capture_env
from .runs.sanitizers import first_trials, sanitized, send_sanitizers, write_job
from .runs.timing import stands, start_timing, time_ahead, timed
from .runs.worker_processes import (
    process_problem,
    start_worker,
    worker_env,
    worker_folder,
    worker_kinds,
    worker_summary,
)
from .settings import GUARDS, Program, ValidationSettings
from .verdict import Problem, Verdict
from .workers.jobs import ReplayJob
from .workers.replay_candidate import early_mode


def validate(
    reference: ReferenceRun,
    candidate: Program,
    *,
    work_dir: Path | None = None,
    settings: ValidationSettings | None = None,
    trace: TraceSettings | None = None,
    ahead: HeadStarts | None = None,
    quiet: Callable[[], str | None] | None = None,
) -> Verdict:
    """Correctness (in-program + replay), then speed on a GPU. Never raises for a bad candidate.

    With `trace`, the candidate run also records the launch profile and the address trace into
    `work_dir/candidate` (load it with `load_recording`), so the optimize loop gets the formula's
    metric for the candidate from the same single run of the program. `ahead` (`start_head_starts`) holds
    the Pythons started for its program and workers before it existed. `quiet`, called before a correct
    candidate is timed, returns once nothing the caller started beside the validation does GPU work (a note
    where it could not make sure)."""
    settings = settings or ValidationSettings()
    work_dir = Path(work_dir or tempfile.mkdtemp(prefix="intelliperf-validate-"))
    verdict = Verdict(correct=False)
    timeout = run_limit(reference, settings)
    start = time.perf_counter()
    cand_dir = work_dir / "candidate"
    cand_dir.mkdir(parents=True, exist_ok=True)
    ref = reference.manifest
    env = (
        capture_env(reference.kernel, cand_dir, reference.interpret, settings, ref["written"], ref["dispatches"], trace)
        | candidate.env
    )
    reference.seed_cache(work_dir / "home")
    warm = None if settings.screen else start_workers(reference, candidate, work_dir, settings, ahead)
    if warm is not None:
        warm.quiet = quiet
    reference.prefetch()
    try:
        room = Confinement(candidate.workdir(), work_dir / "home", settings.seed, writable=(candidate.root, cand_dir))
        result = confined(
            reference.sandbox,
            candidate.command,
            room,
            env=env,
            timeout_s=timeout,
            ahead=ahead.program if ahead else None,
        )
        verdict.seconds["candidate_run"] = round(time.perf_counter() - start, 3)
        verdict = _judge(verdict, reference, candidate, result, timeout, warm, work_dir, settings)
        started = (["its program"] if result.ahead else []) + (warm.started_ahead() if warm else [])
        if started:
            verdict.notes.append(
                f"started ahead of the candidate, with torch and Triton imported: {', '.join(started)} (each run's "
                "arguments, folder, environment and seeds as in a fresh start)"
            )
        return verdict
    finally:
        if warm is not None:
            warm.stop()
        if ahead is not None:
            ahead.stop()  # what nothing took


def _judge(
    verdict: Verdict,
    reference: ReferenceRun,
    candidate: Program,
    result,
    timeout: float,
    warm: WorkersBeside | None,
    work_dir: Path,
    settings: ValidationSettings,
) -> Verdict:
    """The candidate's run (`result`, its capture in `work_dir/candidate`) done: its captures compared, then its
    replay (already warm) and timing; a screen's (no workers) ends after the comparison."""
    ref = reference.manifest
    cand_dir = work_dir / "candidate"
    failure = process_problem("the candidate program", result, timeout)
    if failure:
        verdict.problems.append(failure)
        return verdict
    begin = time.perf_counter()
    try:
        cand = load_capture(cand_dir)
    except NotRegularFile as exc:
        verdict.problems.append(Problem(kind="capture", message=f"the candidate's capture was tampered with: {exc}"))
        return verdict
    outside = loaded_outside(cand, candidate)
    if outside:
        verdict.problems.append(outside)
        return verdict
    replaced = sorted(set((cand or {}).get("replaced", [])) - set(ref.get("replaced", [])))  # the program's own
    if replaced:
        verdict.problems.append(Problem(kind="capture", message=replaced_message(replaced)))
        return verdict
    reference.verify()
    launcher_judges = warm is not None and reference.launcher_replayed
    changed = launcher_judges and launcher_changed(ref.get("launcher"), (cand or {}).get("launcher"))

    def compared() -> tuple[list[Problem], list[str]]:
        try:
            return compare_captures(
                ref, cand, reference.kernel, settings.tolerances, set(reference.unstable), reference.load,
                launcher_judges, changed,
            )  # fmt: skip
        except NotRegularFile as exc:
            return [Problem(kind="capture", message=f"the candidate's capture was tampered with: {exc}")], []

    problems, checks = compared()
    if any(p.kind in VALUE_KINDS for p in problems):  # is the program itself that unstable? Asked once.
        verdict.notes += reference.check_stability(settings)
        problems, checks = compared()
    verdict.problems += noted(verdict, problems)
    verdict.checks += checks
    verdict.notes += (cand or {}).get("notes", [])
    verdict.seconds["compare"] = round(time.perf_counter() - begin, 3)
    if cand is None or any(p.kind in GUARDS for p in verdict.problems):
        return verdict
    if warm is None:
        verdict.correct = not verdict.problems
        verdict.notes.append(
            "a screen: its program's outputs were compared, nothing more (no replay, compute-sanitizer or "
            "timing); what it finds is validated in full as a candidate of its own"
        )
        return verdict
    # Even after a mismatch: the poisoned and refilled replays say *why* (unwritten, stale).
    job = candidate_job(reference, cand, work_dir / "replay")
    mode = early_mode(job["plan"])
    job["early_done"] = mode if stands(warm.early, job, mode) else None
    # The candidate side runs the same trials as the reference side did: its time, not the program's, is the
    # yardstick (a replay of 14 trials can outlast a short program several times over on a loaded CPU).
    replay_timeout = settings.timeout_s or max(timeout, default_limit(reference.replay_s, settings))
    return _replay_and_time(verdict, reference, candidate, cand, job, warm, replay_timeout, settings)


def _replay_and_time(
    verdict: Verdict,
    reference: ReferenceRun,
    candidate: Program,
    cand: dict,
    job: ReplayJob,
    warm: WorkersBeside,
    replay_timeout: float,
    settings: ValidationSettings,
) -> Verdict:
    """The job to the warm replay worker, and its first trials to the warm sanitizers; on a GPU the timing
    workers started ahead are taken over (or start now): their start-up, not their timing, overlaps the
    program run and the replay; the parent times only after the replay and the sanitizers have ended."""
    start = time.perf_counter()
    out = Path(job["out_dir"])
    warm.replay.send(write_job(job, out))
    firsts = first_trials(job)
    if not firsts["plan"]:
        warm.unsanitize("compute-sanitizer not run: nothing of the candidate could be replayed")
    # Large inputs: one kind of worker holds them on the GPU at a time (replay, sanitizers, timing).
    beside = fits_beside(reference)
    timing: dict = {}
    try:
        if beside:
            send_sanitizers(warm, firsts, out.parent)
            timing = start_timing(reference, job, candidate.root, out.parent, settings, candidate.env, warm)
        replay = worker_summary(out, warm.replay.wait(replay_timeout), "the replay of the candidate", replay_timeout)
        verdict.seconds["replay"] = round(time.perf_counter() - start, 3)
        compare_replay(verdict, reference, cand, job, replay, settings)
        if verdict.correct:  # a failed candidate waits for nothing more: its sanitizers end with `warm`
            if not beside:
                send_sanitizers(warm, firsts, out.parent)
            sanitized(verdict, warm, out.parent, firsts, settings.timeout_s or 4 * replay_timeout, start)
        if verdict.correct and not beside:
            timing = start_timing(reference, job, candidate.root, out.parent, settings, candidate.env, warm)
        if verdict.correct and warm.quiet is not None:
            said = warm.quiet()
            verdict.notes += [said] if said else []
        return timed(verdict, reference, job, timing, settings)
    finally:  # timed sides ended already; unused ones (a failed replay) may still be starting
        for side in timing.values():
            side.stop()


def start_workers(
    reference: ReferenceRun,
    candidate: Program,
    work_dir: Path,
    settings: ValidationSettings,
    ahead: HeadStarts | None = None,
) -> WorkersBeside:
    """The candidate's replay worker and, on a GPU, its compute-sanitizer workers, started before its
    program runs (in the Pythons `ahead` started for them where they fit): their start-up (Python, torch,
    Triton; under the sanitizer an instrumented CUDA context, seconds) overlaps the program's run. The
    trials of `early_mode` start at once too (the sanitizers' first one), on the reference's description in
    the candidate's copy: the launcher's (the candidate may change its body, not where it is or what it
    takes), or where the kernel is launched from module level its own at the reference's recorded launch;
    when the candidate's own run says it called something else (`stands`), they run again. On a GPU not
    where the inputs are large (`AHEAD_INPUTS_BYTES`)."""
    ref = reference.manifest
    mapped = {
        "kernel": {
            **ref["kernel"],
            "file": in_copy([ref["kernel"]["file"]], reference.program.root, candidate.root)[0],
        },
        "launcher": ref["launcher"]
        and {**ref["launcher"], "file": in_copy([ref["launcher"]["file"]], reference.program.root, candidate.root)[0]},
        "launches": ref["launches"],
    }
    # the candidate's job, if its run calls what the reference did
    expected = candidate_job(reference, mapped, worker_folder(work_dir, "replay"))
    # Not where the inputs are large, or the program's recorded peak leaves no room (`fits_beside`): the
    # trials would hold GPU memory while the program, which may need it, runs.
    beside = reference.interpret or fits_beside(reference)
    early = expected if beside and reference.replay.get("runs") else None
    late = {} if beside else {names.CUDA_LATE: "1"}  # no CUDA context either while the program runs
    kinds, unsanitized = worker_kinds(reference.interpret, settings)

    def worker(name: str) -> Running:
        folder = worker_folder(work_dir, name)
        wrap, extra = kinds[name]
        job = early and {**(early if name == "replay" else first_trials(early)), "out_dir": str(folder)}
        where = Path(mapped["kernel"]["file"]).parent
        room = Confinement(where, work_dir / "home", settings.seed, (folder,), (reference.inputs, candidate.root))
        return start_worker(
            reference.sandbox,
            "run",
            folder,
            room,
            env=worker_env(reference.interpret, folder, settings, candidate.env | late | extra),
            early=job,
            wrap=wrap,
            ahead=ahead.take(name) if ahead else None,
        )

    warm = WorkersBeside(worker("replay"), early, {}, unsanitized)
    if ahead is not None:
        warm.timing_heads, ahead.timing = ahead.timing, {}
    time_ahead(warm, reference, expected, candidate, work_dir, settings)
    for check in [name for name in kinds if name != "replay"]:
        warm.sanitizers[check] = worker(check)
    return warm
