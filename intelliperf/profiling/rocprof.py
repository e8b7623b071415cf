"""rocprofv3 backend (AMD): the selected kernels' counters, whole-kernel.

Untested on hardware (no AMD GPU here): the command follows rocprofv3's documented options
and the parser reads the documented `*_counter_collection.csv` layout (one row per counter per
dispatch: Dispatch_Id, Kernel_Name, Counter_Name, Counter_Value, ...); tests run both on
recorded files written from that documentation.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from .. import env

ENV_ROCPROF = env.ROCPROF


def find_rocprof() -> str | None:
    from ..workload.runner import find_tool

    return find_tool(ENV_ROCPROF, "rocprofv3", "ROCM_PATH", "/opt/rocm")


def profile_command(
    rocprof: str, kernels: list[str], counters: list[str], out_dir: Path, command: list[str]
) -> list[str]:
    name_filter = "^(" + "|".join(re.escape(k) for k in kernels) + ")$"
    return [
        rocprof,
        "--pmc",
        *counters,
        "--kernel-include-regex",
        name_filter,
        "--output-format",
        "csv",
        "-d",
        str(out_dir),
        "-o",
        "intelliperf",
        "--",
        *command,
    ]


def parse_counter_collection(text: str) -> dict[str, list[dict[str, float]]]:
    """Kernel name -> one {counter: value} per dispatch, in dispatch order."""
    per_dispatch: dict[tuple[str, str], dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        try:
            name = _kernel_name(row["Kernel_Name"])
            value = float(row["Counter_Value"])
            key = (name, row.get("Dispatch_Id") or row.get("Correlation_Id") or "0")
        except (KeyError, TypeError, ValueError):
            continue  # a row we cannot read is skipped, not guessed
        counters = per_dispatch.setdefault(key, {})
        counters[row["Counter_Name"]] = counters.get(row["Counter_Name"], 0.0) + value  # dimensions add up
    out: dict[str, list[dict[str, float]]] = {}
    for (name, _dispatch), counters in sorted(per_dispatch.items(), key=lambda kv: (kv[0][0], _as_int(kv[0][1]))):
        out.setdefault(name, []).append(counters)
    return out


def collection_files(out_dir: Path) -> list[Path]:
    return sorted(out_dir.rglob("*counter_collection.csv"))


def _kernel_name(name: str) -> str:
    """'contended_sum_kernel.kd' or 'void foo(...)' -> the bare kernel name."""
    name = name.strip()
    name = name[:-3] if name.endswith(".kd") else name
    return name.split("(")[0].split()[-1] if name else name


def _as_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0
