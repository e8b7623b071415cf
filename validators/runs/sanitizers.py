"""Step 4b, compute-sanitizer: memcheck and racecheck replay the candidate's first trials beside its
replay; a finding, a crash of the tool or its time limit rejects the candidate.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from intelliperf.redact import scrub

from ..verdict import Problem, Verdict
from ..workers.jobs import ReplayJob
from .beside import WorkersBeside
from .worker_processes import process_problem


def send_sanitizers(warm: WorkersBeside, job: ReplayJob, work_dir: Path) -> None:
    for check, worker in warm.sanitizers.items():
        worker.send(write_job(job, work_dir / "sanitizer" / check))


def first_trials(job: ReplayJob) -> ReplayJob:
    """The sanitizers' job: the first trial of each replay mode (kernel, launcher; the launcher's alone where
    it ran early); instrumented, they are slow, and one trial shows an out-of-bounds access or a
    shared-memory race as well as many."""
    first: dict[str, dict] = {}
    for run in job["plan"]:
        first.setdefault(run["mode"], run)
    if job.get("early_done") == "launcher":
        # The launcher's first trial, run while the program ran, called the candidate's kernel as the program
        # does, at the recorded shape; the kernel's own trial would mostly repeat it, instrumented: seconds.
        first.pop("kernel", None)
    return {**job, "plan": list(first.values())}


def write_job(job: ReplayJob, out: Path) -> str:
    """`job` with `out` as its out_dir, written to out/job.json: the path a worker is given."""
    job = {**job, "out_dir": str(out)}
    (out / "job.json").write_text(json.dumps(job))
    return str(out / "job.json")


def sanitized(
    verdict: Verdict, warm: WorkersBeside, work_dir: Path, job: ReplayJob, timeout: float, start: float
) -> None:
    """The sanitizers' findings into the verdict of a candidate its replay found correct, before it is
    timed (their instrumented kernels would disturb the timing): a finding, a crash or a timeout rejects
    it (every check must have run); clean, it is one more check passed, saying which CTAs racecheck ran."""
    if warm.unsanitized:
        verdict.notes.append(warm.unsanitized)
    if not warm.sanitizers:
        return
    found = []
    for check, worker in warm.sanitizers.items():
        result = worker.wait(max(1.0, timeout - (time.perf_counter() - start)))
        problem = process_problem(f"compute-sanitizer {check} on the replay", result, timeout)
        if problem is not None:
            found.append(problem if problem.kind == "timeout" else _sanitizer_problem(check, result.tail))
    verdict.seconds["sanitizer"] = round(time.perf_counter() - start, 3)
    ran = ", ".join(run["mode"] for run in job["plan"])
    done = f"compute-sanitizer ({', '.join(warm.sanitizers)}) on the candidate's replay ({ran})"
    verdict.notes += racecheck_notes(work_dir / "sanitizer" / "racecheck")
    if found:
        verdict.problems += found
        verdict.notes.append(done)
        verdict.correct = False
    else:
        verdict.checks.append(done + ": clean")


def racecheck_notes(folder: Path) -> list[str]:
    """Which CTAs the racecheck worker ran of each kernel (`racecheck.notes`). Its file is the candidate's to
    write: only notes of that form, short and scrubbed."""
    try:
        said = json.loads((folder / "replay.json").read_text())
    except (OSError, ValueError):
        return []
    notes = said.get("notes") if isinstance(said, dict) else None
    ours = [n for n in notes or [] if isinstance(n, str) and n.startswith("racecheck ran ")]
    return [scrub(note[:300]) for note in ours[:8]]


def _sanitizer_problem(check: str, tail: list[str]) -> Problem:
    """What the sanitizer found (its `=========` lines, host frames left out), or, when it printed no finding
    (it failed to start, the replay crashed), the output's tail."""
    found = [line for line in tail if line.startswith("=========") and "Host Frame" not in line]
    return Problem(
        kind="sanitizer",
        message=f"compute-sanitizer {check} found errors in the candidate's replay (or could not run it):\n"
        + scrub("\n".join((found or tail)[-25:])),
    )
