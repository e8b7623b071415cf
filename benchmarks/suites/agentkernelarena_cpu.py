"""Which vendored AgentKernelArena tasks pass their own correctness command under Triton's interpreter.

    python benchmarks/suites/agentkernelarena_cpu.py [--only REGEX] [--timeout S] [--jobs N] [--resume]
        [--diagnose] [--out FILE.json]

Each task is copied afresh and its correctness command run with TRITON_INTERPRET=1 and
AKA_DEVICE=cpu (the vendored files' device variable). A run over --timeout seconds (default 120)
is stopped and recorded as too expensive for the interpreter, with its reason. With --diagnose, a
task that passes is then diagnosed (`intelliperf diagnose --kernel` its config's target
kernels, on its correctness command, --timeout seconds again): the kernels diagnosed and the
formulas that flag one go into its row. --resume keeps FILE.json's rows and runs only the tasks
not in it. Results: FILE.json and a Markdown list beside it (default
benchmarks/results/agentkernelarena_cpu_correctness.*).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from intelliperf.campaign.peer import environment, run_commands
from intelliperf.campaign.suite import argv, copy_task, find_tasks

SUITE = Path(__file__).resolve().parent / "agentkernelarena"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "agentkernelarena_cpu_correctness.json"


def check(task, timeout: float, scratch: Path, diagnose: bool) -> dict:
    if task.problem:
        return {"task": task.name, "status": "unusable", "seconds": 0, "detail": task.problem}
    copy = copy_task(task, scratch / task.name.replace("/", "__"))
    env = environment("cpu", "AKA_DEVICE")
    run = run_commands(task.correctness, copy, env, timeout)
    status = "pass" if run.ok else "too slow" if run.detail.endswith(f"over {timeout:g} s") else "fail"
    row = {"task": task.name, "status": status, "seconds": round(run.seconds, 1), "detail": run.detail[-300:]}
    if diagnose and run.ok:
        row["diagnosis"] = diagnosis(task, copy_task(task, copy), env, timeout)
    return row


def diagnosis(task, copy: Path, env: dict[str, str], timeout: float) -> dict:
    """`intelliperf diagnose -f auto` on the task's correctness command, its target kernels only."""
    report = copy / "intelliperf-diagnosis.json"
    kernel = ["--kernel", task.kernel_regex] if task.kernel_regex else []
    command = [sys.executable, "-m", "intelliperf", "diagnose", "--device", "cpu", *kernel]
    command += ["--timeout", f"{timeout:g}", "-o", str(report), "--", *argv(task.correctness[0])]
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        return {"ok": False, "seconds": round(time.monotonic() - start, 1), "detail": f"over {timeout + 60:g} s"}
    seconds = round(time.monotonic() - start, 1)
    if done.returncode != 0 or not report.is_file():
        tail = " / ".join(line.strip() for line in done.stderr.strip().splitlines()[-3:])
        return {"ok": False, "seconds": seconds, "detail": f"exit {done.returncode}: {tail[-300:]}"}
    data = json.loads(report.read_text())
    diagnoses = data.get("diagnoses", [])
    flagged = sorted({f["formula"] for d in diagnoses for f in d.get("findings", []) if f.get("present")})
    return {"ok": True, "seconds": seconds, "kernels": [d["kernel"] for d in diagnoses], "flagged": flagged}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=None)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--diagnose", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows: list[dict] = json.loads(args.out.read_text())["tasks"] if args.resume and args.out.is_file() else []
    done = {r["task"] for r in rows}
    tasks = [t for t in find_tasks(SUITE, args.only) if t.name not in done]
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(lambda t: check(t, args.timeout, Path(scratch), args.diagnose), tasks):
            rows.append(row)
            print(f"{row['status']:9} {row['seconds']:6.1f} s  {row['task']}  {row['detail'][-120:]}", flush=True)
            write(rows, args)
    write(rows, args)


def write(rows: list[dict], args) -> None:
    rows.sort(key=lambda r: r["task"])
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
        "| task | status | seconds | diagnose | detail |",
        "|---|---|---|---|---|",
        *(
            f"| {r['task']} | {r['status']} | {r['seconds']} | {said(r.get('diagnosis'))} "
            f"| {r['detail'][-160:].replace('|', '/')} |"
            for r in rows
        ),
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


def said(diagnosis: dict | None) -> str:
    if diagnosis is None:
        return "–"
    if not diagnosis["ok"]:
        return "error: " + diagnosis["detail"][-120:].replace("|", "/")
    return (", ".join(diagnosis["flagged"]) or "nothing flagged") + f" ({len(diagnosis['kernels'])} kernel(s))"


if __name__ == "__main__":
    main()
