"""The formulas for what maintainers fix, on the fix corpus: each pair in benchmarks/fixes/ labelled
registerPressure, laneUtilization, memoryLocality or atomicContention is diagnosed before and after
with its formula (flagged before, silent after is right), the offline rewriters (`--rewriter auto`
without a model: recipes, then the knob search) optimize the before-version, and the expert's
after-version is validated against it as `fixes_run.py` does; the offline speedup over the expert's
is the figure reported.

    python benchmarks/formulas_run.py [--only REGEX] [--shard I/N] [--out rows.json] [--no-optimize]
    (device tool) bash benchmarks/formulas_gpu.sh     carry: [".whl"]   (one shard per GPU)

On the CPU the programs run at each pair's `diagnose_cpu_args` (sizes where the bottleneck exists:
a whole row of 16,384 elements for a spill, a grid of several waves for locality) or `cpu_args`,
and no speed is judged.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXES = HERE / "fixes"
FORMULAS = ("registerPressure", "laneUtilization", "memoryLocality", "atomicContention")
sys.path.insert(0, str(HERE))


def diagnosed(program: Path, args: list[str], formula: str, kernel: str, device: str) -> dict:
    import intelliperf

    begin = time.perf_counter()
    try:
        command = [sys.executable, program.name, *args]
        report = intelliperf.diagnose(command, formula=formula, device=device, cwd=str(program.parent))
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    diagnosis = next((d for d in report.diagnoses if d.kernel == kernel), None)
    finding = diagnosis.findings[0] if diagnosis and diagnosis.findings else None
    if finding is None:
        return {"error": f"{kernel} was not among the diagnosed kernels"}
    return {
        "kernel": diagnosis.kernel,
        "present": finding.present,
        "metric": finding.metric.model_dump() if finding.metric else None,
        "backend": finding.evidence_backend,
        "explanation": finding.explanation[:600],
        "lines": [line.line for line in finding.lines],
        "notes": [note for ev in diagnosis.evidence for note in ev.notes][:6],
        "seconds": round(time.perf_counter() - begin, 1),
    }


def optimized(program: Path, args: list[str], formula: str, device: str, out: Path) -> dict:
    import intelliperf

    begin = time.perf_counter()
    try:
        report = intelliperf.optimize(
            [sys.executable, program.name, *args],
            formula=formula,
            rewriter="auto",  # offline: recipes, then the knob search
            device=device,
            cwd=str(program.parent),
            out_dir=out,
            max_attempts=3,
            project=program.parent,
        )
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    opt = report.optimization
    if opt is None:
        return {"status": "not flagged", "seconds": round(time.perf_counter() - begin, 1)}
    attempts = [
        {
            "title": a.title,
            "status": a.status,
            "speedup": a.verdict.speedup.estimate if a.verdict and a.verdict.speedup else None,
            "reasons": a.reasons[:300],
        }
        for a in opt.attempts
    ]
    won = next((a for a in opt.attempts if a.status == "accepted"), None)
    return {
        "status": "accepted" if won else "no fix",
        "title": won.title if won else None,
        "speedup": won.verdict.speedup.estimate if won and won.verdict and won.verdict.speedup else None,
        "attempts": attempts,
        "seconds": round(time.perf_counter() - begin, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--shard", default="0/1")
    parser.add_argument("--no-optimize", action="store_true")
    parser.add_argument(
        "--steps",
        default="diagnose,offline,expert",
        help="which of diagnose, offline, expert to run (a long pair's steps on two GPUs)",
    )
    args = parser.parse_args()
    import torch
    from fixes_run import run_pair

    gpu = torch.cuda.is_available()
    device = "gpu" if gpu else "cpu"
    entries = [
        e
        for e in json.loads((FIXES / "MANIFEST.json").read_text())
        if e["bottleneck"] in FORMULAS and re.search(args.only, e["name"])
    ]
    index, count = map(int, args.shard.split("/"))
    steps = set(args.steps.split(","))
    rows = []
    work = Path(tempfile.mkdtemp(prefix="intelliperf-formulas-"))
    try:
        for entry in entries[index::count]:
            name, formula = entry["name"], entry["bottleneck"]
            program_args = (
                entry.get("gpu_args", []) if gpu else entry.get("diagnose_cpu_args", entry.get("cpu_args", []))
            )
            row: dict = {"name": name, "formula": formula, "kind": entry["kind"], "args": program_args}
            for side in ("before", "after"):
                folder = work / name / side
                folder.mkdir(parents=True)
                shutil.copy(FIXES / f"{name}_{side}.py", folder / "program.py")
                if "diagnose" in steps:
                    row[side] = diagnosed(folder / "program.py", program_args, formula, entry["kernel"], device)
            if gpu and not args.no_optimize:
                before = work / name / "before" / "program.py"
                if "offline" in steps:
                    row["offline"] = optimized(before, program_args, formula, device, work / name / "o")
            if gpu and not args.no_optimize and "expert" in steps:
                expert = run_pair(entry, gpu, work / name / "expert")
                row["expert"] = {k: expert.get(k) for k in ("status", "reasons", "reason")}
                row["expert"]["speedup"] = (expert.get("speedup") or {}).get("estimate")
                if (row.get("offline") or {}).get("speedup") and row["expert"]["speedup"]:
                    row["offline_over_expert"] = row["offline"]["speedup"] / row["expert"]["speedup"]
            rows.append(row)
            print(
                json.dumps(
                    {k: row[k] for k in ("name", "formula")}
                    | {
                        "before": row.get("before", {}).get("present", row.get("before", {}).get("error")),
                        "after": row.get("after", {}).get("present", row.get("after", {}).get("error")),
                        "offline": (row.get("offline") or {}).get("speedup")
                        or (row.get("offline") or {}).get("status"),
                        "expert": (row.get("expert") or {}).get("speedup"),
                    }
                ),
                flush=True,
            )
            if args.out:
                args.out.write_text(json.dumps(rows, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
