"""The Python API. The CLI is a thin skin over these functions."""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from . import __version__, env, redact
from .delivery.git import find_repo
from .delivery.publish import Ready, deliver, prepare
from .errors import IntelliPerfError, KernelFilterError, NoKernelsError, UsageError
from .formulas import Registry, default_registry
from .models import KernelDiagnosis, KernelProfile, OptimizationStatus, Report, RunInfo
from .profiling.aggregate import STATIC_BACKEND, TRACE_BACKEND, Recording, collect_evidence, load_recording
from .profiling.trace_worker import LaterTraces
from .settings import DiagnoseSettings, OptimizeSettings, settled
from .workload.devices import parse_devices
from .workload.runner import TraceSettings, check_command, run_workload, uncompiled_note
from .workload.workspace import within

DEVICES = ("auto", "cpu", "gpu")

Progress = Callable[[str], None]
log = logging.getLogger("intelliperf")


def _logged(stage: str) -> None:
    """Progress for API callers that pass no `progress`: the `intelliperf` logger, at INFO."""
    log.info(redact.scrub(stage))


# Seconds the interpreter trace of one launch may take in a GPU run, where it is one pass among
# several: a 4096^3 GEMM's sampled programs take minutes in the interpreter (the atomics it looks for
# show in the first programs; the trace says how many it ran). On the CPU it is the evidence: 60 s.
GPU_TRACE_BUDGET_S = 10.0
LATER_TRACE_START_S = 60.0  # a deferred trace's worker: its start and imports, before each launch's budget


def diagnose(
    command: Sequence[str],
    settings: DiagnoseSettings | None = None,
    *,
    progress: Progress | None = None,
    **options,
) -> Report:
    """Run `command`, rank its Triton kernels and ask the formula about the top ones.

    `settings` (a DiagnoseSettings), or its fields as keyword arguments (`formula=...`, on top of
    `settings` when both are given). `counters`: "auto" reads hardware counters when the formula
    uses them and a GPU and its profiler (ncu, rocprofv3) are there; "ncu"/"rocprofv3" insist;
    "off" never profiles. `profile_dir` keeps the profiler's files (the .ncu-rep opens in Nsight
    Compute). `stop_early`: the profiler passes (ncu, region timers) stop the program once each top
    kernel had the launches they look at; the first run, which ranks the kernels, always runs to
    the end.

    Returns the Report that `intelliperf diagnose` prints and writes (`output` for JSON,
    `markdown` for Markdown, `sarif` for GitHub code scanning). Raises an IntelliPerfError
    subclass for anything the user can fix.
    """
    s = settled(DiagnoseSettings, settings, options)
    check_paths(
        files={"--output": s.output, "--markdown": s.markdown, "--sarif": s.sarif},
        folders={"--profile-dir": s.profile_dir},
    )
    registry = default_registry(s.formula_paths)
    the_formula = registry.create(s.formula, **(s.formula_options or {}))
    report, _ = _diagnose(list(command), the_formula, registry, s, progress=progress or _logged)
    from .delivery.report import write_reports

    write_reports(report, output=s.output, markdown=s.markdown, sarif=s.sarif)
    return report


def _diagnose(
    command: list[str],
    the_formula,
    registry: Registry,
    s: DiagnoseSettings,
    *,
    progress: Progress,
    timer_dir: str | Path | None = None,
) -> tuple[Report, Recording]:
    """Profile, rank and diagnose: the report without an optimization, and the recording."""
    _kernel_pattern(s.kernel)  # a bad filter is said before anything runs
    if s.top_n < 1:
        raise UsageError(f"--top-n must be at least 1, got {s.top_n}")
    if s.sample_programs < 1:
        raise UsageError(f"--sample-programs must be at least 1, got {s.sample_programs}")
    check_command(command)
    command = _absolute_program(command, s.cwd)
    interpret = _interpret(s.device)
    trace = trace_settings(the_formula, registry, s.kernel, s.sample_programs, s.trace_launches, interpret)
    backend, counter_note = _counter_backend(s.counters, the_formula, registry, interpret)
    trace.sass_lines = backend == "ncu" and trace.pattern is not None
    # On a GPU, where another pass follows, the trace runs after the program, beside that pass.
    later = LaterTraces() if _trace_later(trace, interpret, backend, the_formula, registry) else None
    try:
        if later is not None and Path(s.cwd or os.getcwd()).is_dir():  # else the program run says what is wrong
            later.warm(s.cwd or os.getcwd())  # its imports beside the profile run
        return _diagnosed(command, the_formula, registry, s, trace, backend, counter_note, later, progress, timer_dir)
    finally:
        if later is not None:
            later.discard()


def _trace_later(trace: TraceSettings, interpret: bool, backend: str | None, the_formula, registry: Registry) -> bool:
    """Whether the interpreter trace runs after the program (trace_worker): on a GPU, where the ncu or
    region-timer pass follows for it to run beside (alone it would only add its worker's start-up)."""
    traced = trace.pattern is not None and trace.sample_programs > 0
    return not interpret and traced and (backend is not None or the_formula.wants_regions(registry))


def _diagnosed(
    command: list[str],
    the_formula,
    registry: Registry,
    s: DiagnoseSettings,
    trace: TraceSettings,
    backend: str | None,
    counter_note: str | None,
    later: LaterTraces | None,
    progress: Progress,
    timer_dir: str | Path | None,
) -> tuple[Report, Recording]:
    """_diagnose's work, with its trace deferred to `later` where it is given."""
    pattern = _kernel_pattern(s.kernel)
    interpret = _interpret(s.device)
    trace.later_dir = str(later.folder) if later is not None else None
    stages: dict[str, float] = {}
    started = time.perf_counter()
    progress("profiling: running the command with the launch recorder")
    with tempfile.TemporaryDirectory(prefix="intelliperf-") as tmp:
        run = run_workload(command, Path(tmp), interpret=interpret, trace=trace, timeout_s=s.timeout_s, cwd=s.cwd)
        recording = load_recording(Path(tmp))
    stages["profile"] = time.perf_counter() - started
    if later is not None:
        later.start(run.cwd)

    progress("diagnosing the top kernels")
    started = time.perf_counter()
    _check_recording(recording, command)
    top = _select(recording.kernels, pattern, s.kernel, s.top_n)
    counter_notes = [counter_note] if counter_note else []
    passes_started = time.perf_counter()
    (measured, timed), notes = _profiler_passes(
        command, top, the_formula, registry, recording, s, backend, interpret, timer_dir, stages, progress
    )
    counter_notes += notes
    started += time.perf_counter() - passes_started
    if later is not None:
        started_traces = time.perf_counter()
        traced, notes = later.finish(LATER_TRACE_START_S + trace.budget_s * later.jobs())
        recording.evidence = collect_evidence(recording.records + traced)
        counter_notes += notes
        stages["trace_wait"] = time.perf_counter() - started_traces
        started += stages["trace_wait"]
    diagnoses = []
    for rank, profile in enumerate(top, start=1):
        # best first: hardware counters, region timers, then the interpreter model, then the static view
        evidence = (
            ([measured[profile.id]] if profile.id in measured else [])
            + ([timed[profile.id]] if profile.id in timed else [])
            + recording.evidence_of(profile.id)
        )
        findings = the_formula.evaluate(profile, evidence, registry)
        diagnoses.append(KernelDiagnosis(kernel=profile.name, rank=rank, findings=findings, evidence=evidence))
    stages["diagnose"] = time.perf_counter() - started

    selected = next((d.kernel for d in diagnoses if any(f.present for f in d.findings)), None)
    report = Report(
        tool_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        formula=the_formula.name,
        run=RunInfo(
            command=command,
            cwd=run.cwd,
            mode="interpreter" if interpret else "compiled",
            device=recording.first("device", "unknown"),
            time_source=recording.first("time_source", "unknown"),
            duration_s=run.duration_s,
            processes=len(recording.records),
            launches=recording.launches,
            versions={"intelliperf": __version__, **_merged_versions(recording)},
        ),
        kernels=recording.kernels,
        top=[p.name for p in top],
        diagnoses=diagnoses,
        selected=selected,
        stages=stages,
        notes=_notes(registry, recording, interpret) + counter_notes,
    )
    return report, recording


def _profiler_passes(
    command: list[str],
    top: list[KernelProfile],
    the_formula,
    registry: Registry,
    recording: Recording,
    s: DiagnoseSettings,
    backend: str | None,
    interpret: bool,
    timer_dir: str | Path | None,
    stages: dict[str, float],
    progress: Progress,
) -> tuple[tuple[dict, dict], list[str]]:
    """The counter pass (ncu, rocprofv3) and the region-timer pass: (counter evidence, timer evidence)
    per kernel id, and notes; each pass's seconds in `stages`. Where both run on a GPU and stop the
    program early they run side by side, taking turns on the GPU (profiling/window.py): one's start-up
    and trace writing beside the other's kernels, never two programs' kernels at once. Each then may
    wait for the other's turn, so its limit (--timeout) is the two passes' together."""
    from concurrent.futures import ThreadPoolExecutor

    wants_timers = the_formula.wants_regions(registry)
    side_by_side = backend is not None and wants_timers and not interpret and s.stop_early
    limit = s.timeout_s * 2 if side_by_side and s.timeout_s else s.timeout_s

    def timed_stage(name: str, run: Callable[[dict[str, str]], tuple[dict, list[str]]], turn: dict[str, str]):
        begin = time.perf_counter()
        try:
            return run(turn)
        finally:
            stages[name] = time.perf_counter() - begin

    def counter_pass(turn: dict[str, str]) -> tuple[dict, list[str]]:
        if backend is None:
            return {}, []
        progress(f"counters: running the command under {backend} for the top {len(top)} kernel(s)")
        return _counters(
            backend, command, top, the_formula, registry, recording, limit, s.cwd, s.profile_dir, s.stop_early, turn
        )

    def timer_pass(turn: dict[str, str]) -> tuple[dict, list[str]]:
        if not wants_timers:
            return {}, []
        if not interpret:
            progress("region timers: running the command with the top kernels instrumented (Proton)")
        return _region_timers(
            command,
            top,
            interpret,
            s.cwd,
            limit,
            timer_dir or s.profile_dir,
            s.stop_early,
            loops_only=not isinstance(the_formula, _RegionsOnly),
            all_warps=s.all_warps,
            data=s.region_data,
            turn=turn,
        )

    stages |= {"counters": 0.0, "region_timers": 0.0}  # in this order, whichever ends first
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="intelliperf-turns-") as folder:
        turn = {env.GPU_TURN: str(Path(folder) / "gpu.lock")} if side_by_side else {}
        with ThreadPoolExecutor(max_workers=2 if side_by_side else 1) as pool:
            counted = pool.submit(timed_stage, "counters", counter_pass, turn)
            timers = pool.submit(timed_stage, "region_timers", timer_pass, turn)
            (measured, notes), (timed, more) = counted.result(), timers.result()
    for name, ran in (("counters", backend is not None), ("region_timers", wants_timers)):
        if not ran:
            stages.pop(name, None)
    if side_by_side:
        notes.append(
            "the counter and region-timer passes ran side by side, taking turns on the GPU "
            f"({stages['counters']:.1f} s and {stages['region_timers']:.1f} s in {time.perf_counter() - began:.1f} s)"
        )
    return (measured, timed), notes + more


class _RegionsOnly:
    """The formula slot of `intelliperf regions`: no verdict, the region timers and static view only."""

    name = "regions"
    metric = None

    def needs(self, registry: Registry) -> set[str]:
        return {STATIC_BACKEND}

    def wants_regions(self, registry: Registry) -> bool:
        return True

    def counter_metrics(self, registry: Registry, backend: str) -> list[str]:
        return []

    def evaluate(self, kernel: KernelProfile, evidence: list, registry: Registry) -> list:
        return []


def regions(
    command: Sequence[str],
    *,
    kernel: str | None = None,
    device: str = "auto",
    out_dir: str | Path = "intelliperf-regions",
    timeout_s: float | None = None,
    cwd: str | None = None,
    progress: Progress | None = None,
    stop_early: bool = True,
    all_warps: bool = False,
) -> Report:
    """Time the regions of the top kernel (or the top one matching `kernel`) with compiler-inserted
    timers, without a formula: per-region cycles, overlap, the timeline (Perfetto JSON, PNG) in
    `out_dir`. Without a GPU, the regions and what the static view compiled in each. `all_warps`:
    record every warp of each CTA (default: the first of each warp group)."""
    from .delivery.report import write_reports
    from .profiling.region_timers import static_regions

    check_paths(folders={"--out-dir": out_dir})
    out = Path(out_dir).resolve()
    settings = DiagnoseSettings(
        top_n=1,
        kernel=kernel,
        device=device,
        sample_programs=1,
        timeout_s=timeout_s,
        cwd=cwd,
        counters="off",
        stop_early=stop_early,
        all_warps=all_warps,
        region_data="trace",  # the timeline is what this command is for
    )
    report, recording = _diagnose(
        list(command), _RegionsOnly(), default_registry(), settings, progress=progress or _logged, timer_dir=out
    )
    for d in report.diagnoses:
        profile = next(k for k in report.kernels if k.name == d.kernel)
        if not any(ev.regions for ev in d.evidence):
            report.notes += static_regions(profile, d.evidence)
    write_reports(report, output=out / "report.json", markdown=out / "report.md")
    return report


def _counter_backend(requested: str, the_formula, registry: Registry, interpret: bool) -> tuple[str | None, str | None]:
    from .profiling import counters

    wanted = any(the_formula.counter_metrics(registry, b) for b in ("ncu", "rocprofv3"))
    asks = requested not in ("off", "auto") or wanted
    return counters.choose(requested, interpret, counters.gpu_vendor() if asks and not interpret else None, wanted)


def _counters(
    backend: str,
    command: list[str],
    top: list[KernelProfile],
    the_formula,
    registry: Registry,
    recording: Recording,
    timeout_s: float | None,
    cwd: str | None,
    keep: str | Path | None,
    stop_early: bool = True,
    turn: dict[str, str] | None = None,
):
    """One profiler pass over the top kernels: evidence per kernel id, and notes. `turn`: the GPU turn
    it takes (_profiler_passes)."""
    from .profiling import counters, window

    names = {p.id: p.id.split("@", 1)[0] for p in top}
    metrics = the_formula.counter_metrics(registry, backend)
    evidence, notes = counters.collect(
        backend,
        command,
        sorted(set(names.values())),
        metrics,
        cwd=cwd,
        timeout_s=timeout_s,
        sass_tables=recording.sass_tables(),
        keep=Path(keep) if keep else None,
        stop_early=stop_early,
        configs=window.tuned_configs(top),
        env=turn,
    )
    return {pid: evidence[name] for pid, name in names.items() if name in evidence}, notes


def _region_timers(
    command: list[str],
    top: list[KernelProfile],
    interpret: bool,
    cwd: str | None,
    timeout_s: float | None,
    keep: str | Path | None,
    stop_early: bool = True,
    loops_only: bool = True,
    all_warps: bool = False,
    data: str = "auto",
    turn: dict[str, str] | None = None,
) -> tuple[dict, list[str]]:
    """One instrumented run over the top kernels (GPU only): evidence per kernel id, and notes.
    `loops_only`: only kernels whose timers could change the verdict (a loop with a dot)."""
    from .profiling import region_timers

    why = region_timers.available(interpret)
    if why:
        return {}, [why]
    root = Path(cwd or os.getcwd())
    run = region_timers.collect(
        command,
        top,
        root=root,
        cwd=root,
        timeout_s=timeout_s,
        keep=Path(keep) if keep else None,
        pictures=keep is not None,
        stop_early=stop_early,
        loops_only=loops_only,
        all_warps=all_warps,
        data=data,
        env=turn,
    )
    if keep is None and run.evidence:
        run.notes.append("the timeline (Perfetto JSON, PNG) is kept with --profile-dir DIR")
    return run.evidence, run.notes


def trace_settings(
    the_formula,
    registry: Registry,
    kernel: str | None,
    sample_programs: int = 32,
    launches: int = 1,
    interpret: bool = True,
) -> TraceSettings:
    """The address trace and static view a formula needs (none when it reads neither; no program traced
    where it reads the static view only: bankConflict, overlap). Beside a GPU run the trace is bounded
    like the other passes (GPU_TRACE_BUDGET_S)."""
    from .profiling.static import DEFAULT_TARGETS

    needs = the_formula.needs(registry)
    wanted = bool(needs & {TRACE_BACKEND, STATIC_BACKEND})
    return TraceSettings(
        pattern=(kernel or ".") if wanted else None,
        sample_programs=sample_programs if TRACE_BACKEND in needs else 0,
        launches=launches,
        budget_s=TraceSettings.budget_s if interpret else GPU_TRACE_BUDGET_S,
        static_targets=DEFAULT_TARGETS if STATIC_BACKEND in needs else (),
    )


def _absolute_program(command: list[str], cwd: str | None) -> list[str]:
    """A program named by a relative path (`.venv/bin/python`) made absolute: later runs of the command
    start in a copy of the project, where it may not be (a virtual environment is not copied)."""
    program = command[0]
    if os.sep in program and not os.path.isabs(program):
        return [os.path.abspath(os.path.join(cwd or os.getcwd(), program)), *command[1:]]
    return command


def check_paths(
    files: dict[str, str | Path | None] | None = None, folders: dict[str, str | Path | None] | None = None
) -> None:
    """Where reports go, checked before anything runs: a file option must not name a folder, a
    folder option must not name a file (either found only after a run used to end in a traceback
    and a stray NAME.tmp)."""
    for option, path in (files or {}).items():
        if path is not None and Path(path).is_dir():
            raise UsageError(
                f"{option} {path} is a folder; it takes a file name",
                hint=f"Pass a file path, e.g. {option} {Path(path) / 'report.json'}.",
            )
    for option, path in (folders or {}).items():
        if path is not None and Path(path).exists() and not Path(path).is_dir():
            raise UsageError(f"{option} {path} is a file; it takes a folder (created if missing)")


def _kernel_pattern(kernel: str | None) -> re.Pattern | None:
    if kernel is None:
        return None
    try:
        return re.compile(kernel)
    except re.error as exc:
        raise UsageError(f"--kernel {kernel!r} is not a valid regular expression: {exc}") from None


def _interpret(device: str) -> bool:
    """True when the kernels must run in Triton's interpreter (no GPU, or --device cpu)."""
    if device not in DEVICES:
        raise UsageError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cpu":
        return True
    import torch

    has_gpu = torch.cuda.is_available()
    if device == "gpu" and not has_gpu:
        raise UsageError(
            "--device gpu was asked for, but torch sees no GPU on this machine",
            hint="Use --device cpu (or auto) to run the kernels in Triton's interpreter.",
        )
    return not has_gpu


def _check_recording(recording: Recording, command: list[str]) -> None:
    if recording.errors:
        raise IntelliPerfError("the launch recorder failed inside the program: " + "; ".join(recording.errors))
    if recording.processes_started == 0:
        raise NoKernelsError(
            f"the command ran, but no Python process of it started the recorder: {' '.join(command)}",
            hint="intelliperf records Python programs (python app.py, python -m pkg, pytest ...). A shell script "
            "works too if it runs Python without clearing PYTHONPATH.",
        )
    if not recording.kernels:
        raise NoKernelsError(
            f"the command ran, but launched no Triton kernel ({recording.processes_started} Python process(es) "
            "watched)",
            hint="Is the code path that launches the @triton.jit kernels taken with these arguments?",
        )


def _select(kernels: list[KernelProfile], pattern: re.Pattern | None, raw: str | None, top_n: int):
    chosen = [k for k in kernels if pattern is None or pattern.search(k.name)]
    if not chosen:
        raise KernelFilterError(raw or "", [k.name for k in kernels])
    return chosen[:top_n]


def _merged_versions(recording: Recording) -> dict[str, str]:
    versions: dict[str, str] = {}
    for record in recording.records:
        versions.update(record.get("versions", {}))
    return versions


def _notes(registry: Registry, recording: Recording, interpret: bool) -> list[str]:
    notes = [f"formula plug-in {name!r} could not be loaded: {why}" for name, why in registry.broken.items()]
    if interpret:
        notes.append(
            "No GPU was used: kernel times are wall times of Triton's interpreter, and the evidence is a "
            "model of the memory traffic, not hardware counters."
        )
    for k in recording.kernels:
        if k.timed_launches < k.launches:
            notes.append(
                f"{k.name}: {k.timed_launches} of {k.launches} launches were timed (the first ones and a "
                "random sample); its total time is scaled from them"
            )
    for record in recording.records:
        notes += [f"recorder, process {record['pid']}: {problem}" for problem in record.get("problems", [])]
    if uncompiled := uncompiled_note():
        notes.append(uncompiled)
    for items in recording.evidence.values():
        notes += [f"{ev.kernel}: {note}" for ev in items for note in ev.notes]
    return notes


def optimize(
    command: Sequence[str],
    settings: OptimizeSettings | None = None,
    *,
    progress: Progress | None = None,
    **options,
) -> Report:
    """Diagnose, then rewrite -> validate -> feed back until a candidate is correct, faster and
    improves the formula's metric, or the budget is spent.

    Writes `out_dir/report.json` and `report.md` (and `output`/`markdown` if given) after every
    attempt, each attempt's patch under `out_dir/attempts/`, and the winner as
    `out_dir/winner.patch`; with `in_place` the winner is applied to the project; with `publish`
    it is committed on its own branch (and pushed, with a pull request). The returned Report's
    `optimization` holds every attempt; it is None when no kernel has the bottleneck.

    `settings` (an OptimizeSettings), or its fields as keyword arguments (on top of `settings`
    when both are given); `rewriter` may be a Rewriter instance of the caller's.
    `devices` ("all" or "0,1"): validate each round's candidates in parallel, one worker per GPU;
    `candidates` (per round) then defaults to the number of GPUs.
    """
    from . import loop
    from .delivery.report import write_reports
    from .rewriters import make_rewriters

    s = settled(OptimizeSettings, settings, options)
    progress = progress or _logged
    check_paths(
        files={"--output": s.output, "--markdown": s.markdown, "--sarif": s.sarif},
        folders={"--out-dir": s.out_dir, "--profile-dir": s.profile_dir},
    )
    gpus = parse_devices(s.devices)
    budget = loop.Budget(
        max_attempts=s.max_attempts,
        time_budget_s=s.time_budget_s,
        max_tokens=s.max_tokens,
        candidates=max(len(gpus), 1) if s.candidates is None else s.candidates,
        devices=gpus,
    )
    budget.check()
    model = s.model or os.environ.get(env.MODEL) or None
    key_env = (s.llm_options or {}).get("api_key_env")
    redact.also(key_env)
    rewriters = make_rewriters(s.rewriter, model=model, llm_options=s.llm_options, transcript=s.transcript)
    root = Path(s.project or s.cwd or os.getcwd()).resolve()
    if not root.is_dir():
        raise UsageError(f"--project {root} is not a folder")
    validation = s.validation.model_copy(deep=True)
    validation.secrets = sorted({*validation.secrets, *([key_env] if key_env else [])})
    out = Path(s.out_dir).resolve()
    validation.sandbox.build((root, out), validation.secrets)  # refuse before anything runs
    if s.in_place:
        check_clean(root, s.force)
    ready = prepare(s.publish, root) if s.publish else None
    registry = default_registry(s.formula_paths)
    the_formula = registry.create(s.formula, **(s.formula_options or {}))
    report, recording = _diagnose(
        list(command),
        the_formula,
        registry,
        s,
        progress=progress,
        timer_dir=Path(s.profile_dir) if s.profile_dir else out / "regions",
    )

    def write() -> None:
        write_reports(report, output=out / "report.json", markdown=out / "report.md")
        if s.output or s.markdown or s.sarif:
            write_reports(report, output=s.output, markdown=s.markdown, sarif=s.sarif)

    if report.selected is None:
        report.notes.append(f"nothing to optimize: no diagnosed kernel has the {the_formula.name} bottleneck")
        write()
        return report
    profile = next(k for k in recording.kernels if k.name == report.selected)
    finding = next(f for f in report.diagnosis(report.selected).findings if f.present)
    if not within(Path(report.run.cwd), root):
        raise UsageError(
            f"the command runs in {report.run.cwd}, outside the project folder {root}",
            hint="Pass --project DIR: the folder copied for each candidate must contain the command's "
            "working directory and the kernel's file.",
        )
    progress(
        "rewriters: "
        + " then ".join(r.name for r in rewriters)
        + ("" if model else " (no model configured: pass --model NAME [--api-base URL] to use an LLM)")
    )
    session = loop.Session(
        report=report,
        profile=profile,
        finding=finding,
        recording=recording,
        formula=the_formula,
        registry=registry,
        root=root,
        out_dir=out,
        trace=trace_settings(
            the_formula, registry, re.escape(profile.name), s.sample_programs, interpret=report.run.mode != "compiled"
        ),
        validation=validation,
        budget=budget,
        write=write,
        progress=progress,
    )
    started = time.perf_counter()
    try:
        optimization = loop.run(session, rewriters)
    except KeyboardInterrupt:
        _stop(report, "interrupted", "interrupted by the user (Ctrl-C)", write)
        raise
    except Exception as exc:
        _stop(report, "failed", f"{type(exc).__name__}: {exc}", write)
        raise
    report.stages["attempts"] = round(time.perf_counter() - started - report.stages.get("reference", 0), 3)
    if ready is not None:  # before --in-place, which makes the patched files differ from the commit
        _publish(ready, report, write)
    if s.in_place and optimization.winner is not None:
        apply_in_place(root, optimization, s.force)
    write()
    return report


def _publish(ready: Ready, report: Report, write: Callable[[], None]) -> None:
    if report.optimization is None or report.optimization.winner is None:
        report.notes.append("no validated win, so no branch or pull request")
        return
    try:
        report.delivery = deliver(ready, report)
    except UsageError as exc:
        report.notes.append(f"branch / pull request not made: {exc}")
        write()  # the reports and the patch stay; the message says what to fix
        raise


def _stop(report: Report, status: OptimizationStatus, why: str, write: Callable[[], None]) -> None:
    if report.optimization is not None:
        report.optimization.status = status
        report.optimization.error = why
    write()


def check_clean(root: Path, force: bool) -> None:
    """--in-place needs a clean tree (tracked files), so the change can be reviewed and undone."""
    if force:
        return
    try:
        repo = find_repo(root)
    except UsageError:
        return  # no git: nothing to check; the patch file is the way back
    if repo is None or not repo.is_dirty(untracked_files=False):
        return
    dirty = repo.git.status("--porcelain", "--untracked-files=no")
    if dirty:
        raise UsageError(
            f"--in-place refuses to change a git tree with uncommitted changes:\n{dirty}",
            hint="Commit or stash them first, or pass --force to apply over them.",
        )


def apply_in_place(root: Path, optimization, force: bool) -> None:
    """Write the winner's files into the project, unless a file changed since the run began."""
    from .rewriters.source import unified_diff

    check_clean(root, force)
    patch = Path(optimization.patch).read_text()
    new = {rel: Path(copy).read_text() for rel, copy in optimization.files.items()}
    for rel, text in new.items():
        if unified_diff(rel, (root / rel).read_text(), text) not in patch:
            optimization.notes.append(f"{rel} changed while intelliperf ran: not applied (the patch is kept)")
            return
    for rel, text in new.items():
        (root / rel).write_text(text)
    optimization.applied = True
    optimization.notes.append(f"applied to {', '.join(optimization.files)} (--in-place)")
