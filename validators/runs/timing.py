"""Step 5, timing (GPU): the two sides' launchers timed in interleaved pairs by two worker processes,
the parent's clock and the bandwidth floor checking what they report.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..correctness import (
    numel,
)
from ..settings import WORKER, Program, ValidationSettings
from ..verdict import Problem, Verdict
from ..workers.jobs import ReplayJob
from ..workers.timing_worker import TimingError
from .beside import WorkersBeside, fits_beside
from .performance import (
    forged,
    interleaved,
    judge,
    plausibility,
    speedup_interval,
    started,
    unchecked,
)
from .sanitizers import write_job
from .worker_processes import timing_env

if TYPE_CHECKING:
    from .reference import ReferenceRun


def timed(
    verdict: Verdict, reference: ReferenceRun, job: ReplayJob, timing: dict, settings: ValidationSettings
) -> Verdict:
    """A correct candidate timed against the reference on a GPU."""
    if not verdict.correct:
        return verdict
    if reference.interpret or not settings.timing:
        verdict.notes.append(
            "speed not measured: "
            + (
                "the kernels ran in Triton's interpreter (no GPU); judge speed by the formula's modelled metric"
                if reference.interpret
                else "timing was off"
            )
        )
        return verdict
    start = time.perf_counter()
    _judge_speed(verdict, reference, job, timing, settings)
    verdict.seconds["timing"] = round(time.perf_counter() - start, 3)
    return verdict


def time_ahead(
    warm: WorkersBeside,
    reference: ReferenceRun,
    job: ReplayJob,
    candidate: Program,
    work_dir: Path,
    settings: ValidationSettings,
) -> None:
    """On a GPU, the timing workers started before the candidate's program runs, so their start-up
    (Python, torch, the kernel's compilation, the inputs) is over when the replay ends: the reference's
    always; the candidate's on the reference's description of what it would call (the launcher, or for a
    launch from module level the kernel at the recorded launch); when the candidate's run says it called
    something else (`stands`), `start_timing` starts it again. Not where the inputs a timing worker
    places on the GPU are large: it would hold them while the program, which may need that memory, runs."""
    if reference.interpret or not settings.timing or not reference.replay.get("runs"):
        return
    if not fits_beside(reference):
        return
    jobs = _timing_jobs(reference, job, candidate.root)
    warm.timed, warm.timed_mode = job, _timed_mode(reference, job)
    for name in ("reference", "candidate") if warm.timed_mode else ("reference",):
        side, folder = jobs[name]
        warm.timing[name] = _timing_side(reference, name, side, folder, work_dir, settings, candidate.env, warm)


def _timed_mode(reference: ReferenceRun, job: ReplayJob) -> str | None:
    """What the timing calls (as `timing_worker._timed_call` chooses): the launcher on its first trial's inputs,
    else the kernel's own launch on its first trial's; None when neither was replayed."""
    for mode in ("launcher", "kernel"):
        if any(r["mode"] == mode for r in job["plan"]) and (reference.inputs / f"{mode}-0.pt").exists():
            return mode
    return None


def stands(early: ReplayJob | None, job: ReplayJob, mode: str | None) -> bool:
    """Whether work of `mode` done on `early` (the reference's description of what the candidate would
    call) did what the candidate's own run called: for the launcher's trials, the same kernel file and
    launcher (file, name, arguments); for the kernel's own, the same kernel (file, name, parameters)
    launched the same way (grid, options, every scalar argument)."""
    if early is None or mode is None or (mode == "launcher" and not (early["launcher"] and job["launcher"])):
        return False

    def key(j: ReplayJob) -> tuple:
        place: tuple
        if mode == "kernel":
            launch = j["launch"]
            args = [(d["name"], d["kind"], d.get("value")) for d in launch["args"]]
            place = (j["kernel"]["name"], j["kernel"]["params"], launch["grid"], launch.get("options", {}), args)
        else:
            side = j["launcher"] or {}
            place = (str(Path(side["file"]).resolve()), side["qualname"], bool(side.get("varargs")))
            place += ([d["name"] for d in side.get("args", [])],)
        return (str(Path(j["kernel"]["file"]).resolve()), *place)

    return key(early) == key(job)


def start_timing(
    reference: ReferenceRun,
    job: ReplayJob,
    root: Path,
    work_dir: Path,
    settings: ValidationSettings,
    env: dict,
    warm: WorkersBeside,
) -> dict:
    """On a GPU, both sides' timing workers: those `warm` started ahead where they time what `job` would
    (the candidate's only when its run called what they expected), the others now; empty when nothing
    will be timed."""
    sides = warm.take_timing()
    if reference.interpret or not settings.timing or not job["plan"]:
        for side in sides.values():
            side.stop()
        return {}
    if "candidate" in sides and not stands(warm.timed, job, warm.timed_mode):
        sides.pop("candidate").stop()
    jobs = _timing_jobs(reference, job, root)
    for name in jobs.keys() - sides.keys():
        side, folder = jobs[name]
        sides[name] = _timing_side(reference, name, side, folder, work_dir, settings, env, warm)
    return sides


def _timing_jobs(reference: ReferenceRun, job: ReplayJob, root: Path) -> dict[str, tuple[ReplayJob, Path]]:
    """Each side's timing job and project: the reference's kernel and launcher, and the candidate's."""
    ref = reference.manifest
    return {
        "reference": (
            {**job, "kernel": ref["kernel"], "launcher": ref["launcher"], "launch": ref["launches"][0]},
            reference.program.root,
        ),
        "candidate": (job, root),
    }


def _judge_speed(
    verdict: Verdict, reference: ReferenceRun, job: ReplayJob, timing: dict, settings: ValidationSettings
) -> None:
    ref = reference.manifest
    if not job["plan"] or not timing:
        verdict.problems.append(
            Problem(
                kind="replay-failed",
                message="could not time the candidate: neither the launcher nor the kernel could be replayed",
            )
        )
        verdict.correct = False
        return
    try:
        raw = interleaved(timing["reference"], timing["candidate"], budget_s=settings.timing_budget_s)
    except TimingError as exc:
        verdict.problems.append(Problem(kind="replay-failed", message=f"could not time the candidate: {exc}"))
        verdict.correct = False
        return
    from .performance import device_bandwidth

    launcher = ref.get("launcher") or {}
    timed = (
        f"the launcher {launcher.get('qualname')} as the program calls it"
        if reference.launcher_replayed
        else "the kernel's own recorded launch (no launcher could be called)"
    )
    verdict.speedup = speedup_interval(
        raw["reference_ms"],
        raw["candidate_ms"],
        confidence=0.95,
        method=f"{timed}; {raw['method']} on {raw['device']}",
    )
    verdict.faster, problem = judge(verdict.speedup, settings.threshold)
    flags = [plausibility(verdict.speedup, _bytes_touched(ref), device_bandwidth()), forged(raw), unchecked(raw)]
    flags.append(another_workload(raw["reference_ms"], settings.profiled_launch_s))
    verdict.problems += [p for p in (problem, *flags) if p is not None]
    verdict.accepted = verdict.correct and verdict.faster and not any(flags)


# What the profile's event-timed launch adds to a kernel of a few microseconds: 10-12 us on an H100 (vLLM's
# small kernels: 17.4 us profiled, 6.7 us timed; 14.2 vs 4.9; 16.6 vs 4.7). A gap within it says nothing.
PROFILE_SLACK_MS = 0.05


def another_workload(reference_ms: list[float], profiled_launch_s: float | None) -> Problem | None:
    """The reference's timed calls against its profile: a call takes at least one launch of the kernel, so a
    median under half the profiled launch means the timed inputs do less work than the program's (integer ids
    or masks drawn afresh where the program's repeat, skip or pad), and a speedup there is of another workload.
    Not where the gap is within what the profile's own timing adds to a launch (`PROFILE_SLACK_MS`)."""
    if not profiled_launch_s or not reference_ms:
        return None
    timed_ms, profiled_ms = statistics.median(reference_ms), profiled_launch_s * 1e3
    if timed_ms >= profiled_ms / 2 or profiled_ms - timed_ms < PROFILE_SLACK_MS:
        return None
    return Problem(
        kind="unverified",
        message=(
            f"the reference's timed calls took {timed_ms:.4g} ms, but its kernel took {profiled_ms:.4g} ms per launch "
            "in the program's profile: the timed inputs are not the workload the program runs (its data decides "
            "the work: repeated or padded ids, masks, sparsity), so no speedup is reported for it"
        ),
    )


def _timing_side(
    reference: ReferenceRun,
    name: str,
    job: ReplayJob,
    root: Path,
    work_dir: Path,
    settings: ValidationSettings,
    env: dict,
    warm: WorkersBeside,
):
    """One side's timing worker ("reference" or "candidate") with its job (`performance.started`), talking over
    two inherited pipes: in the Python started for it ahead (`warm.timing_heads`) where that fits, else
    started now in the sandbox."""
    out = work_dir / f"timing-{name}"
    out.mkdir(parents=True, exist_ok=True)
    path = write_job(job, out)
    folder = Path(job["kernel"]["file"]).parent
    box = reference.sandbox
    full_env = timing_env(box, reference.interpret, out, settings, env)
    readable = (reference.inputs, root)
    ahead = warm.timing_heads.pop(name, None)
    if ahead is not None:
        command = [*WORKER, "time", path, *map(str, ahead.fds)]
        taken = ahead.head.take(box, command, folder, full_env, (out,), readable)
        if taken is not None:
            taken.close()  # its commands come through the pipes
            warm.timed_ahead.append(f"{name}'s timing worker")
            return ahead.side
        ahead.side.stop()  # (the pipes' parent ends)

    def start(cmd_fd: int, out_fd: int):
        command = box.wrap(
            [*WORKER, "time", path, str(cmd_fd), str(out_fd)], cwd=folder, writable=(out,), readable=readable
        )
        return subprocess.Popen(
            command,
            cwd=folder,
            env=full_env,
            pass_fds=(cmd_fd, out_fd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    return started(start)


def _bytes_touched(ref: dict) -> int:
    """Bytes of the distinct buffers the kernel reads or writes, in its first kept launch."""
    import torch

    touched = set(ref["read"]) | set(ref["written"])
    return sum(
        numel(arg) * getattr(torch, arg["dtype"]).itemsize
        for arg in ref["launches"][0]["args"]
        if arg["name"] in touched and arg["kind"] == "tensor" and "alias_of" not in arg
    )
