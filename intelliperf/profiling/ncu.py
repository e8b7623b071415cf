"""Nsight Compute backend: hardware counters of the selected kernels, whole-kernel and per line.

One pass runs the user's command under `ncu`, filtered to the kernels asked about (exact
names) with a launch-count limit, clocks left as they are (`--clock-control none`), collecting
the formulas' metrics plus the SourceCounters section. Two imports of the report then give the
raw page (one row per profiled launch) and the per-SASS-instruction source page. Triton's
SASS carries line information, so instruction offsets map to the kernel's Python lines through
the table the recorder kept from the same binary (`static.sass_lines`).

Only the standard library: this runs where the program runs.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import env
from ..errors import ProfilerError
from ..models import LineCounters

ENV_NCU = env.NCU
PERMISSION = "ERR_NVGPUCTRPERM"

# Per-instruction columns of the source page kept per line (summed over the line's instructions).
SOURCE_COUNTERS = (
    "Instructions Executed",
    "L1 Tag Requests Global",
    "L2 Theoretical Sectors Global",
    "L2 Theoretical Sectors Global Ideal",
    "L2 Theoretical Sectors Global Excessive",
    "Warp Stall Sampling (All Samples)",
)
NWAY = "L1 Conflicts Shared N-Way"  # average ways per shared instruction: 1 means no conflict
EXCESS_SHARED = "Shared Excess Wavefronts"  # (ways - 1) x instructions executed, summed per line

_UNITS = {
    "byte": 1,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "Tbyte": 1e12,
    "nsecond": 1e-9,
    "ns": 1e-9,
    "usecond": 1e-6,
    "us": 1e-6,
    "msecond": 1e-3,
    "ms": 1e-3,
    "second": 1,
    "s": 1,
}


def find_ncu() -> str | None:
    """The ncu executable: $INTELLIPERF_NCU, then PATH, then the CUDA toolkit's."""
    from ..workload.runner import find_tool

    return find_tool(ENV_NCU, "ncu", "CUDA_HOME", "/usr/local/cuda")


@dataclass
class NcuRequest:
    kernels: list[str]  # exact kernel names
    metrics: list[str]
    launches: int = 1  # per kernel; ncu's --launch-count is this times the number of kernels
    clock_control: str = "none"  # leave the clocks as the program sees them
    source: bool = True  # per-instruction counters (SourceCounters) for line attribution
    nvtx_range: str | None = None  # profile only launches inside this NVTX push/pop range (the launch window)

    def name_filter(self) -> str:
        return "regex:^(" + "|".join(re.escape(k) for k in self.kernels) + ")$"


def profile_command(ncu: str, req: NcuRequest, report: Path, command: list[str], log: Path | None = None) -> list[str]:
    """ncu's own messages go to `log`, so the program's output passes through untouched."""
    args = [
        ncu,
        "--clock-control",
        req.clock_control,
        "--target-processes",
        "all",
        "-k",
        req.name_filter(),
        "-c",
        str(req.launches * len(req.kernels)),
    ]
    if req.nvtx_range:
        args += ["--nvtx", "--nvtx-include", f"{req.nvtx_range}/"]
    if req.metrics:
        args += ["--metrics", ",".join(req.metrics)]
    if req.source:
        args += ["--section", "SourceCounters"]
    if log is not None:
        args += ["--log-file", str(log)]
    return args + ["-f", "-o", str(report), *command]


def raw_command(ncu: str, req: NcuRequest, report: Path) -> list[str]:
    return [ncu, "-i", str(report), "--page", "raw", "--csv", "--metrics", ",".join(req.metrics)]


def source_command(ncu: str, report: Path, kernel: str) -> list[str]:
    return [
        ncu,
        "-i",
        str(report),
        "--page",
        "source",
        "--csv",
        "--print-source",
        "sass",
        "-k",
        f"regex:^{re.escape(kernel)}$",
        "-c",
        "1",
    ]


# --- parsing ----------------------------------------------------------------------------------


@dataclass
class Launch:
    """One profiled launch on the raw page."""

    kernel: str
    metrics: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # asked for, reported n/a (not on this GPU)


def number(text: str, unit: str = "") -> float | None:
    """A counter value as ncu prints it: '16,777,216', '12.50', 'n/a', '(!) n/a'; bytes and
    times are put in bytes and seconds."""
    text = text.strip().replace(",", "")
    if not text or "n/a" in text or text == "-":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value * _UNITS.get(unit.strip(), 1)


def _csv_rows(text: str) -> list[list[str]]:
    """CSV rows, without ncu's ==PROF==/==WARNING== lines mixed into the same stream."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def parse_raw(text: str, metrics: list[str]) -> list[Launch]:
    rows = _csv_rows(text)
    header_at = next((i for i, r in enumerate(rows) if r[:1] == ["ID"] and "Kernel Name" in r), None)
    if header_at is None:
        return []
    header = rows[header_at]
    name_col = header.index("Kernel Name")
    units = rows[header_at + 1] if header_at + 1 < len(rows) and not rows[header_at + 1][0].strip() else None
    launches = []
    for row in rows[header_at + (2 if units else 1) :]:
        if len(row) < len(header):
            continue
        launch = Launch(kernel=row[name_col])
        for metric in metrics:
            if metric not in header:
                launch.missing.append(metric)
                continue
            col = header.index(metric)
            value = number(row[col], units[col] if units else "")
            if value is None:
                launch.missing.append(metric)
            else:
                launch.metrics[metric] = value
        launches.append(launch)
    return launches


def parse_source(text: str) -> dict[str, list[dict[str, str]]]:
    """Kernel name -> its SASS rows (Address, Source and the counter columns) from the source page."""
    out: dict[str, list[dict[str, str]]] = {}
    kernel, header = None, None
    for row in _csv_rows(text):
        if row[:1] == ["Kernel Name"]:
            kernel, header = row[1] if len(row) > 1 else "", None
            out.setdefault(kernel, [])
        elif row[:1] == ["Address"]:
            header = row
        elif kernel is not None and header is not None and len(row) >= 2:
            out[kernel].append(dict(zip(header, row, strict=False)))
    return out


def attribute(rows: list[dict[str, str]], table: list[list]) -> tuple[list[LineCounters], str | None]:
    """Per kernel line, the counters of its instructions. `table` is [offset, file, line,
    instruction] from the binary that ran; an instruction that differs means another binary
    (recompiled, other options), and the counters are then left per kernel, with the reason."""
    if not rows or not table:
        return [], "no per-instruction counters or no SASS line table: counters are per kernel only"
    base = int(rows[0]["Address"], 16)
    where = {offset: (file, line, text) for offset, file, line, text in table}
    per_line: dict[tuple[str, int], LineCounters] = {}
    for row in rows:
        offset = int(row["Address"], 16) - base
        hit = where.get(offset)
        sass = " ".join(row.get("Source", "").split())
        if hit is None or _opcode(hit[2]) != _opcode(sass):
            return [], (
                f"the profiled binary differs from the one whose lines are known (offset {offset:#x}: "
                f"{sass!r}): counters are per kernel only"
            )
        entry = per_line.setdefault(hit[:2], LineCounters(file=hit[0], line=hit[1]))
        opcode = _opcode(sass)
        if opcode not in entry.instructions:
            entry.instructions.append(opcode)
        for name in SOURCE_COUNTERS:
            value = number(row.get(name, ""))
            if value:
                entry.counters[name] = entry.counters.get(name, 0.0) + value
        ways, executed = number(row.get(NWAY, "")), number(row.get("Instructions Executed", ""))
        if ways and ways > 1 and executed:
            entry.counters[EXCESS_SHARED] = entry.counters.get(EXCESS_SHARED, 0.0) + (ways - 1) * executed
    return sorted(per_line.values(), key=lambda c: (c.file, c.line)), None


def _opcode(sass: str) -> str:
    """'@!P0 LDG.E.128 R4, desc[UR6][R2.64]' -> 'LDG.E.128'."""
    words = [w for w in sass.split() if not w.startswith("@")]
    return words[0] if words else ""


def check_log(log: str, returncode: int | None, ncu: str) -> None:
    """Raise for the failures a user must act on; the rest is left to the parsers."""
    if PERMISSION in log:
        raise ProfilerError(
            f"{ncu} is not allowed to read the GPU's performance counters ({PERMISSION})",
            hint="Run as root, or let users profile: options nvidia NVreg_RestrictProfilingToAdminUsers=0 "
            "(https://developer.nvidia.com/ERR_NVGPUCTRPERM); or pass --counters off.",
        )
    if returncode is None:
        raise ProfilerError(
            f"the program under {ncu} ran past the timeout",
            hint="Profiling replays each kernel; raise --timeout or lower --top-n.",
        )
    failed = [line for line in log.splitlines() if line.startswith("==ERROR==")]
    if failed:
        raise ProfilerError(
            f"{ncu} failed: " + "; ".join(failed[:3]),
            hint="Check the metric names with `ncu --query-metrics`, or pass --counters off.",
        )


def query_metrics(text: str) -> set[str]:
    """Base metric names from `ncu --query-metrics` output (the first word of each row)."""
    names = set()
    for line in text.splitlines():
        word = line.split(maxsplit=1)[0] if line.strip() else ""
        if "__" in word:
            names.add(word)
    return names


def supported(metrics: list[str], known: set[str]) -> tuple[list[str], list[str]]:
    """(kept, dropped): a metric is known when its base name (before the roll-up suffix) is."""
    kept: list[str] = []
    dropped: list[str] = []
    for m in metrics:
        (kept if m in known or m.rsplit(".", 1)[0] in known else dropped).append(m)
    return kept, dropped
