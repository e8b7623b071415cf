"""`validate(reference, candidate, kernel)`: the verdict the optimize loop acts on.

1. The reference program runs once with the capture on (`capture_reference`; reusable for any
   number of candidates), the candidate program in its own copy of the project, in a
   subprocess with a timeout (by default derived from the reference run) and no secrets in its
   environment. A crash, hang, CUDA error or import error is a failed validation with the tail
   of its output, never an exception.
2. In-program comparison of every kept dispatch (`correctness.py`), with its guards.
3. Replay on fresh inputs and an unseen shape (`replay.py`, in a worker subprocess).
4. On a GPU, when correct: interleaved timing and the speed verdict (`performance.py`), run by
   the same worker after the replays when the in-program comparison matched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from intelliperf.workload.runner import TraceSettings, spawn, workload_env

from .capture import ENV_ARGS, ENV_DIR, ENV_EXPECTED, ENV_KERNEL, ENV_LIMITS
from .compare import Tolerances, compare_buffer
from .correctness import accumulated_terms, compare_captures, load_capture, numel
from .performance import DEFAULT_THRESHOLD, judge, plausibility, speedup_interval
from .verdict import Problem, Verdict

# Problems that already say what is wrong: no replay after them.
GUARDS = ("not-launched", "dispatch-count", "side-stream", "missing-output")
NAMED_BY_REPLAY = ("unwritten", "stale-result")
IGNORED_IN_COPIES = (".git", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".intelliperf")


class ValidationSettings(BaseModel):
    tolerances: Tolerances = Tolerances()
    trials: int = Field(3, ge=1, description="fresh-input replays at the recorded shapes")
    seed: int = Field(0, description="seed of the first trial; trial t uses seed + t (recorded in the checks)")
    timeout_s: float | None = Field(None, description="per candidate run; default: 4x the reference run + 30 s")
    threshold: float = Field(DEFAULT_THRESHOLD, description="faster means the interval's low end > 1 + threshold")
    timing: bool = Field(True, description="time reference and candidate when a GPU is present")
    timing_budget_s: float = 20.0
    secrets: list[str] = Field([], description="extra environment variables never handed to candidate code")
    capture_limits: tuple[int, int, int] = Field((64, 16, 64), description="dispatches kept: first, last, sample")


@dataclass
class Program:
    """A program to run: the project it lives in, the command, and where (default: the root)."""

    root: Path
    command: list[str]
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # set in every process run for it (e.g. its GPU)

    def workdir(self) -> Path:
        return Path(self.cwd or self.root)


@dataclass
class ReferenceRun:
    program: Program
    kernel: str
    capture_dir: Path
    manifest: dict
    duration_s: float
    interpret: bool


class _Tail:
    """Collects a child's output without printing it: candidates are not the user's program."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def within(path: Path, folder: Path) -> bool:
    """`path` is `folder` or lies below it (both resolved)."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def in_copy(command: list[str], root: Path, copy: Path) -> list[str]:
    """The command with absolute paths into the project pointed at the copy."""
    return [str(copy / Path(arg).resolve().relative_to(Path(root).resolve()))
            if Path(arg).is_absolute() and within(Path(arg), root) else arg for arg in command]


def copy_project(root: Path, changes: dict[str, str], into: Path, exclude: tuple[Path, ...] = ()) -> Path:
    """A copy of `root` in `into` with `changes` ({relative path: new text}) applied; the
    folders in `exclude` (e.g. the tool's own output folder inside the project) are left out."""
    patterns = shutil.ignore_patterns(*IGNORED_IN_COPIES)
    skipped = {Path(p).resolve() for p in exclude}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(patterns(folder, names)) | {n for n in names if (Path(folder) / n).resolve() in skipped}

    shutil.copytree(root, into, ignore=ignore, symlinks=True)
    for rel, text in changes.items():
        target = (into / rel).resolve()
        if into.resolve() not in target.parents:
            raise ValueError(f"a candidate may only change files inside the project, not {rel!r}")
        target.write_text(text)
    return into


def _capture_env(kernel: str, capture_dir: Path, interpret: bool, settings: ValidationSettings,
                 extra: list[str] = (), expected: int | None = None, trace: TraceSettings | None = None) -> dict:
    env = workload_env(capture_dir, interpret, trace or TraceSettings(), secrets=tuple(settings.secrets))
    env.update({ENV_KERNEL: re.escape(kernel), ENV_DIR: str(capture_dir),
                ENV_LIMITS: ",".join(map(str, settings.capture_limits)), ENV_ARGS: ",".join(extra)})
    if expected is not None:
        env[ENV_EXPECTED] = str(expected)
    return env


def capture_reference(program: Program, kernel: str, *, interpret: bool, work_dir: Path,
                      settings: ValidationSettings | None = None) -> ReferenceRun:
    """Run the reference with the capture on. Raises WorkloadError if the reference itself fails."""
    from intelliperf.errors import NoKernelsError, WorkloadFailedError, WorkloadTimeoutError

    settings = settings or ValidationSettings()
    capture_dir = work_dir / "reference"
    capture_dir.mkdir(parents=True, exist_ok=True)
    env = _capture_env(kernel, capture_dir, interpret, settings)
    result = spawn(program.command, cwd=str(program.workdir()), env=env, timeout_s=None, echo=_Tail())
    if result.returncode != 0:
        raise WorkloadFailedError(program.command, result.returncode, "\n".join(result.tail[-12:])) \
            if not result.timed_out else WorkloadTimeoutError(program.command, None)
    manifest = load_capture(capture_dir)
    if manifest is None:
        raise NoKernelsError(f"the reference run never launched {kernel!r}")
    return ReferenceRun(program, kernel, capture_dir, manifest, result.duration_s, interpret)


def validate(reference: ReferenceRun, candidate: Program, *, work_dir: Path | None = None,
             settings: ValidationSettings | None = None, trace: TraceSettings | None = None) -> Verdict:
    """Correctness (in-program + replay), then speed on a GPU. Never raises for a bad candidate.

    With `trace`, the candidate run also records the launch profile and the address trace into
    `work_dir/candidate` (load it with `load_recording`), so the optimize loop gets the formula's
    metric for the candidate from the same single run of the program."""
    settings = settings or ValidationSettings()
    work_dir = Path(work_dir or tempfile.mkdtemp(prefix="intelliperf-validate-"))
    verdict = Verdict(correct=False)
    timeout = settings.timeout_s or 4 * reference.duration_s + 30
    start = time.perf_counter()
    cand_dir = work_dir / "candidate"
    cand_dir.mkdir(parents=True, exist_ok=True)
    ref = reference.manifest
    env = _capture_env(reference.kernel, cand_dir, reference.interpret, settings, ref["written"], ref["dispatches"],
                       trace) | candidate.env
    result = spawn(candidate.command, cwd=str(candidate.workdir()), env=env, timeout_s=timeout, echo=_Tail())
    verdict.seconds["candidate_run"] = round(time.perf_counter() - start, 3)
    failure = _process_problem("the candidate program", result, timeout)
    if failure:
        verdict.problems.append(failure)
        return verdict
    cand = load_capture(cand_dir)
    outside = _loaded_outside(cand, candidate)
    if outside:
        verdict.problems.append(outside)
        return verdict
    problems, checks = compare_captures(ref, cand, reference.kernel, settings.tolerances)
    verdict.problems += problems
    verdict.checks += checks
    notes = (cand or {}).get("notes", []) + ref.get("notes", [])
    verdict.notes += notes
    if cand is None or any(p.kind in GUARDS for p in verdict.problems):
        return verdict
    # Even after a mismatch: the poisoned and refilled replays say *why* (unwritten, stale).
    # On a GPU, when the program's own dispatches matched, the same worker goes on to time both
    # sides (one process start and compile fewer); the timing counts only if the replays pass.
    timed = not reference.interpret and settings.timing and not verdict.problems
    start = time.perf_counter()
    replay = _run_worker(reference, cand, work_dir / "replay", settings,
                         timeout + (settings.timing_budget_s if timed else 0), timing=timed, env=candidate.env)
    verdict.seconds["replay+timing" if timed else "replay"] = round(time.perf_counter() - start, 3)
    verdict.notes += ["worker seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in replay["phases"].items())] \
        if replay.get("phases") else []
    replayed = _replay_problems(replay, work_dir / "replay", settings, ref)
    named = [p for p in replayed if p.kind in NAMED_BY_REPLAY]
    verdict.problems = named + verdict.problems + [p for p in replayed if p.kind not in NAMED_BY_REPLAY]
    verdict.checks += _replay_checks(replay)
    verdict.notes += replay.get("notes", [])
    verdict.correct = not verdict.problems
    if not verdict.correct:
        return verdict
    if reference.interpret or not settings.timing:
        verdict.notes.append("speed not measured: " + ("the kernels ran in Triton's interpreter (no GPU); judge "
                             "speed by the formula's modelled metric" if reference.interpret else "timing was off"))
        return verdict
    _judge_speed(verdict, replay, ref, settings)
    return verdict


def _loaded_outside(cand: dict | None, candidate: Program) -> Problem | None:
    """The candidate run must execute the copy's kernel, not an installed or original one."""
    if cand is None or not cand["kernel"].get("file"):
        return None
    root = Path(candidate.root).resolve()
    file = Path(cand["kernel"]["file"]).resolve()
    if within(file, root):
        return None
    return Problem(kind="capture", message=(
        f"the candidate run took the kernel from {file}, outside the candidate's copy {root}, so the change was "
        "never run (is the package installed from the original tree, e.g. `pip install -e`, ahead of the copy "
        "on sys.path?)"))


def _judge_speed(verdict: Verdict, timing: dict, ref: dict, settings: ValidationSettings) -> None:
    raw = timing.get("timing")
    if not raw:
        problem = timing.get("problem") or Problem(kind="replay-failed", message=(
            "could not time the candidate: " + (timing.get("error") or "; ".join(timing.get("notes", [])) or
                                                 "the launcher could not be replayed")))
        verdict.problems.append(problem)
        return
    verdict.speedup = speedup_interval(raw["reference_ms"], raw["candidate_ms"], confidence=0.95,
                                       method=f"{raw['method']} on {raw['device']}")
    verdict.faster, problem = judge(verdict.speedup, settings.threshold)
    flag = plausibility(verdict.speedup, _bytes_touched(ref), raw.get("bandwidth_bytes_per_s"))
    for p in (problem, flag):
        if p is not None:
            verdict.problems.append(p)
    verdict.accepted = verdict.correct and verdict.faster and flag is None


def _bytes_touched(ref: dict) -> int:
    """Bytes of the distinct buffers the kernel reads or writes, in its first kept launch."""
    import torch

    touched = set(ref["read"]) | set(ref["written"])
    return sum(numel(arg) * getattr(torch, arg["dtype"]).itemsize for arg in ref["launches"][0]["args"]
               if arg["name"] in touched and arg["kind"] == "tensor" and "alias_of" not in arg)


def _process_problem(what: str, result, timeout: float) -> Problem | None:
    tail = "\n".join(result.tail[-15:])
    if result.timed_out:
        return Problem(kind="timeout", message=f"{what} ran past its {timeout:.0f} s timeout and was killed; output "
                                               f"tail:\n{tail}")
    if result.returncode != 0:
        how = f"exit code {result.returncode}"
        if result.returncode < 0:
            how = f"signal {signal.Signals(-result.returncode).name}"
        return Problem(kind="crash", message=f"{what} failed ({how}); output tail:\n{tail}")
    return None


def _run_worker(reference: ReferenceRun, cand: dict, out: Path, settings: ValidationSettings, timeout: float,
                timing: bool, env: dict[str, str]) -> dict:
    ref = reference.manifest
    out.mkdir(parents=True, exist_ok=True)
    job = {
        "reference": {"kernel": ref["kernel"], "launcher": ref["launcher"], "launch": ref["launches"][0]},
        "candidate": {"kernel": cand["kernel"], "launcher": cand["launcher"], "launch": cand["launches"][0]},
        "written": ref["written"], "read": ref["read"], "trials": settings.trials,
        "seed": settings.seed, "out_dir": str(out),
        "timing": {"budget_s": settings.timing_budget_s} if timing else None,
    }
    job_path = out / "job.json"
    job_path.write_text(json.dumps(job))
    env = workload_env(out, reference.interpret, TraceSettings(), secrets=tuple(settings.secrets)) | env
    env["PYTHONPATH"] = os.pathsep.join(p for p in env["PYTHONPATH"].split(os.pathsep) if "bootstrap" not in p)
    workdir = os.path.dirname(cand["kernel"]["file"])
    result = spawn([sys.executable, "-m", "intelliperf.validators.replay", str(job_path)], cwd=workdir, env=env,
                   timeout_s=timeout, echo=_Tail())
    failure = _process_problem("the replay of the candidate", result, timeout)
    summary_path = out / "replay.json"
    if failure or not summary_path.exists():
        return {"runs": [], "failures": [], "notes": [], "problem": failure or Problem(
            kind="crash", message="the replay worker wrote no result; output tail:\n" + "\n".join(result.tail[-15:]))}
    return json.loads(summary_path.read_text())


def _replay_problems(replay: dict, out: Path, settings: ValidationSettings, ref: dict) -> list[Problem]:
    import torch

    if replay.get("problem"):
        return [replay["problem"]]
    if replay.get("error"):
        return [Problem(kind="replay-failed", message=f"the replay failed: {replay['error']}\n"
                                                      f"{replay.get('traceback', '')[-1500:]}")]
    problems = [Problem(kind="crash", message=f"replay {f['label']} ({f['shape']} shape, seed {f['seed']}): the "
                                              f"candidate raised {f['error']}\n{f['traceback'][-1200:]}")
                for f in replay["failures"]]
    previous: dict[str, dict] = {}
    terms = accumulated_terms(ref)
    for run in replay["runs"]:
        saved = torch.load(out / f"{run['label']}.pt", weights_only=True)
        r, c = saved["reference"], saved["candidate"]
        where = f"replay {run['label']} ({run['mode']}, {run['shape']} shape, seed {run['seed']})"
        for name, ref_value in r.items():
            if name not in c:
                problems.append(Problem(kind="missing-output", message=f"{where}: the candidate produced no {name}"))
                continue
            arg = name.removeprefix("arg:")
            found = compare_buffer(ref_value, c[name], name=name, dispatch=None, tol=settings.tolerances,
                                   poisoned=arg in run["poisoned"],
                                   accumulated_terms=terms if _accumulated(run, arg, ref) else None)
            earlier = previous.get(run["mode"], {}).get(name)
            if found and earlier is not None and earlier.shape == c[name].shape and torch.equal(earlier, c[name]):
                found = [Problem(kind="stale-result", buffer=name, message=(
                    f"{name} is exactly the candidate's result for the previous trial's inputs: it returns a stale "
                    "result (a cache keyed on pointers or shapes?), or its result no longer depends on the inputs "
                    "(e.g. a float accumulator so large that the added values round away)"))]
            for p in found:
                p.message = f"{where}: {p.message}"
            problems += found
        if run["shape"] == "recorded":
            previous[run["mode"]] = c
    return problems


def _accumulated(run: dict, name: str, ref: dict) -> bool:
    """Kernel replays name the buffer; a launcher's results come from the kernel's outputs, so
    they carry its accumulation order whenever the kernel accumulates with float atomics."""
    return name in ref["accumulated"] if run["mode"] == "kernel" else bool(ref["accumulated"])


def _replay_checks(replay: dict) -> list[str]:
    runs = replay.get("runs", [])
    if not runs:
        return []
    kinds = {}
    for run in runs:
        kinds.setdefault(run["mode"], []).append(run)
    lines = []
    for mode, items in kinds.items():
        seeds = ", ".join(str(r["seed"]) for r in items)
        shapes = sorted({r["shape"] for r in items})
        lines.append(f"replay through the {mode}: {len(items)} runs on fresh inputs (seeds {seeds}; shapes: "
                     f"{'; '.join(shapes)})" + (", write-only outputs poisoned first" if mode == "kernel" else ""))
    return lines
