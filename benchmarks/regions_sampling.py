"""Region timers on every warp, or on the first warp of each warp group: cost and figures (GPU).

    python benchmarks/regions_sampling.py OUT_DIR PROGRAM.py [PROGRAM.py ...]

Runs `intelliperf regions` (api.regions: the first launch of the top kernel, instrumented) on each
program twice in this process, with every warp recorded (`all_warps=True`) and with Proton's
selective sampling of the first warp of each warp group (the default). Prints, per run, the pass's
seconds (the program with Proton's exit, and the trace read and analysed), the trace's size, and the
figures the formulas and the report read; for the every-warp run, the same figures from its first
warp of each group only (sampling's bias, apart from run-to-run change); then the parse of each kept
trace timed both ways (the event pattern, and json.loads as before). Writes OUT_DIR/regions_sampling.json.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from intelliperf import api
from intelliperf.profiling import timeline
from intelliperf.profiling.regions import instrument

FIGURES = (
    "ctas",
    "warps_per_cta",
    "recorded_warps",
    "loop_iterations",
    "iteration_cycles",
    "kernel_cycles_per_warp",
    "exposed_memory_share",
    "compute_share",
    "unattributed_share",
    "overlap",
    "problems",
)


def one(program: list[str], out: Path, all_warps: bool) -> dict:
    """`intelliperf regions` on `program` (a script and its arguments): what it cost and measured, printed."""
    started = time.perf_counter()
    report = api.regions([sys.executable, *program], out_dir=out, all_warps=all_warps)
    wall = time.perf_counter() - started
    row: dict = {"program": program[0], "args": program[1:], "out": str(out), "all_warps": all_warps}
    row["wall_s"] = round(wall, 2)
    row["stages"] = report.stages
    row["pass_note"] = next((n for n in report.notes if n.startswith("region timers: one instrumented run")), None)
    row["other_notes"] = [n[:200] for n in report.notes if "region timers" in n and n != row["pass_note"]]
    regions = next((e.regions for d in report.diagnoses for e in d.evidence if e.regions), None)
    if regions is not None:
        row |= {k: getattr(regions, k) for k in FIGURES}
        row["regions"] = {s.name: s.cycles_per_execution for s in regions.regions}
    trace = out / "proton.chrome_trace"
    if trace.exists():
        text = trace.read_text()
        row["trace_mb"] = round(len(text) / 1e6, 1)
        row["first_tids"] = sorted(set(re.findall(r'"tid":\s*"([^"]*)"', text[:200000])))[:6]
        t0 = time.perf_counter()
        json.loads(text)
        t1 = time.perf_counter()
        events = timeline.complete_events(text)
        t2 = time.perf_counter()
        row["parse_s"] = {"json_loads": round(t1 - t0, 2), "pattern": round(t2 - t1, 2), "events": len(events)}
        if all_warps and regions is not None:  # the same run, its first warp of each group only: sampling's bias
            row["first_of_group_in_this_run"] = _first_of_group(report, events, regions.kernel)
    print(json.dumps(row, default=str)[:1500], flush=True)
    return row


def _first_of_group(report, events: list, kernel: str) -> dict:
    """The figures of an every-warp trace analysed on the first warp of each warp group only."""
    profile = next(k for k in report.kernels if k.name == kernel)
    done = instrument(Path(profile.file).read_text(), kernel, profile.line)
    intervals = [iv for iv in timeline.intervals(events, kernel) if iv.warp % timeline.WARPS_PER_GROUP == 0]
    figures = timeline.analyse(intervals, done.regions, kernel)
    return {k: getattr(figures, k) for k in FIGURES if k != "recorded_warps"}


def main() -> int:
    out, programs = Path(sys.argv[1]), sys.argv[2:]
    rows = []
    for program in programs:
        name = Path(program).stem
        for all_warps in (True, False):
            rows.append(one([program], out / f"{name}-{'all' if all_warps else 'sampled'}", all_warps))
    (out / "regions_sampling.json").write_text(json.dumps(rows, indent=1, default=str))
    print("\nprogram | warps | pass s | trace MB | exposed | compute | iteration cycles | overlap | problems")
    for r in rows:
        if "first_of_group_in_this_run" in r:
            f = r["first_of_group_in_this_run"]
            print(
                f"{Path(r['program']).stem} | every-warp run, first of each group only | - | - | "
                f"{f['exposed_memory_share']} | {f['compute_share']} | {f['iteration_cycles']} | {f['overlap']} | -"
            )
    for r in rows:
        warps = "all" if r["all_warps"] else f"sampled {r.get('recorded_warps')}"
        print(
            f"{Path(r['program']).stem} | {warps} | {r['stages'].get('region_timers', 0):.1f} | {r.get('trace_mb')} | "
            f"{r.get('exposed_memory_share')} | {r.get('compute_share')} | {r.get('iteration_cycles')} | "
            f"{r.get('overlap')} | {len(r.get('problems') or [])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
