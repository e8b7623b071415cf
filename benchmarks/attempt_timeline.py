"""Where an optimize attempt's seconds go, as a timeline: `intelliperf optimize` run in this
process with the parent's stages marked (validation, the candidate's program run handed to its Python,
the replay's comparison, the sanitizers, the timing, the region-timer run), and, before each attempt's
folder is removed, what its processes said of their own time: the candidate program's capture (`at`:
made, first dispatch done, flushed) and each worker's replay.json (`phases`, `at`: early trials
begun, job received, done; and each trial's seconds). Every time is in seconds since this script started (wall clock).

    python benchmarks/attempt_timeline.py OUT_DIR [optimize options] -- COMMAND...
    (on the device machine, after gpu_setup.sh, in the program's folder; e.g.
     python benchmarks/attempt_timeline.py out -f overlap --rewriter search --max-attempts 3 -- python3 gemm.py)
"""

from __future__ import annotations

import glob
import importlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

T0 = time.time()


def mark(what: str) -> None:
    print(f"[{time.time() - T0:8.3f}] {what}", flush=True)


def marked(module, name: str, label: str | None = None) -> None:
    """`module.name` wrapped: its entry and exit marked."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        mark(f"> {label or name}")
        try:
            return original(*args, **kwargs)
        finally:
            mark(f"< {label or name}")

    setattr(module, name, wrapper)


def said(where: str) -> None:
    """What the attempt's processes wrote of their own time (before its folder goes)."""
    for path in sorted(glob.glob(where + "/validation/**/*.json", recursive=True)):
        if not (path.endswith("replay.json") or "/capture-" in path):
            continue
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            print("   ", path, "unreadable:", exc)
            continue
        at = {k: round(v - T0, 3) for k, v in (data.get("at") or {}).items() if isinstance(v, (int, float))}
        print("   ", path.split("validation/")[-1], "phases", data.get("phases"), "at", at, flush=True)
        runs = [f"{r.get('label')} {r['seconds']}" for r in data.get("runs", []) if "seconds" in r]
        if runs:  # each trial's call: compiling, launching, waiting for the GPU
            print("      trials (s):", ", ".join(runs), flush=True)


def main() -> int:
    out, rest = sys.argv[1], sys.argv[2:]
    rmtree = shutil.rmtree

    def removing(path, *args, **kwargs):
        if "attempt-" in str(path) and os.path.isdir(path):
            said(str(path))
        return rmtree(path, *args, **kwargs)

    shutil.rmtree = removing
    import intelliperf.optimization.attempt as loop_attempt
    from intelliperf import cli
    from intelliperf.profiling import region_timers
    from intelliperf.workload import head_start

    validate = importlib.import_module("intelliperf.validators.validate")  # the package's `validate` is the function
    for name in ("validate", "_judge", "compare_replay", "sanitized", "timed"):
        marked(validate, name)
    marked(head_start.HeadStart, "hand_over", "a Python started ahead takes its run")
    marked(loop_attempt, "measure_candidate")
    collect = region_timers.collect

    def timers(*args, **kwargs):
        mark("> region_timers.collect")
        run = collect(*args, **kwargs)
        mark("< region_timers.collect")
        for note in run.notes:
            print("    region timers:", note[:300], flush=True)
        return run

    region_timers.collect = timers
    rc = cli.main(["optimize", "--out-dir", out, *rest])
    mark(f"optimize exit {rc}")
    report = json.loads((Path(out) / "report.json").read_text())
    for attempt in report["optimization"]["attempts"]:
        print(attempt["title"][:70], attempt["status"], attempt["seconds"])
    return rc


if __name__ == "__main__":
    sys.exit(main())
