"""Each example diagnosed on the GPU with Nsight Compute's counters, next to the interpreter's
model of the same metric, with the time the ncu pass took (the counters table of docs/benchmarks.md).

    python benchmarks/counters_gpu.py [--out results.json] [--keep DIR]

Needs an NVIDIA GPU and ncu. The model figure comes from the same run: the formula is asked
again with the counter evidence left out (the trace is recorded on the GPU too).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import intelliperf
from intelliperf.formulas import default_registry

REPO = Path(__file__).resolve().parents[1]
CASES = [
    ("memoryAccess", "memory_access/column_copy.py"),
    ("memoryAccess", "memory_access/row_copy.py"),
    ("memoryAccess", "memory_access/naive_transpose.py"),
    ("memoryAccess", "memory_access/tiled_transpose.py"),
    ("memoryAccess", "memory_access/aos_gather.py"),
    ("memoryAccess", "memory_access/soa_gather.py"),
    ("bankConflict", "bank_conflict/column_sums.py"),
    ("bankConflict", "bank_conflict/column_sums_once.py"),
    ("bankConflict", "bank_conflict/row_sums.py"),
    ("atomicContention", "atomic_contention/contended_sum.py"),
    ("atomicContention", "atomic_contention/reduced_sum.py"),
    ("atomicContention", "atomic_contention/contended_histogram.py"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("counters_gpu.json"))
    parser.add_argument("--keep", type=Path, default=None, help="keep each example's ncu files under DIR/<example>")
    args = parser.parse_args()
    registry = default_registry()
    rows = []
    for formula_name, example in CASES:
        name = Path(example).stem
        started = time.perf_counter()
        report = intelliperf.diagnose(
            [sys.executable, str(REPO / "examples" / example)],
            formula=formula_name,
            top_n=1,
            device="gpu",
            counters="ncu",
            profile_dir=args.keep / name if args.keep else None,
        )
        wall = time.perf_counter() - started
        diag = report.diagnoses[0]
        finding = diag.findings[0]
        profile = report.kernels[0]
        formula = registry.create(formula_name)
        model = formula.diagnose(profile, [ev for ev in diag.evidence if ev.modelled or ev.backend == "static"])
        counted = next((ev for ev in diag.evidence if ev.backend == "ncu"), None)
        row = {
            "example": example,
            "formula": formula_name,
            "kernel": profile.name,
            "present": finding.present,
            "backend": finding.evidence_backend,
            "metric": finding.metric.model_dump() if finding.metric else None,
            "model_present": model.present,
            "model_metric": model.metric.model_dump() if model.metric else None,
            "kernel_time_us": profile.mean_time_s * 1e6,
            "ncu_pass_s": report.stages.get("counters"),
            "diagnose_wall_s": wall,
            "lines": [f"{Path(s.file).name}:{s.line} {s.detail}" for s in finding.lines],
            "counters": counted.metrics if counted else {},
            "notes": [n for n in report.notes if "ncu" in n],
        }
        if counted is not None and formula_name == "bankConflict":
            per_line = sum(c.counters.get("Shared Excess Wavefronts", 0) for c in counted.lines)
            total = sum(v for k, v in counted.metrics.items() if "bank_conflicts" in k)
            row["bank_conflicts_per_line_sum"], row["bank_conflicts_total"] = per_line, total
        rows.append(row)
        print(f"{name}: {json.dumps(row)[:600]}", flush=True)
    args.out.write_text(
        json.dumps({"versions": report.run.versions, "device": report.run.device, "rows": rows}, indent=1)
    )
    print("\n| example | formula | found | ncu metric | model | kernel µs | ncu pass s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        m, mm = r["metric"], r["model_metric"]
        print(
            f"| {Path(r['example']).stem} | {r['formula']} | {'yes' if r['present'] else 'no'} | "
            f"{m['name'] + ' ' + format(m['value'], '.4g') if m else '-'} | "
            f"{(mm['name'] + ' ' + format(mm['value'], '.4g')) if mm else '-'} "
            f"({'yes' if r['model_present'] else 'no'}) | {r['kernel_time_us']:.1f} | {r['ncu_pass_s'] or 0:.1f} |"
        )


if __name__ == "__main__":
    main()
