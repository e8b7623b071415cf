"""`capture_reference` once, then `validate(reference, candidate)`: the verdict the optimize loop acts on.

Every process that runs program code runs in the sandbox (`intelliperf.workload.sandbox`), the
reference's too, so both sides see the same files and variables; every program run is seeded
identically (INTELLIPERF_SEED: Python, NumPy, torch).

1. The reference: a pristine copy of the project runs twice with the capture on (if the two runs
   differ, the buffers that differ are not held against candidates: the replays, on identical
   inputs, judge them), then the reference side of the replay draws every trial's inputs and
   saves the reference's outputs on them. Captures and outputs are the ground truth: kept in a
   folder no candidate sandbox shows, checksummed, and re-verified before each comparison.
2. The candidate program, in its own copy, with a timeout. A crash, hang, CUDA error or import
   error is a failed validation with the tail of its output, never an exception.
3. In-program comparison of every kept dispatch (`correctness.py`), with its guards.
4. The candidate side of the replay, in another process, on the saved inputs; compared here.
   A candidate that no replay could check is "unverified", never accepted.
   On a GPU, compute-sanitizer (memcheck, racecheck) replays the candidate's first trials beside it.
5. On a GPU, when correct: the two sides timed in two processes, interleaved (`performance.py`).
Comparison happens only here, in intelliperf's process, on data handed out of the sandbox.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from intelliperf import env as names
from intelliperf.errors import IntelliPerfError
from intelliperf.redact import looks_secret, scrub
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.head_start import HeadStart, is_python
from intelliperf.workload.runner import Running, Tail, TraceSettings, bootstrap_env, find_tool, workload_env
from intelliperf.workload.workspace import confined, confined_env, copy_project, in_copy, within

from .capture import ENV_ARGS, ENV_DIR, ENV_EXPECTED, ENV_KERNEL, ENV_LIMITS
from .compare import UNCHANGED, Tolerances, compare_buffer, identical
from .correctness import (
    VALUE_KINDS,
    accumulated_terms,
    compare_captures,
    load_capture,
    load_tensors,
    numel,
    reduction_terms,
)
from .performance import (
    DEFAULT_THRESHOLD,
    TimingError,
    forged,
    interleaved,
    judge,
    plausibility,
    speedup_interval,
    started,
)
from .replay import early_mode
from .verdict import Problem, Verdict
from .workload import check_same, recorded_signatures

# Problems that already say what is wrong: no replay after them.
GUARDS = ("not-launched", "dispatch-count", "side-stream", "missing-output", "race")
NAMED_BY_REPLAY = ("unwritten", "stale-result", "aliased-output")
WORKER = [sys.executable, "-m", "intelliperf.validators.replay"]


class SandboxSettings(BaseModel):
    """What the sandbox lets through (--no-sandbox, --sandbox-read, --sandbox-env, --sandbox-network)."""

    enabled: bool = Field(True, description="False only when the user opts out; the report and PR body say so")
    read: list[Path] = Field([], description="hidden folders (in $HOME, say) the program needs to read")
    env: list[str] = Field([], description="variables to pass although their value looks like a credential")
    network: bool = Field(False, description="let program runs reach the network")

    def build(self, hide: tuple[Path, ...], secrets: list[str]) -> sandboxing.Sandbox:
        """The checked sandbox; raises SandboxUnavailableError (with the fix) when it cannot run here."""
        from intelliperf.errors import SandboxUnavailableError, UsageError

        secret = [name for name in self.env if looks_secret(name)]
        if secret:
            raise UsageError(
                f"--sandbox-env {secret[0]}: a variable whose name looks secret is never handed to candidate code",
                hint="Give the program what it needs under another name, or read it "
                "from a file passed with --sandbox-read.",
            )
        try:
            return sandboxing.make(
                enabled=self.enabled,
                hide=hide,
                readable=tuple(self.read),
                network=self.network,
                extra_env=tuple(self.env),
                deny_env=tuple(secrets),
            )
        except sandboxing.SandboxError as exc:
            raise SandboxUnavailableError(str(exc)) from None


class ValidationSettings(BaseModel):
    tolerances: Tolerances = Tolerances()
    trials: int = Field(3, ge=1, description="fresh-input replays at the recorded shapes")
    seed: int = Field(0, description="seed of every program run and of the first replay trial (trial t: seed + t)")
    reference_runs: int = Field(
        2, ge=1, description="runs of the unchanged program; two show whether it is deterministic when seeded"
    )
    timeout_s: float | None = Field(
        None,
        description="per candidate run and replay; default: 4x the reference's "
        "own (run, replay) + 30 s, times the machine's load",
    )
    patience: float = Field(
        1.0, gt=0, description="multiplies the default limits (a retry after a timeout on a busy machine doubles it)"
    )
    threshold: float = Field(DEFAULT_THRESHOLD, description="faster means the interval's low end > 1 + threshold")
    timing: bool = Field(True, description="time reference and candidate when a GPU is present")
    sanitizer: bool | None = Field(
        None,
        description="compute-sanitizer (memcheck, racecheck) on the candidate's replay, beside it; "
        "default: when the kernels run compiled",
    )
    racecheck_ctas: int | None = Field(
        None,
        ge=0,
        description="CTAs of each launch racecheck instruments, for kernels with no inline assembly or atomics "
        "(a shared-memory race is one CTA's; Triton's own accesses are the same code in every CTA); "
        "default: one per SM of the device; 0: every CTA",
    )
    head_start: bool | None = Field(
        None,
        description="start each candidate's Pythons (program, replay, sanitizer and timing workers; torch and "
        "Triton imported) before it exists (`start_ahead`); the program's only where it allows (`python script.py` "
        "importing torch first); default: where the machine has 4 cores or more (on fewer their start-up slows "
        "the run it overlaps about as much as it saves)",
    )
    screen: bool = Field(
        False,
        description="a screen (the search's sweep, never a fix): only the program run and its outputs compared; "
        "what it finds is validated in full as a candidate of its own",
    )
    timing_budget_s: float = 20.0
    secrets: list[str] = Field([], description="extra environment variables never handed to any program run")
    sandbox: SandboxSettings = SandboxSettings()
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


class GroundTruthError(IntelliPerfError):
    """The reference's captures or replay outputs changed after they were taken: the sandbox did not
    hold, and no verdict of this run can be trusted (exit 1, please report it)."""


@dataclass
class ReferenceRun:
    program: Program  # the pristine copy the reference ran in
    origin: Path  # the user's project it was copied from
    kernel: str
    capture_dir: Path
    manifest: dict
    duration_s: float
    interpret: bool
    sandbox: sandboxing.Sandbox
    truth: Path  # captures and replay outputs: only this process reads them
    inputs: Path  # the replays' inputs: candidates read them
    replay: dict  # the reference side's replay summary: its runs are every candidate's plan
    digests: dict[str, str] = field(default_factory=dict)  # truth and inputs: path -> sha256 when written
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns) then
    unstable: list[str] = field(default_factory=list)  # buffers two runs of the reference disagree on
    again: Callable[[int], tuple[dict, float]] | None = None  # run i of the unchanged program: (manifest, seconds)
    stability_known: bool = False
    _stability_lock: threading.Lock = field(default_factory=threading.Lock)
    replay_s: float = 0.0  # how long the reference side of the replay took: the candidate side's yardstick
    home: Path | None = None  # the reference's $HOME: its Triton cache seeds each candidate's (`seed_cache`)
    notes: list[str] = field(default_factory=list)
    _loaded: dict[str, dict] = field(default_factory=dict)  # truth file -> its tensors, read and checked once
    _prefetching: threading.Thread | None = None

    def seed_cache(self, home: Path) -> None:
        """A candidate's $HOME (its program and workers) given the reference's Triton cache: Triton's own
        launcher and driver modules (built with the C compiler, about a second each on the H100 machine) and the
        kernels the candidate did not change are not built again. Only the reference's processes (the
        user's program, intelliperf's workers on its pristine copy) write that cache; candidates get a copy."""
        cache = self.home / "triton-cache" if self.home else None
        if cache is None or not cache.is_dir() or self.interpret:
            return
        try:
            shutil.copytree(cache, home / "triton-cache", symlinks=True, dirs_exist_ok=True)  # a link stays one
        except (OSError, shutil.Error):  # a cache entry being written: the candidate builds what is missing
            pass

    def verify(self) -> None:
        """Before each comparison, cheaply: no file of the truth or the inputs added, removed, resized or
        rewritten (modification time). The bytes compared are checked against their digests as they
        are read (`load`), so a rewrite that restores the time is caught there."""
        changed = sorted(set(_stats(self.truth, self.inputs).items()) ^ set(self.stats.items()))
        if changed:
            raise _tampered(changed[0][0])

    def load(self, path: Path) -> dict:
        """A ground-truth file's tensors, from bytes that matched the digest taken when it was written
        (read then, or by `prefetch`)."""
        if self._prefetching is not None:
            self._prefetching.join()
        loaded = self._loaded.get(str(path))
        return dict(loaded) if loaded is not None else self._read(str(path))

    def _read(self, path: str) -> dict:
        data = Path(path).read_bytes()
        if hashlib.sha256(data).hexdigest() != self.digests.get(path):
            raise _tampered(path)
        return load_tensors(io.BytesIO(data))

    def prefetch(self) -> None:
        """Read and check the truth's saved outputs in the background, while a candidate's program runs
        and this process only waits (860 MB took 2.1 s on the H100 machine's host, after the run): the
        in-program captures first, then the replays', up to TRUTH_KEPT_BYTES in all, kept for the next
        candidates. A file that fails its digest is left to `load`, which raises."""
        if self._prefetching is not None:
            return

        def read() -> None:
            room = TRUTH_KEPT_BYTES
            for path in sorted(p for p in self.digests if p.endswith(".pt") and within(Path(p), self.truth)):
                room -= self.stats[path][0]
                if room < 0:
                    return
                try:
                    self._loaded[path] = self._read(path)
                except GroundTruthError:
                    continue

        self._prefetching = threading.Thread(target=read, name="truth-prefetch", daemon=True)
        self._prefetching.start()

    def check_stability(self, settings: ValidationSettings) -> list[str]:
        """Runs the unchanged program again (once per session, whichever candidate asks first) and
        sets `unstable`; returns the notes of what the runs showed (empty after the first call)."""
        with self._stability_lock:
            if self.stability_known or self.again is None:
                return []
            self.stability_known = True
            try:
                runs = [(self.manifest, self.duration_s), *(self.again(i) for i in range(1, settings.reference_runs))]
            except IntelliPerfError as exc:  # the unchanged program failed this time: nothing to relax
                note = (
                    f"a second run of the unchanged program failed ({exc.message.splitlines()[0][:200]}): "
                    "whether it is deterministic is unknown, so in-program values are compared as they are"
                )
                self.notes.append(note)
                return [note]
            self.unstable, notes = _unstable(runs, self.kernel, settings, self.load)
            self.notes += notes
            return notes

    def original(self, path: str | Path) -> Path:
        """A path in the reference's copy, in the user's project."""
        return self.origin / Path(path).resolve().relative_to(self.program.root.resolve())


def _capture_env(
    kernel: str,
    capture_dir: Path,
    interpret: bool,
    settings: ValidationSettings,
    extra: Sequence[str] = (),
    expected: int | None = None,
    trace: TraceSettings | None = None,
) -> dict:
    env = workload_env(capture_dir, interpret, trace or TraceSettings(), secrets=tuple(settings.secrets))
    env.update(
        {
            ENV_KERNEL: re.escape(kernel),
            ENV_DIR: str(capture_dir),
            ENV_LIMITS: ",".join(map(str, settings.capture_limits)),
            ENV_ARGS: ",".join(extra),
        }
    )
    if expected is not None:
        env[ENV_EXPECTED] = str(expected)
    return env


def capture_reference(
    program: Program,
    kernel: str,
    *,
    interpret: bool,
    work_dir: Path,
    settings: ValidationSettings | None = None,
    sandbox: sandboxing.Sandbox | None = None,
    exclude: tuple[Path, ...] = (),
    profiled: Sequence[dict] = (),
) -> ReferenceRun:
    """Run the reference (a copy of `program.root`) with the capture on and prepare the replays.
    `profiled`: the kernel's launch signatures as the profile recorded them; the reference's run must
    reproduce them (`workload.check_same`, else WorkloadMismatchError, exit 2).
    Raises WorkloadError if the reference itself fails; SandboxError if no sandbox can run."""
    from intelliperf.errors import NoKernelsError, WorkloadFailedError

    settings = settings or ValidationSettings()
    work_dir = Path(work_dir)
    box = sandbox or settings.sandbox.build((program.root, work_dir), settings.secrets)
    truth, inputs = work_dir / "truth", work_dir / "inputs"
    copy = copy_project(program.root, {}, work_dir / "project", exclude=(*exclude, work_dir))
    ref = Program(
        copy,
        in_copy(program.command, program.root, copy),
        copy / program.workdir().resolve().relative_to(Path(program.root).resolve()),
        env=program.env,
    )

    def run(i: int, folder: Path = truth) -> tuple[dict, float]:
        capture_dir = folder / f"capture-{i}"
        capture_dir.mkdir(parents=True, exist_ok=True)
        env = _capture_env(kernel, capture_dir, interpret, settings) | ref.env
        result = confined(
            box,
            ref.command,
            cwd=ref.workdir(),
            env=env,
            home=work_dir / "home",
            seed=settings.seed,
            writable=(copy, capture_dir),
        )
        if result.returncode != 0:  # no time limit: the reference is the user's own program
            raise WorkloadFailedError(
                program.command,
                result.returncode,
                scrub("\n".join(result.tail[-12:]))
                + (
                    "\n(run in intelliperf's sandbox: it sees no $HOME, /tmp or secret variables; "
                    "--sandbox-read PATH and --sandbox-env NAME let more through)"
                    if box.enabled
                    else ""
                ),
            )
        manifest = load_capture(capture_dir)
        if manifest is None:
            raise NoKernelsError(f"the reference run never launched {kernel!r}")
        return manifest, result.duration_s

    out = truth / "replay"
    for folder in (out, inputs):
        folder.mkdir(parents=True, exist_ok=True)
    worker = start_worker(
        box,
        "prepare",
        out,
        cwd=copy,
        home=work_dir / "home",
        seed=settings.seed,
        env=_worker_env(interpret, out, settings, ref.env),
        writable=(out, inputs),
        readable=(copy,),
    )
    try:
        manifest, duration = run(0)
        if profiled:
            withheld = sorted(set(os.environ) - set(box.env(dict(os.environ))))
            check_same(kernel, list(profiled), recorded_signatures(truth / "capture-0", kernel), withheld)
        reference = ReferenceRun(
            ref,
            Path(program.root),
            kernel,
            Path(manifest["dir"]),
            manifest,
            duration,
            interpret,
            box,
            truth,
            inputs,
            {},
        )
        begin = time.perf_counter()
        reference.replay = _prepare_replay(reference, worker, settings)
        reference.replay_s = time.perf_counter() - begin
    finally:
        worker.stop()
    # Whether two seeded runs agree matters only once a candidate differs from this run: asked then.
    reference.again = lambda i: run(i, work_dir / "again")
    reference.home = work_dir / "home"
    reference.notes += reference.replay.get("notes", [])
    reference.digests, reference.stats = _digests(truth, inputs), _stats(truth, inputs)
    return reference


def _unstable(
    runs: list, kernel: str, settings: ValidationSettings, load_truth: Callable[[Path], dict]
) -> tuple[list[str], list[str]]:
    """Buffers on which two seeded runs of the unchanged program disagree (the first run's are the truth)."""
    if len(runs) < 2:
        return [], []
    problems, _ = compare_captures(runs[0][0], runs[1][0], kernel, settings.tolerances, load_ref=load_truth)
    names = sorted({p.buffer for p in problems if p.kind in VALUE_KINDS and p.buffer})
    notes = []
    if names:
        notes.append(
            f"two runs of the unchanged program, seeded alike, wrote different {', '.join(names)} "
            f"({problems[0].message[:200]}): the program is not deterministic, so those buffers are compared "
            "on the replays of identical inputs only, not in-program"
        )
    other = [p.kind for p in problems if p.kind not in VALUE_KINDS]
    if other:
        notes.append(f"two runs of the unchanged program differ in {', '.join(sorted(set(other)))}")
    return names, notes


def _prepare_replay(reference: ReferenceRun, worker: Running, settings: ValidationSettings) -> dict:
    ref = reference.manifest
    out = reference.truth / "replay"
    job = {
        "kernel": ref["kernel"],
        "launcher": ref["launcher"],
        "launch": ref["launches"][0],
        "written": ref["written"],
        "read": ref["read"],
        "indexes": ref.get("indexes", []),
        "locks": ref.get("locks", []),
        "trials": settings.trials,
        "seed": settings.seed,
        "inputs_dir": str(reference.inputs),
        "out_dir": str(out),
    }
    (out / "job.json").write_text(json.dumps(job))
    worker.send(str(out / "job.json"))
    result = worker.wait(None)
    summary = _summary(out, result, "the reference side of the replay", None)
    partial = (out / "replay.json").exists() and json.loads((out / "replay.json").read_text())
    if summary.get("problem") and partial and partial.get("runs"):  # it died on a later trial: keep the earlier
        done = partial["runs"]
        why = summary["problem"].message.splitlines()[-1][:200]
        return {
            **partial,
            "notes": partial.get("notes", [])
            + [
                f"the reference side of the replay died after {len(done)} trials ({why}); the trials after "
                f"{done[-1]['label']} are not compared"
            ],
        }
    if summary.get("problem") or summary.get("error"):
        why = summary["problem"].message if summary.get("problem") else summary["error"]
        summary["notes"] = [
            f"the reference itself could not be replayed ({scrub(why)[:500]}): no candidate can be verified by a replay"
        ]
        summary["runs"] = []
    return summary


def _without_bootstrap(pythonpath: str) -> str:
    return os.pathsep.join(p for p in pythonpath.split(os.pathsep) if "bootstrap" not in p)


def _files(*folders: Path) -> list[Path]:
    return [path for folder in folders for path in sorted(Path(folder).rglob("*")) if path.is_file()]


def _digests(*folders: Path) -> dict[str, str]:
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in _files(*folders)}


def _stats(*folders: Path) -> dict[str, tuple[int, int]]:
    return {str(path): (st.st_size, st.st_mtime_ns) for path in _files(*folders) for st in [path.stat()]}


def _tampered(path: str) -> GroundTruthError:
    return GroundTruthError(
        f"the reference's saved outputs changed after they were taken ({path}); no verdict can be trusted"
    )


def validate(
    reference: ReferenceRun,
    candidate: Program,
    *,
    work_dir: Path | None = None,
    settings: ValidationSettings | None = None,
    trace: TraceSettings | None = None,
    ahead: Ahead | None = None,
    quiet: Callable[[], str | None] | None = None,
) -> Verdict:
    """Correctness (in-program + replay), then speed on a GPU. Never raises for a bad candidate.

    With `trace`, the candidate run also records the launch profile and the address trace into
    `work_dir/candidate` (load it with `load_recording`), so the optimize loop gets the formula's
    metric for the candidate from the same single run of the program. `ahead` (`start_ahead`) holds
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
        _capture_env(
            reference.kernel, cand_dir, reference.interpret, settings, ref["written"], ref["dispatches"], trace
        )
        | candidate.env
    )
    reference.seed_cache(work_dir / "home")
    warm = None if settings.screen else _start_workers(reference, candidate, work_dir, settings, ahead)
    if warm is not None:
        warm.quiet = quiet
    reference.prefetch()
    try:
        result = confined(
            reference.sandbox,
            candidate.command,
            cwd=candidate.workdir(),
            env=env,
            home=work_dir / "home",
            seed=settings.seed,
            writable=(candidate.root, cand_dir),
            timeout_s=timeout,
            ahead=ahead.program if ahead else None,
        )
        verdict = _judge(verdict, reference, candidate, result, timeout, start, cand_dir, warm, work_dir, settings)
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


@dataclass
class Ahead:
    """Pythons started for a candidate not made yet (`start_ahead`): its program's and its workers' (the
    replay's, and each compute-sanitizer check's where they will run). `validate` hands each its run where
    it fits (`HeadStart.fits`) and starts the others afresh; what nothing took is stopped."""

    program: HeadStart | None  # None where the command is no Python's
    workers: dict[str, HeadStart]  # "replay", and each sanitizer check
    timing: dict[str, _TimingHead] = field(default_factory=dict)  # "reference", "candidate" (GPU)

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
class _TimingHead:
    """A timing worker's Python started ahead (`start_ahead`): its parent's end (`performance.started`), and
    the numbers of the pipe ends it inherited (commands in, answers out), which its `time` command names."""

    head: HeadStart
    side: Any
    fds: tuple[int, int]


def start_ahead(
    box: sandboxing.Sandbox,
    python: str,
    root: Path,
    work_dir: Path,
    *,
    inputs: Path,
    reference_root: Path,
    interpret: bool,
    settings: ValidationSettings,
    env: dict,
    cuda: bool = False,
) -> Ahead:
    """Pythons started for a candidate not made yet, laid out as `validate` will have it: its copy of the
    project in `root`, `work_dir` the validation's folder, `inputs` the reference's replay inputs and
    `reference_root` its copy of the project (both made now where the reference is not captured yet), `env`
    the candidate's own (`Program.env`); the folders are made empty now. On a GPU the two timing workers'
    too (they inherit their pipes now). `cuda`: the workers (not the program) make their CUDA contexts now,
    where the reference said they fit beside its run (`fits_beside`): under racecheck a context took 0.6 s of
    the worker's trial, the attempt's critical path on a pipelined GEMM (H100)."""
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
    for name, (wrap, extra) in _worker_kinds(interpret, settings)[0].items():
        folder = _worker_folder(work_dir, name)
        workers[name] = HeadStart.start(
            box,
            WORKER[0],
            env=confined_env(box, _worker_env(interpret, folder, settings, env | extra | ours), home, settings.seed),
            writable=(folder, home),
            readable=(inputs, root),
            go_file=folder / ".intelliperf-run.json",
            wrap=tuple(wrap),
        )
    ahead = Ahead(program, workers)
    if not interpret and settings.timing:
        for name, project in (("reference", reference_root), ("candidate", root)):
            ahead.timing[name] = _timing_ahead(box, project, inputs, work_dir / f"timing-{name}", settings, env | ours)
    return ahead


def _timing_ahead(
    box: sandboxing.Sandbox, project: Path, inputs: Path, out: Path, settings: ValidationSettings, env: dict
) -> _TimingHead:
    """One side's timing worker started ahead: `_timing_side`'s sandbox, environment and pipes, no job yet."""
    held: dict = {}

    def start(cmd_fd: int, out_fd: int):
        held["head"] = HeadStart.start(
            box,
            WORKER[0],
            env=_timing_env(box, False, out, settings, env),  # (timing: compiled kernels only)
            writable=(out,),
            readable=(inputs, project),
            go_file=out / ".intelliperf-run.json",
            pass_fds=(cmd_fd, out_fd),
        )
        held["fds"] = (cmd_fd, out_fd)
        return held["head"].running.proc

    side = started(start)
    return _TimingHead(held["head"], side, held["fds"])


def _judge(
    verdict: Verdict,
    reference: ReferenceRun,
    candidate: Program,
    result,
    timeout: float,
    start: float,
    cand_dir: Path,
    warm: _Warm | None,
    work_dir: Path,
    settings: ValidationSettings,
) -> Verdict:
    """The candidate's run done: its captures compared, then its replay (already warm) and timing; a
    screen's (no workers) ends after the comparison."""
    ref = reference.manifest
    verdict.seconds["candidate_run"] = round(time.perf_counter() - start, 3)
    failure = _process_problem("the candidate program", result, timeout)
    if failure:
        verdict.problems.append(failure)
        return verdict
    begin = time.perf_counter()
    cand = load_capture(cand_dir)
    outside = _loaded_outside(cand, candidate)
    if outside:
        verdict.problems.append(outside)
        return verdict
    reference.verify()
    launcher_judges = warm is not None and any(r["mode"] == "launcher" for r in reference.replay.get("runs", []))
    changed = launcher_judges and _launcher_changed(ref.get("launcher"), (cand or {}).get("launcher"))

    def compared() -> tuple[list[Problem], list[str]]:
        return compare_captures(
            ref, cand, reference.kernel, settings.tolerances, set(reference.unstable), reference.load,
            launcher_judges, changed,
        )  # fmt: skip

    problems, checks = compared()
    if any(p.kind in VALUE_KINDS for p in problems):  # is the program itself that unstable? Asked once.
        verdict.notes += reference.check_stability(settings)
        problems, checks = compared()
    verdict.problems += _noted(verdict, problems)
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
    job = _candidate_job(reference, cand, work_dir / "replay")
    mode = early_mode(job["plan"])
    job["early_done"] = mode if _stands(warm.early, job, mode) else None
    # The candidate side runs the same trials as the reference side did: its time, not the program's, is the
    # yardstick (a replay of 14 trials can outlast a short program several times over on a loaded CPU).
    replay_timeout = settings.timeout_s or max(timeout, _limit(reference.replay_s, settings))
    return _replay_and_time(verdict, reference, candidate, cand, job, warm, replay_timeout, settings)


def _replay_and_time(
    verdict: Verdict,
    reference: ReferenceRun,
    candidate: Program,
    cand: dict,
    job: dict,
    warm: _Warm,
    replay_timeout: float,
    settings: ValidationSettings,
) -> Verdict:
    """The job to the warm replay worker, and its first trials to the warm sanitizers; on a GPU the timing
    workers started ahead are taken over (or start now): their start-up, not their timing, overlaps the
    program run and the replay; the parent times only after the replay and the sanitizers have ended."""
    start = time.perf_counter()
    out = Path(job["out_dir"])
    warm.replay.send(_write_job(job, out))
    firsts = _first_trials(job)
    if not firsts["plan"]:
        warm.unsanitize("compute-sanitizer not run: nothing of the candidate could be replayed")
    # Large inputs: one kind of worker holds them on the GPU at a time (replay, sanitizers, timing).
    beside = fits_beside(reference)
    timing: dict = {}
    try:
        if beside:
            _send_sanitizers(warm, firsts, out.parent)
            timing = _start_timing(reference, job, candidate.root, out.parent, settings, candidate.env, warm)
        replay = _summary(out, warm.replay.wait(replay_timeout), "the replay of the candidate", replay_timeout)
        verdict.seconds["replay"] = round(time.perf_counter() - start, 3)
        _compare_replay(verdict, reference, cand, job, replay, settings)
        if verdict.correct:  # a failed candidate waits for nothing more: its sanitizers end with `warm`
            if not beside:
                _send_sanitizers(warm, firsts, out.parent)
            _sanitized(verdict, warm, out.parent, firsts, settings.timeout_s or 4 * replay_timeout, start)
        if verdict.correct and not beside:
            timing = _start_timing(reference, job, candidate.root, out.parent, settings, candidate.env, warm)
        if verdict.correct and warm.quiet is not None:
            said = warm.quiet()
            verdict.notes += [said] if said else []
        return _timed(verdict, reference, job, timing, settings)
    finally:  # timed sides ended already; unused ones (a failed replay) may still be starting
        for side in timing.values():
            side.stop()


def _send_sanitizers(warm: _Warm, job: dict, work_dir: Path) -> None:
    for check, worker in warm.sanitizers.items():
        worker.send(_write_job(job, work_dir / "sanitizer" / check))


def _first_trials(job: dict) -> dict:
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


def _write_job(job: dict, out: Path) -> str:
    """`job` with `out` as its out_dir, written to out/job.json: the path a worker is given."""
    job = {**job, "out_dir": str(out)}
    (out / "job.json").write_text(json.dumps(job))
    return str(out / "job.json")


def _sanitized(verdict: Verdict, warm: _Warm, work_dir: Path, job: dict, timeout: float, start: float) -> None:
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
        problem = _process_problem(f"compute-sanitizer {check} on the replay", result, timeout)
        if problem is not None:
            found.append(problem if problem.kind == "timeout" else _sanitizer_problem(check, result.tail))
    verdict.seconds["sanitizer"] = round(time.perf_counter() - start, 3)
    ran = ", ".join(run["mode"] for run in job["plan"])
    done = f"compute-sanitizer ({', '.join(warm.sanitizers)}) on the candidate's replay ({ran})"
    verdict.notes += _racecheck_notes(work_dir / "sanitizer" / "racecheck")
    if found:
        verdict.problems += found
        verdict.notes.append(done)
        verdict.correct = False
    else:
        verdict.checks.append(done + ": clean")


def _racecheck_notes(folder: Path) -> list[str]:
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


def _compare_replay(
    verdict: Verdict, reference: ReferenceRun, cand: dict, job: dict, replay: dict, settings: ValidationSettings
) -> None:
    """The replay's outputs compared with the truth."""
    begin = time.perf_counter()
    reference.verify()
    same_params = cand["kernel"]["params"] == reference.manifest["kernel"]["params"]
    replayed = _noted(verdict, _replay_problems(reference, replay, Path(job["out_dir"]), settings, same_params))
    named = [p for p in replayed if p.kind in NAMED_BY_REPLAY]
    verdict.problems = named + verdict.problems + [p for p in replayed if p.kind not in NAMED_BY_REPLAY]
    verdict.checks += _replay_checks(replay)
    verdict.notes += replay.get("notes", [])
    verdict.correct = not verdict.problems
    verdict.seconds["compare"] = round(verdict.seconds.get("compare", 0) + time.perf_counter() - begin, 3)


def _launcher_changed(ref: dict | None, cand: dict | None) -> bool:
    """Whether the candidate's launcher (the function that launched the kernel) reads otherwise than the
    reference's: then work may have moved between it and the kernel."""
    if not ref or not cand or ref.get("qualname") != cand.get("qualname"):
        return bool(ref or cand)
    return _function_text(ref["file"], ref["qualname"]) != _function_text(cand["file"], cand["qualname"])


def _function_text(file: str, qualname: str) -> str | None:
    import ast

    try:
        text = Path(file).read_text()
        nodes: list = ast.parse(text).body
    except (OSError, SyntaxError, ValueError):
        return None
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
        if found is None:
            return None
        nodes = found.body
    return ast.dump(found) if found is not None else None


def _noted(verdict: Verdict, problems: list[Problem]) -> list[Problem]:
    """The problems that hold against the candidate; a change the validator accepts but reports
    (NaN handling the reference left to its atomics) goes to the notes, once per buffer."""
    for p in problems:
        said = f"changes NaN handling: {p.message}"
        if p.kind == "nan-handling" and said not in verdict.notes:
            verdict.notes.append(said)
    return [p for p in problems if p.kind != "nan-handling"]


def _timed(verdict: Verdict, reference: ReferenceRun, job: dict, timing: dict, settings: ValidationSettings) -> Verdict:
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


def load_factor() -> float:
    """How much slower than when idle this machine runs now: runnable processes per core, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # no load average on this platform
        return 1.0


def busy() -> bool:
    """More runnable processes than three quarters of the cores: a timeout may be the machine's, not the
    candidate's."""
    try:
        return os.getloadavg()[0] > 0.75 * (os.cpu_count() or 1)
    except OSError:
        return False


def run_limit(reference: ReferenceRun, settings: ValidationSettings) -> float:
    """How long a candidate's program run may take: the user's limit, else `_limit` of the reference's run."""
    return settings.timeout_s or _limit(reference.duration_s, settings)


def _limit(reference_s: float, settings: ValidationSettings) -> float:
    """A candidate's limit where the user set none: what the reference took, with room, scaled by load."""
    return (4 * reference_s + 30) * load_factor() * settings.patience


def _loaded_outside(cand: dict | None, candidate: Program) -> Problem | None:
    """The candidate run must execute the copy's kernel, not an installed or original one."""
    if cand is None or not cand["kernel"].get("file"):
        return None
    root = Path(candidate.root).resolve()
    file = Path(cand["kernel"]["file"]).resolve()
    if within(file, root):
        return None
    return Problem(
        kind="capture",
        message=(
            f"the candidate run took the kernel from {file}, outside the candidate's copy {root}, so the change was "
            "never run (is the package installed from the original tree, e.g. `pip install -e`, ahead of the copy "
            "on sys.path?)"
        ),
    )


def _candidate_job(reference: ReferenceRun, cand: dict, out: Path) -> dict:
    ref = reference.manifest
    return {
        "kernel": cand["kernel"],
        "launcher": cand["launcher"],
        "launch": cand["launches"][0],
        "reference_params": ref["kernel"]["params"],
        "reference_launch": ref["launches"][0],
        "reference_launcher_args": (ref.get("launcher") or {}).get("args", []),
        "written": ref["written"],
        "plan": reference.replay.get("runs", []),
        "inputs_dir": str(reference.inputs),
        "out_dir": str(out),
    }


def _worker_env(interpret: bool, out: Path, settings: ValidationSettings, extra: dict) -> dict:
    env = workload_env(out, interpret, TraceSettings(), secrets=tuple(settings.secrets)) | extra
    env["PYTHONPATH"] = _without_bootstrap(env["PYTHONPATH"])
    return env


def start_worker(
    box: sandboxing.Sandbox,
    mode: str,
    out: Path,
    *,
    cwd: Path,
    home: Path,
    seed: int,
    env: dict,
    writable: tuple[Path, ...],
    readable: tuple[Path, ...],
    early: dict | None = None,
    wrap: Sequence[str] = (),
    ahead: HeadStart | None = None,
) -> Running:
    """A replay worker started ahead of its job (the program it waits for still runs): it takes the
    start-up of Python, torch and Triton off the critical path, and runs `early` meanwhile. Its
    job's path goes to it with `send`; `stop` ends it when no job comes. `wrap` goes before Python
    (a tool that runs the worker as its child, e.g. compute-sanitizer). In `ahead`, a Python started for
    it before the candidate existed, where that fits (`HeadStart.fits`)."""
    out.mkdir(parents=True, exist_ok=True)
    command = [*wrap, *WORKER, "serve", mode]
    if early is not None:
        (out / "early.json").write_text(json.dumps(early))
        command.append(str(out / "early.json"))
    env = confined_env(box, env, home, seed)
    taken = ahead.take(box, command, cwd, env, (*writable, home), readable) if ahead is not None else None
    if taken is not None:
        return taken
    return Running(
        box.wrap(command, cwd=cwd, writable=(*writable, home), readable=readable),
        cwd=str(cwd),
        env=env,
        echo=Tail(),
        stdin=True,
    )


@dataclass
class _Warm:
    """The workers started before the candidate's program runs, each waiting for its job."""

    replay: Running
    early: dict | None  # the job whose `early_mode` trials the workers run while they wait
    sanitizers: dict[str, Running]  # compute-sanitizer check -> its worker; empty when none runs
    unsanitized: str | None = None  # why none runs where they were due
    timing: dict[str, Any] = field(default_factory=dict)  # side -> timing worker started ahead (GPU)
    timed: dict | None = None  # the job the candidate's timing worker was started with
    timed_mode: str | None = None  # what it times: the launcher, or the kernel's own launch
    timing_heads: dict[str, _TimingHead] = field(default_factory=dict)  # timing workers' Pythons started ahead
    timed_ahead: list[str] = field(default_factory=list)  # the timing workers handed their job in those
    quiet: Callable[[], str | None] | None = None  # before the timing: the caller's GPU work beside it stops

    def started_ahead(self) -> list[str]:
        """The workers that ran in a Python started before the candidate existed (`start_ahead`)."""
        workers = {"replay worker": self.replay, **self.sanitizers}
        return [name for name, running in workers.items() if running.ahead] + self.timed_ahead

    def stop(self) -> None:
        for worker in (self.replay, *self.sanitizers.values(), *self.timing.values()):
            worker.stop()
        for timer in self.timing_heads.values():
            timer.side.stop()

    def take_timing(self) -> dict[str, Any]:
        """The timing workers started ahead, now the caller's to time or stop."""
        sides, self.timing = self.timing, {}
        return sides

    def unsanitize(self, why: str) -> None:
        for worker in self.sanitizers.values():
            worker.stop()
        self.sanitizers, self.unsanitized = {}, why


SANITIZER_CHECKS = ("memcheck", "racecheck")  # out-of-bounds and invalid accesses; shared-memory hazards


def _start_workers(
    reference: ReferenceRun,
    candidate: Program,
    work_dir: Path,
    settings: ValidationSettings,
    ahead: Ahead | None = None,
) -> _Warm:
    """The candidate's replay worker and, on a GPU, its compute-sanitizer workers, started before its
    program runs (in the Pythons `ahead` started for them where they fit): their start-up (Python, torch,
    Triton; under the sanitizer an instrumented CUDA context, seconds) overlaps the program's run. The
    trials of `early_mode` start at once too (the sanitizers' first one), on the reference's description in
    the candidate's copy: the launcher's (the candidate may change its body, not where it is or what it
    takes), or where the kernel is launched from module level its own at the reference's recorded launch;
    when the candidate's own run says it called something else (`_stands`), they run again. On a GPU not
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
    expected = _candidate_job(reference, mapped, _worker_folder(work_dir, "replay"))
    # Not where the inputs are large, or the program's recorded peak leaves no room (`fits_beside`): the
    # trials would hold GPU memory while the program, which may need it, runs.
    beside = reference.interpret or fits_beside(reference)
    early = expected if beside and reference.replay.get("runs") else None
    late = {} if beside else {names.CUDA_LATE: "1"}  # no CUDA context either while the program runs
    kinds, unsanitized = _worker_kinds(reference.interpret, settings)

    def worker(name: str) -> Running:
        folder = _worker_folder(work_dir, name)
        wrap, extra = kinds[name]
        job = early and {**(early if name == "replay" else _first_trials(early)), "out_dir": str(folder)}
        return start_worker(
            reference.sandbox,
            "run",
            folder,
            cwd=Path(mapped["kernel"]["file"]).parent,
            home=work_dir / "home",
            seed=settings.seed,
            env=_worker_env(reference.interpret, folder, settings, candidate.env | late | extra),
            writable=(folder,),
            readable=(reference.inputs, candidate.root),
            early=job,
            wrap=wrap,
            ahead=ahead.take(name) if ahead else None,
        )

    warm = _Warm(worker("replay"), early, {}, unsanitized)
    if ahead is not None:
        warm.timing_heads, ahead.timing = ahead.timing, {}
    _time_ahead(warm, reference, expected, candidate, work_dir, settings)
    for check in [name for name in kinds if name != "replay"]:
        warm.sanitizers[check] = worker(check)
    return warm


def _worker_folder(work_dir: Path, name: str) -> Path:
    """Where a candidate's worker writes: the replay's, or a compute-sanitizer check's."""
    return work_dir / "replay" if name == "replay" else work_dir / "sanitizer" / name


def _worker_kinds(
    interpret: bool, settings: ValidationSettings
) -> tuple[dict[str, tuple[list[str], dict]], str | None]:
    """The workers a candidate gets, each with the tool it runs under and its own variables: the replay's,
    and on a GPU each compute-sanitizer check's; and why those are not run where they were due."""
    kinds: dict[str, tuple[list[str], dict]] = {"replay": ([], {})}
    if not (settings.sanitizer if settings.sanitizer is not None else not interpret):
        return kinds, None
    tool = find_tool(names.COMPUTE_SANITIZER, "compute-sanitizer", "CUDA_HOME", "/usr/local/cuda")
    if tool is None:
        return kinds, "compute-sanitizer not run: it was not found (PATH, $CUDA_HOME/bin)"
    for check in SANITIZER_CHECKS:
        wrap = [tool, "--tool", check, "--error-exitcode", "86", "--print-limit", "8", "--show-backtrace", "device"]
        # Each tensor its own allocation: inside torch's cached blocks an access past a tensor's end is not one
        # past an allocation's, and memcheck would not see it.
        extra = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
        if check == "racecheck" and not interpret:  # (the interpreter's launches have no CTAs to cap)
            ctas = settings.racecheck_ctas
            extra[names.RACECHECK_CTAS] = "sm" if ctas is None else str(ctas)
        kinds[check] = (wrap, extra)
    return kinds, None


# The ground truth's outputs the parent keeps in memory, read while the first candidate's program runs.
TRUTH_KEPT_BYTES = 2 << 30

# Inputs a worker places on the GPU above this: on a GPU no trial and no timing worker starts ahead of the
# program run, and the replay, the sanitizers and the timing take turns instead of running side by side.
AHEAD_INPUTS_BYTES = 1 << 30
# Beside a candidate's program run: the replay worker, two sanitizer workers and two timing workers, each
# holding a CUDA context with torch and Triton loaded besides its trial's inputs.
BESIDE_WORKERS = 5
# A worker's own: 549 MiB measured on the H100 (torch, Triton, one kernel launched), 783 MiB under
# compute-sanitizer memcheck, 659 MiB under racecheck (benchmarks/worker_memory.py); rounded up.
WORKER_CONTEXT_BYTES = 1 << 30


def fits_beside(reference: ReferenceRun, programs: int = 1) -> bool:
    """Whether the first trial's inputs (about what each replay, sanitizer or timing worker places on the
    GPU) are small enough for those workers to hold them side by side, and beside the program run; and,
    where the reference's run said how much GPU memory it held at most, whether the program and those
    workers fit on the device together (a candidate run out of memory because of intelliperf's own workers
    would be rejected for nothing)."""
    placed = [reference.inputs / f"{mode}-0.pt" for mode in ("launcher", "kernel")]
    largest = max((path.stat().st_size for path in placed if path.exists()), default=0)
    memory = reference.manifest.get("gpu_memory")
    beside = BESIDE_WORKERS * (largest + WORKER_CONTEXT_BYTES)
    held = programs * memory["peak_reserved"] if memory else 0  # (`programs`: runs of the program at once)
    return largest <= AHEAD_INPUTS_BYTES and (not memory or held + beside <= 0.9 * memory["total"])


def _time_ahead(
    warm: _Warm, reference: ReferenceRun, job: dict, candidate: Program, work_dir: Path, settings: ValidationSettings
) -> None:
    """On a GPU, the timing workers started before the candidate's program runs, so their start-up
    (Python, torch, the kernel's compilation, the inputs) is over when the replay ends: the reference's
    always; the candidate's on the reference's description of what it would call (the launcher, or for a
    launch from module level the kernel at the recorded launch); when the candidate's run says it called
    something else (`_stands`), `_start_timing` starts it again. Not where the inputs a timing worker
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


def _timed_mode(reference: ReferenceRun, job: dict) -> str | None:
    """What the timing calls (as `performance._timed_call` chooses): the launcher on its first trial's inputs,
    else the kernel's own launch on its first trial's; None when neither was replayed."""
    for mode in ("launcher", "kernel"):
        if any(r["mode"] == mode for r in job["plan"]) and (reference.inputs / f"{mode}-0.pt").exists():
            return mode
    return None


def _stands(early: dict | None, job: dict, mode: str | None) -> bool:
    """Whether work of `mode` done on `early` (the reference's description of what the candidate would
    call) did what the candidate's own run called: for the launcher's trials, the same kernel file and
    launcher (file, name, arguments); for the kernel's own, the same kernel (file, name, parameters)
    launched the same way (grid, options, every scalar argument)."""
    if early is None or mode is None or (mode == "launcher" and not (early["launcher"] and job["launcher"])):
        return False

    def key(j: dict) -> tuple:
        place: tuple
        if mode == "kernel":
            launch = j["launch"]
            args = [(d["name"], d["kind"], d.get("value")) for d in launch["args"]]
            place = (j["kernel"]["name"], j["kernel"]["params"], launch["grid"], launch.get("options", {}), args)
        else:
            side = j["launcher"]
            place = (str(Path(side["file"]).resolve()), side["qualname"], bool(side.get("varargs")))
            place += ([d["name"] for d in side.get("args", [])],)
        return (str(Path(j["kernel"]["file"]).resolve()), *place)

    return key(early) == key(job)


def _summary(out: Path, result, what: str, timeout: float | None) -> dict:
    failure = _process_problem(what, result, timeout or 0)
    summary_path = out / "replay.json"
    if failure or not summary_path.exists():
        return {
            "runs": [],
            "failures": [],
            "notes": [],
            "problem": failure
            or Problem(
                kind="crash", message=f"{what} wrote no result; output tail:\n" + scrub("\n".join(result.tail[-15:]))
            ),
        }
    try:
        return json.loads(summary_path.read_text())
    except ValueError:
        return {
            "runs": [],
            "failures": [],
            "notes": [],
            "problem": Problem(kind="replay-failed", message=f"{what} wrote an unreadable result"),
        }


def _start_timing(
    reference: ReferenceRun,
    job: dict,
    root: Path,
    work_dir: Path,
    settings: ValidationSettings,
    env: dict,
    warm: _Warm,
) -> dict:
    """On a GPU, both sides' timing workers: those `warm` started ahead where they time what `job` would
    (the candidate's only when its run called what they expected), the others now; empty when nothing
    will be timed."""
    sides = warm.take_timing()
    if reference.interpret or not settings.timing or not job["plan"]:
        for side in sides.values():
            side.stop()
        return {}
    if "candidate" in sides and not _stands(warm.timed, job, warm.timed_mode):
        sides.pop("candidate").stop()
    jobs = _timing_jobs(reference, job, root)
    for name in jobs.keys() - sides.keys():
        side, folder = jobs[name]
        sides[name] = _timing_side(reference, name, side, folder, work_dir, settings, env, warm)
    return sides


def _timing_jobs(reference: ReferenceRun, job: dict, root: Path) -> dict[str, tuple[dict, Path]]:
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
    verdict: Verdict, reference: ReferenceRun, job: dict, timing: dict, settings: ValidationSettings
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
        if any(r["mode"] == "launcher" for r in reference.replay.get("runs", []))
        else "the kernel's own recorded launch (no launcher could be called)"
    )
    verdict.speedup = speedup_interval(
        raw["reference_ms"],
        raw["candidate_ms"],
        confidence=0.95,
        method=f"{timed}; {raw['method']} on {raw['device']}",
    )
    verdict.faster, problem = judge(verdict.speedup, settings.threshold)
    flags = [plausibility(verdict.speedup, _bytes_touched(ref), device_bandwidth()), forged(raw)]
    verdict.problems += [p for p in (problem, *flags) if p is not None]
    verdict.accepted = verdict.correct and verdict.faster and not any(flags)


def _timing_side(
    reference: ReferenceRun,
    name: str,
    job: dict,
    root: Path,
    work_dir: Path,
    settings: ValidationSettings,
    env: dict,
    warm: _Warm,
):
    """One side's timing worker ("reference" or "candidate") with its job (`performance.started`), talking over
    two inherited pipes: in the Python started for it ahead (`warm.timing_heads`) where that fits, else
    started now in the sandbox."""
    out = work_dir / f"timing-{name}"
    out.mkdir(parents=True, exist_ok=True)
    path = _write_job(job, out)
    folder = Path(job["kernel"]["file"]).parent
    box = reference.sandbox
    full_env = _timing_env(box, reference.interpret, out, settings, env)
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


def _timing_env(box: sandboxing.Sandbox, interpret: bool, out: Path, settings: ValidationSettings, env: dict) -> dict:
    return confined_env(box, _worker_env(interpret, out, settings, env), out / "home", settings.seed)


def _bytes_touched(ref: dict) -> int:
    """Bytes of the distinct buffers the kernel reads or writes, in its first kept launch."""
    import torch

    touched = set(ref["read"]) | set(ref["written"])
    return sum(
        numel(arg) * getattr(torch, arg["dtype"]).itemsize
        for arg in ref["launches"][0]["args"]
        if arg["name"] in touched and arg["kind"] == "tensor" and "alias_of" not in arg
    )


def _process_problem(what: str, result, timeout: float) -> Problem | None:
    tail = scrub("\n".join(result.tail[-15:]))
    if result.timed_out:
        return Problem(
            kind="timeout", message=f"{what} ran past its {timeout:.0f} s timeout and was killed; output tail:\n{tail}"
        )
    if result.returncode != 0:
        how = f"exit code {result.returncode}"
        if result.returncode < 0:
            how = f"signal {signal.Signals(-result.returncode).name}"
        return Problem(kind="crash", message=f"{what} failed ({how}); output tail:\n{tail}")
    return None


def _replay_problems(
    reference: ReferenceRun, replay: dict, out: Path, settings: ValidationSettings, kernel_expected: bool = True
) -> list[Problem]:
    """Problems of the candidate's replay against the ground truth. Every planned launcher trial
    must have run (or failed), and every kernel trial when the kernel kept its parameters."""
    import torch

    if replay.get("problem"):
        return [replay["problem"]]
    if replay.get("error"):
        return [
            Problem(
                kind="replay-failed",
                message=scrub(f"the replay failed: {replay['error']}\n{replay.get('traceback', '')[-1500:]}"),
            )
        ]
    plan = {r["label"]: r for r in reference.replay.get("runs", [])}
    ran = {r["label"]: r for r in replay["runs"] if r.get("label") in plan}
    problems = [
        Problem(
            kind="crash",
            message=scrub(
                f"replay {f['label']} ({f['shape']} shape, {f.get('regime', 'captured')} inputs, seed {f['seed']}): "
                "the "
                f"candidate raised {f['error']}\n{f['traceback'][-1200:]}"
            ),
        )
        for f in replay["failures"]
        if f.get("label") in plan
    ]
    failed = {f["label"] for f in replay["failures"]}
    if plan and not ran and not failed:
        return [
            Problem(
                kind="unverified",
                message=(
                    "no replay could check the candidate ("
                    + "; ".join(replay.get("notes", [])[:3])
                    + "): it is unverified; "
                    "keep the kernel's parameters or the launcher's arguments as they are"
                ),
            )
        ]
    if not plan:
        why = "; ".join(reference.replay.get("notes", []))[:600]
        return [
            Problem(
                kind="unverified",
                message="the replay could not run for the reference itself, so nothing "
                "beyond the program's own dispatches checked the candidate: "
                f"unverified ({why})",
            )
        ]
    expected = [label for label, r in plan.items() if r["mode"] == "launcher" or kernel_expected]
    missing = [label for label in expected if label not in ran and label not in failed]
    if missing:
        problems.append(
            Problem(
                kind="unverified",
                message=(f"the replay did not run {', '.join(missing[:3])}: " + "; ".join(replay.get("notes", [])[:2])),
            )
        )
    previous: dict[str, dict] = {}
    terms, reduced = accumulated_terms(reference.manifest), reduction_terms(reference.manifest)
    for label, run in ran.items():
        planned = plan[label]
        r = reference.load(reference.truth / "replay" / f"{label}.pt")
        c = load_tensors(out / f"{label}.pt")
        regime = planned.get("regime", "captured")
        where = f"replay {label} ({run['mode']}, {planned['shape']} shape, {regime} inputs, seed {planned['seed']})"
        problems += _aliasing(where, planned.get("aliases"), run.get("aliases"))
        inputs: dict = {}  # the trial's inputs, read when an UNCHANGED argument meets a changed one
        for name, ref_value in r.items():
            if name not in c:
                problems.append(Problem(kind="missing-output", message=f"{where}: the candidate produced no {name}"))
                continue
            if _unchanged(ref_value) and _unchanged(c[name]):
                continue  # both left the same input as it was
            arg = name.removeprefix("arg:")
            ref_value, c[name] = (_given(reference, label, arg, v, inputs) for v in (ref_value, c[name]))
            found = compare_buffer(
                ref_value,
                c[name],
                name=name,
                dispatch=None,
                tol=settings.tolerances,
                poisoned=arg in planned["poisoned"],
                accumulated_terms=terms if _made_by(run, arg, reference.manifest, "accumulated") else None,
                reduced_terms=reduced if _made_by(run, arg, reference.manifest, "reduced") else None,
                atomic=_made_by(run, arg, reference.manifest, "atomic"),
            )
            earlier = previous.get(run["mode"], {}).get(name)
            if found and isinstance(earlier, torch.Tensor) and identical(earlier, c[name]):
                found = [
                    Problem(
                        kind="stale-result",
                        buffer=name,
                        message=(
                            f"{name} is exactly the candidate's result for the previous trial's inputs: it returns a "
                            "stale "
                            "result (a cache keyed on pointers or shapes?), or its result no longer depends on the "
                            "inputs "
                            "(e.g. a float accumulator so large that the added values round away)"
                        ),
                    )
                ]
            for p in found:
                p.message = f"{where}: {p.message}"
            problems += found
        if planned["shape"] == "recorded" and planned.get("regime", "captured") == "captured":
            previous[run["mode"]] = c
    return problems


def _unchanged(value) -> bool:
    return isinstance(value, str) and value == UNCHANGED


def _given(reference: ReferenceRun, label: str, arg: str, value, inputs: dict):
    """A replay output as a tensor: an UNCHANGED argument is the trial's input, read (digest checked)
    into `inputs` once per trial."""
    if not _unchanged(value):
        return value
    if not inputs:
        inputs.update(reference.load(reference.inputs / f"{label}.pt"))
    return inputs[arg]


def _aliasing(where: str, reference: dict | None, candidate: dict | None) -> list[Problem]:
    """A returned tensor must share storage with exactly what the reference's shares it with."""
    if reference is None:
        return []
    candidate = candidate or {}
    return [
        Problem(
            kind="aliased-output",
            buffer=name,
            message=(
                f"{where}: {name} shares its storage with {candidate.get(name)}, where the reference's "
                f"{'is a new tensor' if ref_alias is None else 'shares it with ' + ref_alias}: a caller keeping both "
                "results "
                "sees the later one overwrite the earlier"
            ),
        )
        for name, ref_alias in reference.items()
        if candidate.get(name) != ref_alias and candidate.get(name) is not None
    ]


def _made_by(run: dict, name: str, ref: dict, how: str) -> bool:
    """Whether output `name` is `how` ("accumulated" with float atomics, or "reduced"): kernel replays name
    the buffer; a launcher's results come from the kernel's outputs, so they carry its order whenever
    the kernel's outputs do."""
    made = ref.get(how, ())
    return name in made if run["mode"] == "kernel" else bool(made)


def _replay_checks(replay: dict) -> list[str]:
    runs = replay.get("runs", [])
    if not runs:
        return []
    kinds: dict[str, list[dict]] = {}
    for run in runs:
        kinds.setdefault(run["mode"], []).append(run)
    lines = []
    for mode, items in kinds.items():
        seeds = ", ".join(str(r["seed"]) for r in items)
        shapes = sorted({r["shape"] for r in items})
        regimes = sorted({r.get("regime", "captured") for r in items})
        lines.append(
            f"replay through the {mode}: {len(items)} runs on fresh inputs (seeds {seeds}; shapes: "
            f"{'; '.join(shapes)}; inputs: {', '.join(regimes)})"
            + (", write-only outputs poisoned first" if mode == "kernel" else "")
        )
    return lines
