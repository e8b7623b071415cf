"""`intelliperf optimize` with the offline rewriters on the examples, on a GPU: what it wins and
what each stage costs.

    python benchmarks/optimize_gpu.py [--quick] [--out benchmarks/results/optimize_h100.json]

Each case runs the CLI as a user would (a subprocess, no model configured) and reads its JSON
report. Printed last: per case the winner, its speedup with the validators' 95 % interval, the
kernel time before/after, seconds per stage (profile, reference capture, and per attempt:
rewrite, candidate run, replay, timing, metric), and the runs of the user's program per attempt
(the candidate run; the replay/timing worker is counted apart). Targets from the issue: the
contended sum >= 100x, the contended histogram >= 3x, <= 20 s per attempt.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = "examples/atomic_contention"
CASES = [
    # name, extra CLI options, program, target speedup (None: report only)
    ("contended_sum/recipes", [], f"{EXAMPLES}/contended_sum.py", 100.0),
    ("contended_histogram/recipes", [], f"{EXAMPLES}/contended_histogram.py", 3.0),
    ("contended_sum/search", ["--rewriter", "search", "--max-attempts", "3"], f"{EXAMPLES}/contended_sum.py", None),
]
ATTEMPT_TARGET_S = 20.0


def run_case(name: str, options: list[str], program: str, work: Path) -> dict:
    out = work / name.replace("/", "-")
    command = [
        sys.executable,
        "-m",
        "intelliperf",
        "optimize",
        "--formula",
        "atomicContention",
        "--out-dir",
        str(out),
        *options,
        "--",
        sys.executable,
        program,
    ]
    begin = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - begin
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else None
    if report is None:
        return {"case": name, "exit": done.returncode, "error": done.stderr[-2000:], "wall_s": wall}
    opt = report["optimization"] or {}
    attempts = [
        {
            "number": a["number"],
            "rewriter": a["rewriter"],
            "title": a["title"],
            "status": a["status"],
            "speedup": (a.get("verdict") or {}).get("speedup"),
            "metric": [(a.get("before") or {}).get("metric"), (a.get("after") or {}).get("metric")],
            "seconds": a["seconds"],
            "attempt_s": round(sum(a["seconds"].values()), 2),
            "program_runs": 1 if "candidate_run" in a["seconds"] else 0,
            "worker_runs": sum(k in a["seconds"] for k in ("replay", "timing")),
            "problems": [p["kind"] for p in ((a.get("verdict") or {}).get("problems") or [])],
        }
        for a in opt.get("attempts", [])
    ]
    return {
        "case": name,
        "exit": done.returncode,
        "wall_s": round(wall, 2),
        "status": opt.get("status"),
        "winner": opt.get("winner"),
        "speedup": opt.get("speedup"),
        "stages": report["stages"],
        "baseline_ms": (opt.get("baseline") or {}).get("kernel_time_s", 0) * 1e3,
        "attempts": attempts,
        "device": report["run"]["device"],
        "versions": report["run"]["versions"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the contended sum")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "optimize_h100.json")
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    results = []
    with tempfile.TemporaryDirectory(prefix="intelliperf-bench-") as tmp:
        for name, options, program, target in cases:
            result = run_case(name, options, program, Path(tmp))
            result["target"] = target
            results.append(result)
            print(json.dumps(result), flush=True)
    import torch
    import triton

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "device": device,
        "command": "python benchmarks/optimize_gpu.py" + (" --quick" if args.quick else ""),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(f"\n{meta['device']}, torch {meta['torch']}, Triton {meta['triton']}")
    print(
        f"{'case':30} {'status':8} {'speedup [95% CI]':24} {'before->after ms':20} {'profile':>8} {'ref':>6} "
        f"{'attempts (s each)':28} target"
    )
    for r in results:
        if "error" in r:
            print(f"{r['case']:30} FAILED exit {r['exit']}: {r['error'][-300:]}")
            continue
        sp = r["speedup"]
        text = f"{sp['estimate']:.1f}x [{sp['low']:.1f}, {sp['high']:.1f}]" if sp else "-"
        times = f"{sp['reference_ms']:.3f}->{sp['candidate_ms']:.3f}" if sp else f"{r['baseline_ms']:.3f}->-"
        each = ", ".join(f"{a['attempt_s']:.1f}" for a in r["attempts"])
        met = (
            "-"
            if r["target"] is None
            else ("met" if sp and sp["low"] >= r["target"] else f"NOT met (>= {r['target']}x)")
        )
        slow = [a for a in r["attempts"] if a["attempt_s"] > ATTEMPT_TARGET_S]
        met += "" if not slow else f"; {len(slow)} attempt(s) over {ATTEMPT_TARGET_S:.0f} s"
        print(
            f"{r['case']:30} {r['status']:8} {text:24} {times:20} {r['stages'].get('profile', 0):8.1f} "
            f"{r['stages'].get('reference', 0):6.1f} {each:28} {met}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
