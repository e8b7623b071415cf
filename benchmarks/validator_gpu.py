"""Validator figures on a GPU: the timing method's spread on identical kernels, and how long a
validation takes. Prints a table and writes JSON to $OUT (or the current folder).

    python benchmarks/validator_gpu.py [--trials 5]
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton

REPO = Path(__file__).resolve().parents[1]

from intelliperf.validators import Program, capture_reference, copy_project, judge, validate  # noqa: E402
from intelliperf.validators.runs.performance import device_bandwidth  # noqa: E402


def identical_trials(n: int, trials: int) -> dict:
    """An unchanged copy validated `trials` times: the two-process timing must never call it faster."""
    root = REPO / "tests" / "programs" / "validation"
    command = [sys.executable, "axpy.py", str(n)]
    work = Path(tempfile.mkdtemp())
    ref = capture_reference(Program(root, command), "axpy_kernel", interpret=False, work_dir=work / "ref")
    copy = copy_project(root, {}, work / "copy")
    half_widths, false_faster, estimates, ms = [], 0, [], []
    for t in range(trials):
        s = validate(ref, Program(copy, command), work_dir=work / f"v{t}").speedup
        half_widths.append((s.high - s.low) / 2 / s.estimate)
        estimates.append(s.estimate)
        ms.append(s.reference_ms)
        false_faster += judge(s)[0]
    half_widths.sort()
    return {
        "n": n,
        "kernel_ms_median": sorted(ms)[len(ms) // 2],
        "trials": trials,
        "false_faster": false_faster,
        "halfwidth_median_pct": 100 * half_widths[len(half_widths) // 2],
        "halfwidth_max_pct": 100 * half_widths[-1],
        "estimate_min": min(estimates),
        "estimate_max": max(estimates),
    }


def validation_time(root: Path, script: str, kernel: str, command: list[str], edits: list) -> dict:
    work = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    ref = capture_reference(Program(root, command), kernel, interpret=False, work_dir=work / "ref")
    capture_s = time.perf_counter() - start
    text = (root / script).read_text()
    for old, new in edits:
        text = text.replace(old, new)
    copy = copy_project(root, {script: text}, work / "copy")
    start = time.perf_counter()
    verdict = validate(ref, Program(copy, command), work_dir=work / "v")
    total = time.perf_counter() - start
    s = verdict.speedup
    return {
        "kernel": kernel,
        "reference_capture_s": round(capture_s, 2),
        "validate_s": round(total, 2),
        "stages_s": verdict.seconds,
        "accepted": verdict.accepted,
        "correct": verdict.correct,
        "speedup": s.estimate if s else None,
        "interval": [s.low, s.high] if s else None,
        "reference_ms": s.reference_ms if s else None,
        "candidate_ms": s.candidate_ms if s else None,
        "problems": [p.kind for p in verdict.problems],
        "reasons": verdict.reasons()[:3000],
        "written": ref.manifest["written"],
        "accumulated": ref.manifest["accumulated"],
        "read": ref.manifest["read"],
        "method": ref.manifest["method"],
        "notes": ref.manifest["notes"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    results = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "bandwidth_TBps": device_bandwidth() / 1e12,
        "identical": [],
        "validation": [],
    }
    for n in (1 << 22, 1 << 16) if args.trials else ():  # ~25 us and ~5 us kernels
        results["identical"].append(identical_trials(n, args.trials))
    examples = REPO / "examples" / "atomic_contention"
    results["validation"].append(
        validation_time(
            examples,
            "contended_sum.py",
            "contended_sum_kernel",
            [sys.executable, "contended_sum.py", "--repeat", "3"],
            [("tl.atomic_add(out_ptr + zeros, x, mask=mask)", "tl.atomic_add(out_ptr, tl.sum(x, 0))")],
        )
    )
    axpy_dir = REPO / "tests" / "programs" / "validation"
    results["validation"].append(
        validation_time(axpy_dir, "axpy.py", "axpy_kernel", [sys.executable, "axpy.py", str(1 << 22)], [])
    )
    out = Path(os.environ.get("OUT", "."))
    (out / "validator_gpu.json").write_text(json.dumps(results, indent=1))
    print(
        f"\n{results['device']}  torch {results['torch']}  triton {results['triton']}  "
        f"copy bandwidth {results['bandwidth_TBps']:.2f} TB/s"
    )
    print("identical kernels | n | kernel ms | trials | false faster | 95% half-width median / max | estimate range")
    for r in results["identical"]:
        print(
            f"  axpy | {r['n']} | {r['kernel_ms_median']:.4f} | {r['trials']} | {r['false_faster']} | "
            f"{r['halfwidth_median_pct']:.2f}% / {r['halfwidth_max_pct']:.2f}% | "
            f"{r['estimate_min']:.3f}-{r['estimate_max']:.3f}"
        )
    print("validation | capture s | validate s (stages) | accepted | speedup [interval] | ms ref -> cand")
    for r in results["validation"]:
        print(
            f"  {r['kernel']} | {r['reference_capture_s']} | {r['validate_s']} {r['stages_s']} | {r['accepted']} | "
            f"{r['speedup']} {r['interval']} | {r['reference_ms']} -> {r['candidate_ms']} {r['problems']}"
        )
        if r["problems"]:
            print("   ", r["written"], r["accumulated"], r["read"], r["method"], r["notes"], "\n", r["reasons"][:1500])


if __name__ == "__main__":
    main()
