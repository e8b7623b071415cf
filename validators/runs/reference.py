"""Step 1, the reference: the pristine program captured once (the same workload as profiled, or stop),
its replay prepared, the ground truth kept out of every candidate's reach and checked before each use.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from intelliperf.errors import IntelliPerfError
from intelliperf.redact import scrub
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.runner import Running, TraceSettings, workload_env
from intelliperf.workload.workspace import Confinement, confined, copy_project, in_copy, within

from ..correctness import (
    VALUE_KINDS,
    compare_captures,
    load_capture,
    load_tensors,
)
from ..inside.capture import ENV_ARGS, ENV_DIR, ENV_EXPECTED, ENV_KERNEL, ENV_LIMITS
from ..settings import TRUTH_KEPT_BYTES, GroundTruthError, Program, ValidationSettings
from ..workers.replay_outputs import PROGRAM_TRIAL
from ..workload import check_same, recorded_signatures
from .worker_processes import start_worker, worker_env, worker_summary


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

    @property
    def launcher_replayed(self) -> bool:
        """Whether the reference's launcher ran in its replay: its trials judge a candidate's results, and
        the timing calls it."""
        return any(r["mode"] == "launcher" for r in self.replay.get("runs", []))

    def original(self, path: str | Path) -> Path:
        """A path in the reference's copy, in the user's project."""
        return self.origin / Path(path).resolve().relative_to(self.program.root.resolve())


def capture_env(
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
    settings = settings or ValidationSettings()
    work_dir = Path(work_dir)
    box = sandbox or settings.sandbox.build((program.root, work_dir), settings.secrets)
    truth, inputs = work_dir / "truth", work_dir / "inputs"
    ref = _pristine_copy(program, work_dir, exclude)
    run = _capture_runner(program, ref, kernel, box, interpret, settings, work_dir)
    worker = _start_replay_side(box, ref, interpret, settings, work_dir)
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
        skip: list[str] = []  # trials that made the reference fault on the device: each ends a worker
        reference.replay = _prepare_replay(reference, worker, settings, skip)
        while reference.replay.get("faulted") and len(skip) < FAULTS_SKIPPED:
            skip.append(reference.replay["faulted"])
            worker.stop()
            worker = _start_replay_side(box, ref, interpret, settings, work_dir)
            reference.replay = _prepare_replay(reference, worker, settings, skip)
        reference.replay_s = time.perf_counter() - begin
    finally:
        worker.stop()
    # Whether two seeded runs agree matters only once a candidate differs from this run: asked then.
    reference.again = lambda i: run(i, work_dir / "again")
    reference.home = work_dir / "home"
    reference.notes += reference.replay.get("notes", [])
    reference.digests, reference.stats = _digests(truth, inputs), _stats(truth, inputs)
    return reference


def _pristine_copy(program: Program, work_dir: Path, exclude: tuple[Path, ...]) -> Program:
    """The program in a copy of its project under `work_dir` (never the user's own tree): its command and
    working folder mapped into the copy."""
    copy = copy_project(program.root, {}, work_dir / "project", exclude=(*exclude, work_dir))
    return Program(
        copy,
        in_copy(program.command, program.root, copy),
        copy / program.workdir().resolve().relative_to(Path(program.root).resolve()),
        env=program.env,
    )


def _capture_runner(
    program: Program,
    ref: Program,
    kernel: str,
    box: sandboxing.Sandbox,
    interpret: bool,
    settings: ValidationSettings,
    work_dir: Path,
) -> Callable[..., tuple[dict, float]]:
    """`run(i, folder)`: run i of the pristine copy `ref` with the capture on, into `folder`/capture-i (the
    truth's by default; later runs, which ask whether the program is deterministic, go elsewhere): its
    manifest and seconds. Raises WorkloadFailedError when the program fails, NoKernelsError when it never
    launched `kernel`."""
    from intelliperf.errors import NoKernelsError, WorkloadFailedError

    def run(i: int, folder: Path = work_dir / "truth") -> tuple[dict, float]:
        capture_dir = folder / f"capture-{i}"
        capture_dir.mkdir(parents=True, exist_ok=True)
        env = capture_env(kernel, capture_dir, interpret, settings) | ref.env
        room = Confinement(ref.workdir(), work_dir / "home", settings.seed, writable=(ref.root, capture_dir))
        result = confined(box, ref.command, room, env=env)
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

    return run


def _start_replay_side(
    box: sandboxing.Sandbox, ref: Program, interpret: bool, settings: ValidationSettings, work_dir: Path
) -> Running:
    """The reference side's replay worker, started before the reference runs (its start-up overlaps the
    run), in the pristine copy: it writes the truth's replay outputs and the inputs candidates will read."""
    out, inputs = work_dir / "truth" / "replay", work_dir / "inputs"
    for folder in (out, inputs):
        folder.mkdir(parents=True, exist_ok=True)
    room = Confinement(ref.root, work_dir / "home", settings.seed, writable=(out, inputs), readable=(ref.root,))
    return start_worker(box, "prepare", out, room, env=worker_env(interpret, out, settings, ref.env))


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


# Trials skipped, each after it made the reference fault on the device (an illegal address a CPU's interpreter
# raises as an error, and a GPU's context never recovers from): a fresh worker goes on without it.
FAULTS_SKIPPED = 3


def _prepare_replay(reference: ReferenceRun, worker: Running, settings: ValidationSettings, skip: list[str]) -> dict:
    ref = reference.manifest
    out = reference.truth / "replay"
    program = None  # the launcher's arguments as the program passed them: a trial on the user's own data
    if ref.get("launcher_inputs") and Path(ref["launcher_inputs"]).is_file():
        program = reference.inputs / PROGRAM_TRIAL
        shutil.copyfile(ref["launcher_inputs"], program)
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
        "program_inputs": str(program) if program else None,
        "inputs_dir": str(reference.inputs),
        "out_dir": str(out),
        "skip": skip,
    }
    (out / "job.json").write_text(json.dumps(job))
    worker.send(str(out / "job.json"))
    result = worker.wait(None)
    summary = worker_summary(out, result, "the reference side of the replay", None)
    partial = (out / "replay.json").exists() and json.loads((out / "replay.json").read_text())
    if (summary.get("problem") or summary.get("error")) and partial and partial.get("faulted") not in (None, *skip):
        return {**partial, "faulted": partial["faulted"]}  # (the caller starts a fresh worker without that trial)
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
