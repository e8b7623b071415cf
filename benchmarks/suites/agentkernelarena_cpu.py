"""Which vendored AgentKernelArena tasks pass their own correctness command under Triton's interpreter.

    python benchmarks/suites/agentkernelarena_cpu.py [--only REGEX] [--timeout S] [--jobs N] [--out FILE.json]

Each task is copied afresh and its correctness command run with TRITON_INTERPRET=1 and
AKA_DEVICE=cpu (the vendored files' device variable). A run over --timeout seconds (default 60)
is stopped and recorded as too expensive for the interpreter, with its reason. Results: FILE.json
and a Markdown list beside it (default benchmarks/results/agentkernelarena_cpu_correctness.*).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from intelliperf.campaign.peer import environment, run_commands
from intelliperf.campaign.suite import copy_task, find_tasks

SUITE = Path(__file__).resolve().parent / "agentkernelarena"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "agentkernelarena_cpu_correctness.json"


def check(task, timeout: float, scratch: Path) -> dict:
    if task.problem:
        return {"task": task.name, "status": "unusable", "seconds": 0, "detail": task.problem}
    copy = copy_task(task, scratch / task.name.replace("/", "__"))
    run = run_commands(task.correctness, copy, environment("cpu", "AKA_DEVICE"), timeout)
    status = "pass" if run.ok else "too slow" if run.detail.endswith(f"over {timeout:g} s") else "fail"
    return {"task": task.name, "status": status, "seconds": round(run.seconds, 1), "detail": run.detail[-300:]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=None)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    tasks = find_tasks(SUITE, args.only)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(lambda t: check(t, args.timeout, Path(scratch)), tasks):
            rows.append(row)
            print(f"{row['status']:9} {row['seconds']:6.1f} s  {row['task']}  {row['detail'][-120:]}", flush=True)
            write(rows, args)
    write(rows, args)


def write(rows: list[dict], args) -> None:
    counts = {s: sum(r["status"] == s for r in rows) for s in ("pass", "fail", "too slow", "unusable")}
    machine = f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"machine": machine, "timeout_s": args.timeout, "counts": counts, "tasks": rows}, indent=1)
    )
    lines = [
        f"# AgentKernelArena correctness under Triton's interpreter ({len(rows)} tasks)",
        "",
        f"{machine}; `python benchmarks/suites/agentkernelarena_cpu.py --timeout {args.timeout:g} --jobs {args.jobs}`.",
        "",
        ", ".join(f"{n} {s}" for s, n in counts.items()) + ".",
        "",
        "| task | status | seconds | detail |",
        "|---|---|---|---|",
        *(f"| {r['task']} | {r['status']} | {r['seconds']} | {r['detail'][-160:].replace('|', '/')} |" for r in rows),
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
