"""The region-timer pass: the program once more, its top kernels instrumented, under Proton.

The user's files are not touched: the project is copied, each kernel's file in the copy gets
timers around its regions (`regions.instrument`), and the command runs there with Proton's
instrumentation backend started by the bootstrap (no recorder, secrets stripped). The chrome
trace is parsed into intervals and analysed per kernel (`timeline`); the timeline files
(Perfetto JSON, PNG) are written next to the reports when asked. Where a launch has too many
CTAs for its trace to be cheap, Proton writes its per-scope totals instead (`data_kind`).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import env
from ..models import Evidence, KernelProfile, Regions
from ..workload.runner import PassRun
from . import timeline
from .inside import window
from .regions import instrument, layout_in, layout_of, untimed

BACKEND = "proton"
ENV_PREFIX, ENV_MODE, ENV_DATA = env.REGIONS, env.REGIONS_MODE, env.REGIONS_DATA
ENV_TURN = env.GPU_TURN
# Proton keeps events per CTA in a buffer of this many bytes (8 per event, shared by the CTA's warps);
# a global buffer keeps it out of the kernel's shared memory, whose use would change occupancy.
# clock32 and sched_stores cut the in-loop timers' cost on the H100 (GEMM +23 % -> +7 %) at the
# same accuracy (benchmarks/regions_accuracy.py; docs/benchmarks.md "Region timers on the H100").
DEFAULT_MODE = "default:buffer_type=global:buffer_size=65536:optimizations=clock32,sched_stores"
_DROPPED = re.compile(r"first (\d+) events are dropped due to insufficient buffer size \((\d+)/(\d+)\)")
MAX_BUFFER_BYTES = 2 << 30  # device memory the timers' buffers may take over the whole grid, when enlarged


@dataclass(frozen=True)
class TimerOptions:
    """How a pass times: Proton's `mode` (default DEFAULT_MODE), the timeline's PNG drawn where the files are
    kept (`pictures`), only the kernels whose timers could change a verdict (`loops_only`: a loop with a dot to
    overlap its loads with), every warp of each CTA (`all_warps`; default: the first of each warp group,
    `recorded_warps`), and what is read: Proton's trace, its per-scope totals ("tree") or "auto" (`data_kind`)."""

    mode: str | None = None
    pictures: bool = False
    loops_only: bool = False
    all_warps: bool = False
    data: str = "auto"


@dataclass(frozen=True)
class Sandboxed:
    """A candidate's pass: run confined in `sandbox`, in `where` (an empty folder for the copy and the output,
    laid out as `start_timer_head_start` expects; default: a temporary one), in the Python `ahead` started
    there where it fits, waiting at its first launch for the GPU `turn` (a lock file whose holder has the GPU;
    window.PARKED says when: `parked`)."""

    sandbox: Any
    where: Path | None = None
    ahead: Any = None
    turn: str | None = None


@dataclass
class TimerRun:
    """What one pass produced: evidence per kernel id, notes, and the files it kept."""

    evidence: dict[str, Evidence] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    totals: tuple | None = None  # where it read Proton's per-scope totals: (the tree, its _Read), for `reread`


def available(interpret: bool) -> str | None:
    """None when region timers can run here, else why not (for the report)."""
    if interpret:
        return (
            "region timers need compiled kernels on a GPU (Proton's instrumentation does not run in the "
            "interpreter); the formula judged on the static view instead"
        )
    try:
        import triton.profiler.language  # noqa: F401
    except ImportError as exc:
        return f"region timers need triton.profiler (Proton), which this Triton lacks: {exc}"
    return None


def collect(
    run: PassRun,
    kernels: list[KernelProfile],
    *,
    root: Path,
    changes: dict[str, str] | None = None,
    timers: TimerOptions = TimerOptions(),
    confined: Sandboxed | None = None,
) -> TimerRun:
    """Run the program once with timers in `kernels` (files under `root`, `run.cwd` among them; `changes` are a
    candidate's rewritten files, relative to root). `run.keep`: write the trace, timeline and PNG there.
    `run.env`: variables added to the program's environment (e.g. the GPU it runs on). `run.stop_early`: the
    program stops after the first launch of each kernel (profiling/inside/window.py). `confined`: a candidate's
    run, in its sandbox."""
    from ..workload.workspace import copy_project, in_copy

    out = TimerRun()
    started = time.perf_counter()
    root, keep, box = Path(root).resolve(), run.keep, confined or Sandboxed(None)
    files, tables = _instrumented(kernels, root, changes, timers.loops_only, out.notes)
    if not tables:
        return out
    timed = [p for p in kernels if p.id in tables]
    with tempfile.TemporaryDirectory(prefix="intelliperf-timers-") as tmp:
        into, out_dir, _ = _layout(Path(box.where or tmp))
        copy = copy_project(root, files, into, exclude=(keep,) if keep else ())
        folder = Path(keep) if keep else out_dir
        folder.mkdir(parents=True, exist_ok=True)
        prefix = folder / "proton"
        extra = _program_env(run.env, timed, folder, run.stop_early, box.turn)
        mode, recorded = sampling(timers.mode or DEFAULT_MODE, timed, files, timers.all_warps)
        kind, why_totals = data_kind(timers.data, timed, recorded, run.stop_early)
        if kind == "tree":
            extra[ENV_DATA] = "tree"
            out.notes.append(why_totals)
        workdir = copy / Path(run.cwd or root).resolve().relative_to(root)
        there = PassRun(in_copy(run.command, root, copy), workdir, run.timeout_s, extra)

        def instrumented(mode: str, ahead=None):
            return _run(there, prefix, mode, box.sandbox, (copy, folder), ahead)

        mode, result, dropped = _run_with_room(instrumented, mode, box.ahead, timed, out.notes)
        out.notes += window.notes(folder, "region timers")  # and what the bootstrap wrote there (Proton's start)
        ran = time.perf_counter() - started
        read = _Read(timed, tables, recorded, dropped, folder if keep else None, timers.pictures)
        if kind == "tree":
            size = read_totals(out, prefix.with_suffix(".hatchet"), result, read)
        else:
            size = _read_trace(out, prefix.with_suffix(".chrome_trace"), result, read)
    if size is None:
        return out
    out.seconds = round(time.perf_counter() - started, 2)
    out.notes.append(
        f"region timers: one instrumented run, {out.seconds:.1f} s (the program {ran:.1f} s, its "
        f"{size / 1e6:.1f} MB {'per-scope totals' if kind == 'tree' else 'trace'} read and analysed "
        f"{out.seconds - ran:.1f} s; Proton, mode {mode})"
    )
    return out


def _instrumented(
    kernels: list[KernelProfile], root: Path, changes: dict[str, str] | None, loops_only: bool, notes: list[str]
) -> tuple[dict[str, str], dict]:
    """The project's files with timers put in each kernel that takes them ({relpath: text}, over a candidate's
    `changes`), and each instrumented kernel's table by profile id; why a kernel has none goes in `notes`."""
    from ..workload.workspace import within

    files: dict[str, str] = dict(changes or {})
    tables = {}
    for profile in kernels:
        if not profile.file or not within(Path(profile.file), root):
            notes.append(
                f"{profile.name}: its file ({profile.file}) is outside the project, so it was not instrumented"
            )
            continue
        rel = str(Path(profile.file).resolve().relative_to(root))
        text = files.get(rel) or (root / rel).read_text()
        why = _not_timed(text, profile, loops_only)
        if why:
            notes.append(f"{why}: no region timers for it")
            continue
        try:
            done = instrument(text, profile.name, profile.line)
        except (ValueError, SyntaxError) as exc:
            notes.append(f"{profile.name}: not instrumented: {exc}")
            continue
        files[rel] = done.text
        tables[profile.id] = done
        notes += [f"{profile.name}: {n}" for n in done.notes]
    return files, tables


def _not_timed(text: str, profile: KernelProfile, loops_only: bool) -> str | None:
    """Why a kernel gets no timers where only those that could change a verdict do (`loops_only`): no loop
    with a dot, or its main loop in a helper (None: it gets them)."""
    layout = layout_in(text, profile.name, profile.line)
    why = untimed(layout, profile.name) if loops_only else None
    if loops_only and layout is not None and layout.via is not None:
        # Timing the helper's loop traces every region of every iteration of every program: the
        # attention tutorial's pass ran past 8 minutes on the H100, and timing the kernel's own
        # statements measures one call at 99 % of the kernel, which no formula can judge. The static
        # view judges such a loop (`intelliperf regions` still times the kernel's own statements).
        why = (
            f"{profile.name}: the main loop is in the @triton.jit helper {layout.via[0]} (called at line "
            f"{layout.via[1]}), which region timers do not instrument (every iteration of every program "
            "would be traced)"
        )
    return why


def _program_env(
    env: dict[str, str] | None, timed: list[KernelProfile], folder: Path, stop_early: bool, turn: str | None
) -> dict[str, str]:
    """The instrumented program's added variables: `env`, and with `stop_early` the launch window that
    stops it after each timed kernel's first launch (waiting for the GPU `turn` there, where one is given)."""
    extra = dict(env or {})
    if stop_early:
        # The first launch, no warm-up: on the H100 each instrumented launch of a GEMM cost ~18 s of
        # Proton's trace processing (3 launches 66.6 s, 2 launches 48.6 s), and compilation is not in
        # the kernel's own cycles.
        extra |= window.settings(
            dict.fromkeys((p.name for p in timed), 0),
            1,
            str(folder),
            configs=window.tuned_configs(timed),
            turn_at_launch=turn is not None,
        )
        if turn is not None:
            extra[ENV_TURN] = turn
    return extra


def _run_with_room(run, mode: str, ahead, timed: list[KernelProfile], notes: list[str]):
    """The instrumented run (in the Python started `ahead` where given), once more with a bigger buffer
    where Proton dropped records: (the mode it ran in, its result, what was still dropped)."""
    result, counts = run(mode, ahead)
    if result.ahead:
        notes.append(f"region timers: the instrumented run took a Python started ahead ({STARTED_WITH})")
    dropped = dropped_note(counts, mode)
    bigger = bigger_buffer(counts, mode, timed)
    if dropped and bigger:  # sized from what the first run needed: the loop's trips times its regions
        notes.append(f"region timers: {dropped}; ran again with {bigger}")
        mode, (result, counts) = bigger, run(bigger)
        dropped = dropped_note(counts, mode)
    return mode, result, dropped


@dataclass
class _Read:
    """What reading a pass's output needs besides the file."""

    timed: list[KernelProfile]
    tables: dict  # kernel id -> its Instrumented
    recorded: list[int]
    dropped: str | None
    keep: Path | None  # the folder for the timeline files, when kept
    pictures: bool


def _read_trace(out: TimerRun, trace: Path, result, read: _Read) -> int | None:
    """Each timed kernel's figures from Proton's trace (`timeline.analyse`); its size, or None without one."""
    if result.returncode != 0 or not trace.exists():
        why = " | ".join(result.tail[-3:])
        out.notes.append(
            f"region timers: the instrumented run produced no trace (exit {result.returncode}): {why[:400]}"
        )
        return None
    text = trace.read_text()
    events = timeline.complete_events(text)
    for profile in read.timed:
        done = read.tables[profile.id]
        intervals = timeline.intervals(events, profile.name)
        regions = done.regions or timeline.regions_from_names(sorted({iv.region for iv in intervals}))
        report = timeline.analyse(intervals, regions, profile.name)
        if read.keep:
            pictures = _pictures(intervals, regions, read.keep, profile.name, read.pictures)
            report.files = pictures | {"proton_trace": str(trace)}
        _add_evidence(out, profile, report, read)
    return len(text)


def _add_evidence(
    out: TimerRun, profile: KernelProfile, report: Regions, read: _Read, done=None, recorded: list[int] | None = None
) -> None:
    """One timed kernel's figures (from either reader), with what the pass knows besides them: `done`, its
    instrumented file (default: the profile's), `recorded`, the warps timed in each CTA (default: the pass's)."""
    done = read.tables[profile.id] if done is None else done
    report.loop_line = done.loop_line
    report.recorded_warps = read.recorded if recorded is None else recorded
    if read.dropped:
        report.problems.append(read.dropped)
    out.evidence[profile.id] = Evidence(
        backend=BACKEND, modelled=False, kernel=profile.name, launches_traced=report.launches, regions=report
    )


# Proton's trace costs ~30 us an event on the H100 machine (it wrote 532,480 in 7.5-8.5 s, intelliperf read and
# analysed them in 7.2-7.4 s), and a row (a CTA's recorded warp) has a few regions times the loop's trips,
# commonly 100-500 events: past about this many rows the trace alone would take the pass over its 10 s.
TRACE_ROWS = 1024


def data_kind(data: str, kernels: list[KernelProfile], recorded: list[int], stop_early: bool) -> tuple[str, str]:
    """Proton's trace or its per-scope totals ("tree") for this pass, and why totals. "auto": totals where
    a kernel's launch has more than TRACE_ROWS rows (CTAs times recorded warps); the trace where every
    launch is smaller, where asked, or where the program runs to its end (totals would add its launches)."""
    if data == "trace" or not stop_early:
        return "trace", ""
    rows = {k.name: _ctas(k) * (len(recorded) or _warps(k)) for k in kernels}
    name = max(rows, key=lambda n: rows[n], default="")
    if data != "tree" and rows.get(name, 0) <= TRACE_ROWS:
        return "trace", ""
    rows_said = f"{name} launches {rows.get(name, 0):,} rows (CTAs x recorded warps), over {TRACE_ROWS:,}"
    why = "asked" if data == "tree" else rows_said
    return "tree", (
        f"region timers: Proton's per-scope totals were read, not its trace ({why}): the loop's shares and "
        "cycles per warp; no per-iteration figures, overlap, critical path or timeline (`intelliperf regions` "
        "writes the trace)"
    )


def _ctas(kernel: KernelProfile) -> int:
    return max((math.prod(sig.grid) for sig in kernel.signatures if sig.grid), default=0)


def _warps(kernel: KernelProfile) -> int:
    return max((sig.num_warps or timeline.WARPS_PER_GROUP for sig in kernel.signatures), default=1)


def read_totals(out: TimerRun, path: Path, result, read: _Read) -> int | None:
    """Each timed kernel's figures from Proton's per-scope totals (`timeline.analyse_totals`); the file's
    size, or None without one."""
    text = path.read_text() if result.returncode == 0 and path.exists() else ""
    try:
        tree = json.loads(text)
    except ValueError:
        why = " | ".join(result.tail[-3:])
        out.notes.append(f"region timers: the instrumented run wrote no totals (exit {result.returncode}): {why[:400]}")
        return None
    for profile in read.timed:
        _totals_evidence(out, tree, profile, read.tables[profile.id], read, path)
    out.totals = (tree, read)
    return len(text)


def reread(run: TimerRun, timed: KernelProfile, launched: KernelProfile) -> Evidence | None:
    """`timed`'s figures from `run`'s per-scope totals, read with the launches `launched` recorded: a run
    told `timed`'s launches before the kernel's own were known (a candidate's, started beside its validation,
    whose recording then says which grid and warps its kernel ran). Proton's totals are divided by the warps
    the launch ran, so cycles per warp and CTAs follow the launch; the shares do not. None where the run read
    no totals of `timed`."""
    tree, read = run.totals or (None, None)
    if read is None or timed.id not in read.tables:
        return None
    out = TimerRun()
    _totals_evidence(out, tree, launched, read.tables[timed.id], read, None)
    return out.evidence[launched.id]


def _totals_evidence(out: TimerRun, tree, profile: KernelProfile, done, read: _Read, path: Path | None) -> None:
    """One kernel's figures from the totals `tree` (read from `path`), its regions as instrumented in `done`."""
    totals = timeline.scope_totals(tree, profile.name)
    regions = done.regions or timeline.regions_from_names(sorted(totals))
    warps = window.tuned_configs([profile]).get(profile.name, {}).get("num_warps") or _warps(profile)
    recorded = [w for w in read.recorded if w < warps]  # (ids past a launch with fewer warps record nothing)
    report = timeline.analyse_totals(totals, regions, profile.name, warps, len(recorded) or warps)
    grids = {math.prod(sig.grid) for sig in profile.signatures if sig.grid}
    if report.ctas and grids and report.ctas not in grids:
        report.problems.append(
            f"Proton's totals imply {report.ctas:,} CTAs where the recorded launches had "
            f"{', '.join(f'{g:,}' for g in sorted(grids))}: cycles per warp may be off (the shares are not)"
        )
    if read.keep and path is not None:
        report.files = {"proton_totals": str(path)}
    _add_evidence(out, profile, report, read, done, recorded)


def sampling(mode: str, kernels: list[KernelProfile], files: dict[str, str], all_warps: bool) -> tuple[str, list]:
    """Proton's mode for the pass, and the warps it records in each CTA (empty: all). Every warp
    where asked, where the mode samples already, or where a file uses warp specialisation (its extra
    warps, beyond num_warps, run other statements than the first of each group)."""
    specialised = any("warp_specialize" in text for text in files.values())
    recorded = None if all_warps or specialised or "sampling_strategy=" in mode else recorded_warps(kernels)
    if not recorded:
        return mode, []
    return f"{mode}:sampling_strategy=selective:sampling_options={','.join(map(str, recorded))}", recorded


def recorded_warps(kernels: list[KernelProfile]) -> list[int] | None:
    """The warps Proton records in each CTA: the first of each warp group (of the kernel with the
    fewest warps, so every id exists in each), or None where that is every warp.

    Warps outside a warp-specialised group run the same statements on other data, so one per group
    gives the same per-warp figures (benchmarks/regions_sampling.py) with a fraction of the events:
    a 4096^3 GEMM's trace was 140 MB and Proton took 8.6 s to write it at exit."""
    counts = [sig.num_warps for k in kernels for sig in k.signatures if sig.num_warps]
    fewest = min(counts, default=timeline.WARPS_PER_GROUP)
    warps = list(range(0, fewest, timeline.WARPS_PER_GROUP))
    return warps if len(warps) < fewest else None


class _Filtered:
    """Passes the program's output through, except Proton's dropped-events warnings (one line per
    CTA and warp: 100 KB on a long loop), which it counts and keeps."""

    def __init__(self) -> None:
        self.dropped: list[tuple[int, int]] = []  # (events kept, events needed) per warning

    def write(self, text: str) -> None:
        import sys

        counts = _drop_counts(text)
        if counts:
            self.dropped.append(counts)
        else:
            sys.stderr.write(text)

    def flush(self) -> None:
        import sys

        sys.stderr.flush()


def _run(run: PassRun, prefix: Path, mode: str, sandbox=None, writable: tuple[Path, ...] = (), ahead=None) -> tuple:
    """The instrumented run (in the Python `ahead` started for it, where it fits), and the (kept, needed)
    event counts of Proton's dropped-events warnings."""
    from ..workload.runner import bootstrap_env, spawn

    env = bootstrap_env(interpret=False) | (run.env or {})  # no recorder: only the Proton session
    env.update({ENV_PREFIX: str(prefix), ENV_MODE: mode})
    if sandbox is None:
        sink = _Filtered()
        return spawn(run.command, cwd=str(run.cwd), env=env, timeout_s=run.timeout_s, echo=sink), sink.dropped
    from ..workload.workspace import Confinement, confined

    room = Confinement(Path(str(run.cwd)), writable[-1] / "home", SEED, writable)
    result = confined(sandbox, run.command, room, env=env, timeout_s=run.timeout_s, ahead=ahead)
    return result, [counts for line in result.tail if (counts := _drop_counts(line))]


STARTED_WITH = "torch and Triton imported"
SEED = 0  # the sandboxed run's generators (the metric is a share of cycles, not a comparison of outputs)


def turn_file(where: Path) -> Path:
    """The lock file of a `collect(where=where, turn=...)`'s GPU turn: in its output folder, which its
    sandbox binds (made now)."""
    folder = _layout(where)[1]
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "gpu-turn.lock"


def parked(where: Path) -> bool:
    """Whether the run of a `collect(where=where, turn=...)` waits for its GPU turn at its first launch (or had it)."""
    return window.parked(_layout(where)[1])


def _layout(where: Path) -> tuple[Path, Path, Path]:
    """Where a pass in `where` has its copy of the project, its output, and (sandboxed) its $HOME."""
    return where / "project", where / "out", where / "out" / "home"


def start_timer_head_start(sandbox, python: str, where: Path, env: dict[str, str] | None = None):
    """A Python for a later sandboxed `collect(where=where)`, started now with torch and Triton imported
    (`HeadStart`), so that the instrumented run of a candidate does not start with seconds of imports;
    None where the command is no Python's. `env`: the variables the run will add (its GPU)."""
    from ..workload.head_start import HeadStart, is_python
    from ..workload.runner import bootstrap_env
    from ..workload.workspace import confined_env

    if not is_python(python):
        return None
    copy, folder, home = _layout(where)
    started_env = confined_env(sandbox, bootstrap_env(interpret=False) | (env or {}), home, SEED)
    return HeadStart.start(
        sandbox, python, env=started_env, writable=(copy, folder, home), go_file=home / ".intelliperf-run.json"
    )


def _drop_counts(line: str) -> tuple[int, int] | None:
    """(events kept, events needed) from one of Proton's dropped-events warnings."""
    match = _DROPPED.search(line)
    return (int(match[2]), int(match[3])) if match else None


def _buffer_size(mode: str) -> int:
    found = re.search(r"buffer_size=(\d+)", mode)
    return int(found[1]) if found else 65536


def dropped_note(dropped: list[tuple[int, int]], mode: str) -> str | None:
    if not dropped:
        return None
    kept, worst = dropped[0][0], max(needed for _, needed in dropped)
    return (
        f"Proton's buffer ({_buffer_size(mode)} bytes per CTA) kept {kept} of up to {worst} events per warp: "
        "the earliest were dropped"
    )


def bigger_buffer(dropped: list[tuple[int, int]], mode: str, kernels: list[KernelProfile]) -> str | None:
    """The mode with a buffer that holds every event the first run saw, if the whole grid's buffers
    fit in MAX_BUFFER_BYTES of device memory; else None."""
    if not dropped:
        return None
    kept, worst = dropped[0][0], max(needed for _, needed in dropped)
    size = _buffer_size(mode)
    needed = 1 << math.ceil(math.log2(size * worst / max(kept, 1) * 1.25))
    ctas = max((math.prod(sig.grid) for k in kernels for sig in k.signatures), default=1)
    if needed <= size or needed * ctas > MAX_BUFFER_BYTES:
        return None
    return (
        re.sub(r"buffer_size=\d+", f"buffer_size={needed}", mode)
        if "buffer_size=" in mode
        else f"{mode}:buffer_size={needed}"
    )


def _pictures(intervals, regions, folder: Path, kernel: str, png: bool) -> dict[str, str]:
    files = {"timeline": str(timeline.perfetto(intervals, regions, folder / f"timeline-{kernel}.json"))}
    if png:
        try:
            files["png"] = str(
                timeline.render_png(
                    intervals, regions, folder / f"timeline-{kernel}.png", f"{kernel}: regions per warp"
                )
            )
        except ImportError:
            files["png_missing"] = "matplotlib is not installed (pip install 'intelliperf[plot]')"
    return files


def static_regions(profile: KernelProfile, evidence: list[Evidence]) -> list[str]:
    """Without timers: each region of the kernel and what the static view compiled there (cuda:90)."""
    done = layout_of(profile.file, profile.name, profile.line)
    if done is None:
        return []
    out = []
    for region in done.regions:
        if region.kind in ("kernel", "loop"):
            continue
        seen: dict[str, int] = {}
        for ev in evidence:
            for f in ev.facts:
                if f.target.startswith("cuda") and region.first_line <= f.line <= region.last_line:
                    seen[f.instruction] = seen.get(f.instruction, 0) + f.count
        compiled = ", ".join(f"{n}x {i}" for i, n in seen.items()) or "no memory or tensor-core instruction"
        out.append(
            f"region {region.name} ({region.kind}, lines {region.first_line}-{region.last_line}"
            f"{', in the loop' if region.in_loop else ''}): compiled for cuda:90: {compiled}"
        )
    return out
