"""Time to a verdict: the seconds of each stage of `intelliperf diagnose -f diagnoseOnly` (and of
one optimize attempt), next to the program's plain run and to `ncu` alone on the same kernel.

    python benchmarks/stage_times.py [--suite examples|corpus|all] [--only REGEX] [--before]
                                     [--ncu-alone] [--optimize] [--timeout S] [--out FILE.json]

Per program: `plain` (the program itself), `after` (diagnose as it is: the profiler passes stop
the program once each top kernel had the launches they look at), with --before the same with
--full-run (the program runs to its end under every pass, as before the launch window), with
--ncu-alone `ncu -k <top kernel> -c 1 --metrics <the formulas' metrics>` on the program, and
with --optimize one attempt of `intelliperf optimize` for the program's labelled formula (more with
`--optimize-flag=--max-attempts --optimize-flag=N`: each is recorded)
(examples: its case; corpus: its first positive label). The JSON is rewritten after every
program; a Markdown table goes beside it. On the CPU the numbers are the interpreter's (the
corpus at its small sizes) and are labelled so; the targets are for a GPU. Where both run, the ncu
and region-timer passes run side by side (api._profiler_passes): their seconds overlap, and the
diagnose wall is less than the stages' sum.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from corpus_run import labels, programs  # noqa: E402

EXAMPLES = {  # program: formula it is an example of (positives and their clean fixes)
    "atomic_contention/contended_sum.py": "atomicContention",
    "atomic_contention/reduced_sum.py": "atomicContention",
    "atomic_contention/contended_histogram.py": "atomicContention",
    "memory_access/column_copy.py": "memoryAccess",
    "memory_access/naive_transpose.py": "memoryAccess",
    "memory_access/aos_gather.py": "memoryAccess",
    "bank_conflict/column_sums.py": "bankConflict",
    "overlap/gemm.py": "overlap",
    "overlap/gemm_pipelined.py": "overlap",
    "overlap/attention.py": "overlap",
}
STAGES = ("profile", "counters", "region_timers", "diagnose")


def _cases(suite: str, only: str | None) -> list[tuple[str, Path, str]]:
    cases = []
    if suite in ("examples", "all"):
        cases += [(rel, REPO / "examples" / rel, formula) for rel, formula in EXAMPLES.items()]
    if suite in ("corpus", "all"):
        for program in programs():
            positive = [f for f, yes in labels(program).items() if yes]
            cases.append((f"corpus/{program.name}", program, positive[0] if positive else "atomicContention"))
    return [c for c in cases if not only or re.search(only, c[0])]


def _timed(args: list[str], cwd: Path, timeout: float) -> tuple[int | None, float, str]:
    begin = time.perf_counter()
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return done.returncode, round(time.perf_counter() - begin, 2), (done.stdout + done.stderr)[-1500:]
    except subprocess.TimeoutExpired:
        return None, round(time.perf_counter() - begin, 2), f"ran past {timeout:.0f} s"


def _diagnose(program: Path, device: str, timeout: float, full_run: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        args = [
            sys.executable,
            "-m",
            "intelliperf",
            "diagnose",
            "-f",
            "diagnoseOnly",
            "--device",
            device,
            "-o",
            str(report),
            *(["--full-run"] if full_run else []),
            "--",
            sys.executable,
            program.name,
        ]
        code, wall, tail = _timed(args, program.parent, timeout)
        if code not in (0, 3) or not report.exists():  # 3: a bottleneck was found
            return {"wall_s": wall, "error": tail}
        data = json.loads(report.read_text())
    top = data["diagnoses"][0]["kernel"] if data["diagnoses"] else None
    return {
        "wall_s": wall,
        "stages": {k: round(v, 2) for k, v in data["stages"].items()},
        "launches": data["run"]["launches"],
        "top": top,
        "flagged": sorted({f["formula"] for d in data["diagnoses"] for f in d["findings"] if f["present"]}),
        "pass_notes": [
            n[:300] for n in data["notes"] if n.startswith(("ncu", "region timers")) or "no region timers" in n
        ],
    }


def _ncu_alone(program: Path, kernel: str, timeout: float) -> dict:
    from intelliperf.formulas import default_registry
    from intelliperf.profiling.ncu import find_ncu

    exe = find_ncu()
    if exe is None:
        return {"error": "ncu not found"}
    registry = default_registry()
    metrics = registry.create("diagnoseOnly").counter_metrics(registry, "ncu")
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            exe,
            "--clock-control",
            "none",
            "--target-processes",
            "all",
            "-k",
            f"regex:^{re.escape(kernel)}$",
            "-c",
            "1",
            "--metrics",
            ",".join(metrics),
            "--section",
            "SourceCounters",
            "-f",
            "-o",
            str(Path(tmp) / "r"),
            sys.executable,
            program.name,
        ]
        code, wall, tail = _timed(args, program.parent, timeout)
    return {"wall_s": wall} if code == 0 else {"wall_s": wall, "error": tail}


def _optimize(program: Path, formula: str, device: str, timeout: float, flags: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        args = [
            sys.executable,
            "-m",
            "intelliperf",
            "optimize",
            "-f",
            formula,
            "--device",
            device,
            "--max-attempts",
            "1",
            "--sandbox-env",
            "CORPUS_SMALL",
            "--out-dir",
            str(out),
            "--project",
            str(program.parent),
            *flags,
            "--",
            sys.executable,
            program.name,
        ]
        code, wall, tail = _timed(args, program.parent, timeout)
        report = out / "report.json"
        if not report.exists():
            return {"wall_s": wall, "error": tail}
        data = json.loads(report.read_text())
    opt = data.get("optimization") or {}
    attempts = opt.get("attempts", [])
    return {
        "wall_s": wall,
        "stages": {k: round(v, 2) for k, v in data["stages"].items()},
        "attempt": attempts[0]["seconds"] if attempts else None,
        "status": attempts[0]["status"] if attempts else (opt.get("status") or "nothing to optimize"),
        "reasons": attempts[0]["reasons"][:600] if attempts else "",  # why it was not accepted
        # its program run in a Python started ahead (workload.head_start)
        "ahead": bool(attempts) and any("started ahead" in n for n in (attempts[0]["verdict"] or {}).get("notes", [])),
        # every attempt, where --optimize-flag=--max-attempts asked for more (a sweep, then its pinned choice)
        "attempts": [
            {"title": a["title"], "status": a["status"], "seconds": a["seconds"], "reasons": a["reasons"][:600]}
            for a in attempts
        ],
    }


def markdown(results: dict) -> str:
    rows = [
        "| program | launches | plain s | diagnose s (profile / ncu / timers) | --full-run s (profile / ncu / "
        "timers) | ncu alone s | one attempt s |",
        "|---|---|---|---|---|---|---|",
    ]

    def stages(d: dict | None) -> str:
        if not d:
            return "-"
        if "error" in d:
            return "error" if "ran past" not in d["error"] else d["error"]
        s = d["stages"]
        return (
            f"{d['wall_s']:.1f} ({s.get('profile', 0):.1f} / {s.get('counters', 0):.1f} / "
            f"{s.get('region_timers', 0):.1f})"
        )

    for name, r in results["programs"].items():
        after, before = r.get("after"), r.get("before")
        attempt = r.get("optimize") or {}
        # `total` is an attempt's wall time; older results have only its (partly overlapping) stages, and the first
        tried = attempt.get("attempts") or (
            [{"seconds": attempt["attempt"], "status": attempt["status"]}] if attempt.get("attempt") else []
        )
        one = "; ".join(
            f"{a['seconds'].get('total', sum(a['seconds'].values())):.1f} ({a['status']})" for a in tried
        ) or attempt.get("status", "-")
        rows.append(
            f"| {name} | {(after or {}).get('launches', '-')} | {r['plain'].get('wall_s', '-')} | "
            f"{stages(after)} | {stages(before)} | {(r.get('ncu') or {}).get('wall_s', '-')} | {one} |"
        )
    return f"Stage times on {results['device']}\n\n" + "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="all", choices=("examples", "corpus", "all"))
    parser.add_argument("--only")
    parser.add_argument("--device", default="gpu", choices=("cpu", "gpu"))
    parser.add_argument("--before", action="store_true", help="also diagnose with --full-run")
    parser.add_argument("--ncu-alone", action="store_true")
    parser.add_argument("--optimize", action="store_true", help="also one optimize attempt")
    parser.add_argument("--optimize-flag", action="append", default=[], help="passed to optimize (repeatable)")
    parser.add_argument("--attempt-only", action="store_true", help="no plain run and no diagnose, only the attempt")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "stage_times.json")
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ.update(CORPUS_SMALL="1", TRITON_INTERPRET="1")
    import torch

    device = torch.cuda.get_device_name() if args.device == "gpu" else "cpu (Triton interpreter: not GPU times)"
    results = {"device": device, "command": " ".join(sys.argv), "programs": {}}
    for name, program, formula in _cases(args.suite, args.only):
        r: dict = {"formula": formula, "plain": {}}
        if not args.attempt_only:
            code, wall, tail = _timed([sys.executable, program.name], program.parent, args.timeout)
            r["plain"] = {"wall_s": wall} if code == 0 else {"wall_s": wall, "error": tail}
            r["after"] = _diagnose(program, args.device, args.timeout, full_run=False)
        if args.before:
            r["before"] = _diagnose(program, args.device, args.timeout, full_run=True)
        if args.ncu_alone and (r.get("after") or {}).get("top"):
            r["ncu"] = _ncu_alone(program, r["after"]["top"], args.timeout)
        if args.optimize or args.attempt_only:
            r["optimize"] = _optimize(program, formula, args.device, args.timeout * 2, args.optimize_flag)
        results["programs"][name] = r
        print(name, json.dumps(r), flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
        args.out.with_suffix(".md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
