"""Hardware counters for the top kernels: which profiler, and one pass of it.

`choose` picks the backend (ncu on NVIDIA, rocprofv3 on AMD, none on CPU or when asked);
`collect` runs the user's command once under it, restricted to the named kernels, and returns
an `Evidence` per kernel. The program runs as it would without intelliperf (no recorder), with
secrets removed from its environment.
"""

from __future__ import annotations

import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import ProfilerError, UsageError
from ..models import Evidence
from ..workload.runner import PassRun
from . import ncu as ncu_backend
from . import rocprof as rocprof_backend
from .inside import window

CHOICES = ("auto", "ncu", "rocprofv3", "off")
FINDERS = {"ncu": ncu_backend.find_ncu, "rocprofv3": rocprof_backend.find_rocprof}
INSTALL_HINTS = {
    "ncu": "Install Nsight Compute (it comes with the CUDA toolkit) or set INTELLIPERF_NCU to its path.",
    "rocprofv3": "Install ROCm's rocprofiler-sdk or set INTELLIPERF_ROCPROFV3 to its path.",
}


def choose(requested: str, interpret: bool, vendor: str | None, wanted: bool) -> tuple[str | None, str | None]:
    """(backend or None, a note for the report). `vendor` is the GPU's profiler ('ncu' or
    'rocprofv3', None without a GPU); `wanted`: the formula reads counters at all."""
    if requested not in CHOICES:
        raise UsageError(f"--counters must be one of {', '.join(CHOICES)}, got {requested!r}")
    if requested == "off" or (requested == "auto" and not wanted):
        return None, None
    if interpret or vendor is None:
        if requested != "auto":
            raise UsageError(
                f"--counters {requested} needs the kernels compiled on a GPU, and this run interprets them on the CPU",
                hint="Run on a GPU machine with --device gpu.",
            )
        return None, None
    backend = vendor if requested == "auto" else requested
    if backend != vendor:
        raise UsageError(f"--counters {backend} cannot profile this GPU; its profiler is {vendor}")
    if FINDERS[backend]() is None:
        if requested == "auto":
            return None, (
                f"{backend} was not found, so the formula judged on the interpreter model and the "
                f"static view instead of hardware counters. {INSTALL_HINTS[backend]}"
            )
        raise ProfilerError(f"--counters {backend}: {backend} was not found", hint=INSTALL_HINTS[backend])
    return backend, None


def gpu_vendor() -> str | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return "rocprofv3" if getattr(torch.version, "hip", None) else "ncu"


def collect(
    backend: str,
    run: PassRun,
    kernels: list[str],
    metrics: list[str],
    *,
    sass_tables: dict[str, list] | None = None,
    launches: int = 1,
    configs: dict[str, dict] | None = None,
) -> tuple[dict[str, Evidence], list[str]]:
    """One pass of the program under the profiler: evidence per kernel name, and notes. With
    `run.keep`, the profiler's files stay there (an .ncu-rep opens in Nsight Compute). With
    `run.stop_early`, the program stops once each kernel had `launches` launches (profiling/inside/window.py);
    ncu then profiles exactly those (an NVTX range marks them), and autotuned kernels run the
    `configs` the recorded run chose (window.tuned_configs) instead of benchmarking them again.
    `run.env`: variables added to the program's environment where it has a window (its GPU turn)."""
    with tempfile.TemporaryDirectory(prefix=f"intelliperf-{backend}-") as tmp:
        folder = Path(run.keep) if run.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        marks = Path(tmp) / "window"
        marks.mkdir()
        extra = (
            window.settings(dict.fromkeys(kernels, 0), launches, str(marks), nvtx=backend == "ncu", configs=configs)
            | (run.env or {})
            if run.stop_early
            else {}
        )
        there = PassRun(run.command, run.cwd, run.timeout_s, extra)  # (its variables: the window's, or none)
        if backend == "ncu":
            evidence, notes = _ncu(there, kernels, metrics, sass_tables or {}, launches, folder)
        else:
            evidence, notes = _rocprof(there, kernels, metrics, launches, folder)
        return evidence, notes + window.notes(marks, backend)


def _env(extra: dict[str, str]) -> dict:
    """Ours minus secrets, compiled kernels; with a window, the bootstrap that opens it."""
    from ..redact import without_secrets
    from ..workload.runner import bootstrap_env

    if extra:
        return bootstrap_env(interpret=False) | extra
    env = without_secrets(dict(os.environ))
    env.pop("TRITON_INTERPRET", None)
    return env


def _run(args: list[str], run: PassRun):
    """`args` (the profiler's command line around the program's) where `run` runs, with its variables."""
    from ..workload.runner import spawn

    return spawn(args, cwd=str(run.cwd or os.getcwd()), env=_env(run.env or {}), timeout_s=run.timeout_s)


def _ncu(run: PassRun, kernels, metrics, sass_tables, launches, folder: Path):
    import json
    import subprocess

    exe = ncu_backend.find_ncu()
    if exe is None:
        raise ProfilerError("ncu was not found", hint=INSTALL_HINTS["ncu"])
    notes: list[str] = []
    known = _known_metrics(exe)
    if known:  # metrics this GPU lacks would fail the whole pass: drop them, say so
        metrics, dropped = ncu_backend.supported(metrics, known)
        if dropped:
            notes.append(f"ncu: this GPU has no {', '.join(dropped)}")
    req = ncu_backend.NcuRequest(
        kernels=kernels, metrics=metrics, launches=launches, nvtx_range=window.NVTX_RANGE if run.env else None
    )
    report, log = folder / "report", folder / "ncu.log"
    started = time.perf_counter()
    result = _run(ncu_backend.profile_command(exe, req, report, run.command, log), run)
    log_text = log.read_text(errors="replace") if log.exists() else ""
    ncu_backend.check_log(log_text + "\n".join(result.tail), result.returncode, exe)
    notes.append(
        f"ncu pass: {time.perf_counter() - started:.1f} s for {len(kernels)} kernel(s), "
        f"{launches} launch(es) each, clocks not locked (--clock-control none)"
    )
    rep = report.with_suffix(".ncu-rep")
    if not rep.exists():
        notes.append("ncu profiled no launch of " + ", ".join(kernels) + _no_kernels_detail(log_text))
        return {}, notes
    # The report's pages are read by one `ncu -i` each: side by side, not one after the other.
    with ThreadPoolExecutor(max_workers=len(kernels) + 1) as pool:
        read = lambda args: subprocess.run(args, capture_output=True, text=True, timeout=300).stdout  # noqa: E731
        raw_page = pool.submit(read, ncu_backend.raw_command(exe, req, rep))
        source_pages = {name: pool.submit(read, ncu_backend.source_command(exe, rep, name)) for name in kernels}
        raw = raw_page.result()
        sources = {name: page.result() for name, page in source_pages.items()}
    (folder / "raw.csv").write_text(raw)
    by_kernel: dict[str, list[ncu_backend.Launch]] = {}
    for launch in ncu_backend.parse_raw(raw, metrics):
        by_kernel.setdefault(launch.kernel, []).append(launch)
    evidence = {}
    for name in kernels:
        profiled = by_kernel.get(name, [])
        if not profiled:
            notes.append(f"ncu profiled no launch of {name} (it did not run, or the launch limit was reached)")
            continue
        ev = Evidence(
            backend="ncu",
            modelled=False,
            kernel=name,
            launches_traced=len(profiled),
            metrics=_mean([p.metrics for p in profiled]),
        )
        missing = sorted({m for p in profiled for m in p.missing})
        if missing:
            ev.notes.append("not reported on this GPU: " + ", ".join(missing))
        (folder / f"source-{name}.csv").write_text(sources[name])
        (folder / f"sass-lines-{name}.json").write_text(json.dumps(sass_tables.get(name, [])))
        rows = next(iter(ncu_backend.parse_source(sources[name]).values()), [])
        ev.lines, why = ncu_backend.attribute(rows, sass_tables.get(name, []))
        if why:
            ev.notes.append(why)
        evidence[name] = ev
    return evidence, notes


def _known_metrics(exe: str) -> set[str]:
    """The metric names this ncu and GPU know (`ncu --query-metrics`, a few seconds), cached per ncu
    binary and GPU; empty when it cannot say."""
    import hashlib
    import subprocess

    import torch

    from ..env import cache_root

    key = hashlib.sha256(f"{exe}:{os.path.getmtime(exe)}:{torch.cuda.get_device_name()}".encode()).hexdigest()[:16]
    cached = cache_root() / f"ncu-metrics-{key}.txt"
    try:
        return set(cached.read_text().split())
    except OSError:
        pass
    query = subprocess.run([exe, "--query-metrics"], capture_output=True, text=True, timeout=120)
    known = ncu_backend.query_metrics(query.stdout)
    if known:
        from ..files import write_atomic

        cached.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(cached), "\n".join(sorted(known)))
    return known


def _no_kernels_detail(log: str) -> str:
    ran = [line.strip() for line in log.splitlines() if line[:1].isdigit() and ". " in line]
    return f"; kernels that ran: {', '.join(r.split('. ', 1)[1] for r in ran)}" if ran else ""


def _rocprof(run: PassRun, kernels, counters, launches, folder: Path):
    exe = rocprof_backend.find_rocprof()
    if exe is None:
        raise ProfilerError("rocprofv3 was not found", hint=INSTALL_HINTS["rocprofv3"])
    notes: list[str] = []
    started = time.perf_counter()
    result = _run(rocprof_backend.profile_command(exe, kernels, counters, folder, run.command), run)
    if result.returncode is None:
        raise ProfilerError(f"the program under {exe} ran past the timeout")
    notes.append(f"rocprofv3 pass: {time.perf_counter() - started:.1f} s for {len(kernels)} kernel(s)")
    per_kernel: dict[str, list[dict[str, float]]] = {}
    for path in rocprof_backend.collection_files(folder):
        for name, dispatches in rocprof_backend.parse_counter_collection(path.read_text()).items():
            per_kernel.setdefault(name, []).extend(dispatches)
    if not per_kernel and result.returncode != 0:
        raise ProfilerError(f"{exe} failed (exit {result.returncode}): " + " | ".join(result.tail[-3:]))
    evidence = {}
    for name in kernels:
        dispatches = per_kernel.get(name, [])[:launches]
        if not dispatches:
            notes.append(f"rocprofv3 reported no dispatch of {name}")
            continue
        evidence[name] = Evidence(
            backend="rocprofv3", modelled=False, kernel=name, launches_traced=len(dispatches), metrics=_mean(dispatches)
        )
    return evidence, notes


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = {k for r in rows for k in r}
    return {k: sum(r[k] for r in rows if k in r) / sum(1 for r in rows if k in r) for k in sorted(keys)}
