"""Which vendored AgentKernelArena tasks pass their own correctness command under Triton's interpreter.

    python benchmarks/suites/agentkernelarena_cpu.py [--only REGEX] [--timeout S] [--jobs N] [--resume]
        [--diagnose] [--out FILE.json]

Each task is copied afresh and its correctness command run with TRITON_INTERPRET=1 and
AKA_DEVICE=cpu (the vendored files' device variable). A run over --timeout seconds (default 120)
is stopped and recorded as too expensive for the interpreter, with its reason. With --diagnose, a
task that passes is then diagnosed (`intelliperf diagnose --kernel` its config's target
kernels, on its correctness command, --timeout seconds again): the kernels diagnosed and the
formulas that flag one go into its row; --diagnose-only does that for the rows of FILE.json that passed
without it. --resume keeps FILE.json's rows and runs only the tasks
not in it. Results: FILE.json and a Markdown list beside it (default
benchmarks/results/agentkernelarena_cpu_correctness.*).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
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
    parser.add_argument("--diagnose-only", action="store_true", help="diagnose FILE.json's passes not yet diagnosed")
    parser.add_argument("--render", action="store_true", help="only rewrite FILE.json's counts and the Markdown")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    resumed = (args.resume or args.render or args.diagnose_only) and args.out.is_file()
    rows: list[dict] = json.loads(args.out.read_text())["tasks"] if resumed else []
    if args.render:
        return write(rows, args)
    if args.diagnose_only:
        return diagnose_passes(rows, args)
    done = {r["task"] for r in rows}
    tasks = [t for t in find_tasks(SUITE, args.only) if t.name not in done]
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(lambda t: check(t, args.timeout, Path(scratch), args.diagnose), tasks):
            rows.append(row)
            print(f"{row['status']:9} {row['seconds']:6.1f} s  {row['task']}  {row['detail'][-120:]}", flush=True)
            write(rows, args)
    write(rows, args)


# Why a task does not pass under the interpreter, from its output: (kind, reason). The first match wins.
CAUSES = (
    (r"No module named 'aiter'", "needs a GPU", "imports aiter, AMD's GPU kernel library"),
    (r"No module named 'jax'", "needs a GPU", "imports jax's GPU Triton bridge"),
    (r"MXFP4 not supported", "needs a GPU", "MXFP4 needs a GPU that has it"),
    (r"0 active drivers", "needs a GPU", "asks Triton's GPU driver for its target (the interpreter has none)"),
    (r"\.is_cuda", "needs a GPU", "its test asserts its tensors are on a CUDA device"),
    (
        r"Torch not compiled with CUDA",
        "needs a GPU",
        "puts tensors on CUDA where the vendored device variable does not reach",
    ),
    (
        r"'NoneType' and 'int'",
        "needs a GPU",
        "its launcher enters torch.cuda.device(tensor.device.index), which a CPU tensor has no index for",
    ),
    (r"Block pointers have been removed", "interpreter", "block pointers (tl.make_block_ptr), removed in Triton 3.9"),
    (
        r"Did you forget to add @triton.jit|'NoneType' object has no attribute 'to'",
        "interpreter",
        "calls libdevice (tl.extra), which the interpreter does not run",
    ),
    (
        r"mask has unsupported dtype|has no attribute 'nelement'",
        "interpreter",
        "Triton 3.9's interpreter cannot run it",
    ),
    (r"over \d+ s$", "too slow", "over the time limit under the interpreter"),
)


def cause(row: dict) -> tuple[str, str]:
    """What a row's status comes from: pass, or (needs a GPU | interpreter | too slow | fails) and why."""
    if row["status"] == "pass":
        diagnosis = row.get("diagnosis") or {}
        if not diagnosis.get("ok", True) and "launches the @triton.jit kernels" in diagnosis.get("detail", ""):
            return "no kernel", "passes without launching a kernel (its kernel tests skip without a GPU target)"
        return "pass", ""
    for pattern, kind, why in CAUSES:
        if re.search(pattern, row["detail"]):
            return kind, why
    said = re.search(r"Error: (.+?)(?: / |$)", row["detail"]) or re.search(
        r"FAIL\w*:? ([^/]+?)(?: / |$)", row["detail"]
    )
    return "fails", "its own check fails" + (f": {said.group(1)[:100]}" if said else "")


def diagnose_passes(rows: list[dict], args) -> None:
    """`diagnosis` for each row that passed without one (a run without --diagnose), in name order."""
    tasks = {t.name: t for t in find_tasks(SUITE, args.only)}
    with tempfile.TemporaryDirectory() as scratch:
        for row in rows:
            task = tasks.get(row["task"])
            if task is None or row["status"] != "pass" or "diagnosis" in row:
                continue
            copy = copy_task(task, Path(scratch) / task.name.replace("/", "__"))
            row["diagnosis"] = diagnosis(task, copy, environment("cpu", "AKA_DEVICE"), args.timeout)
            print(f"diagnosed {row['task']}: {said(row['diagnosis'])}", flush=True)
            write(rows, args)
    write(rows, args)


def write(rows: list[dict], args) -> None:
    rows.sort(key=lambda r: r["task"])
    for row in rows:
        row["kind"], row["why"] = cause(row)
    kinds = ("pass", "no kernel", "fails", "interpreter", "too slow", "needs a GPU")
    counts = {s: sum(r["kind"] == s for r in rows) for s in kinds}
    import torch
    import triton

    machine = (
        f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}, "
        f"torch {torch.__version__}, Triton {triton.__version__} (interpreter)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"machine": machine, "timeout_s": args.timeout, "counts": counts, "tasks": rows}, indent=1)
    )
    lines = [
        f"# AgentKernelArena correctness under Triton's interpreter ({len(rows)} tasks)",
        "",
        f"{machine}; `nice python benchmarks/suites/agentkernelarena_cpu.py --timeout {args.timeout:g} "
        "[--resume] [--diagnose | --diagnose-only]`, one task at a time (a row's own limit is in its output).",
        "",
        ", ".join(f"{n} {s}" for s, n in counts.items()) + ".",
        "",
        *summary(rows),
        "| task | status | seconds | diagnose | why | output |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r['task']} | {r['kind']} | {r['seconds']} | {said(r.get('diagnosis'))} | {r['why']} "
            f"| {r['detail'][-160:].replace('|', '/')} |"
            for r in rows
        ),
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


def summary(rows: list[dict]) -> list[str]:
    """Why, counted; and the diagnoses of the passes: run, flagged, by formula."""
    reasons = Counter((r["kind"], r["why"] if r["kind"] != "fails" else "its own check fails") for r in rows)
    done = [r["diagnosis"] for r in rows if r.get("diagnosis") and r["diagnosis"]["ok"]]
    formulas = Counter(f for d in done for f in d["flagged"])
    passes = sum(r["kind"] == "pass" for r in rows)
    return [
        "| status | why | tasks |",
        "|---|---|---|",
        *(f"| {kind} | {why or '–'} | {n} |" for (kind, why), n in sorted(reasons.items())),
        "",
        f"Diagnosed {len(done)} of the {passes} passes ({sum(bool(d['flagged']) for d in done)} flagged; "
        + ", ".join(f"{f} {n}" for f, n in formulas.most_common())
        + f"); {sum(1 for r in rows if r['kind'] == 'pass' and not (r.get('diagnosis') or {}).get('ok'))} "
        "passes not diagnosed or with a diagnose error.",
        "",
    ]


def said(diagnosis: dict | None) -> str:
    if diagnosis is None:
        return "–"
    if not diagnosis["ok"]:
        return "error: " + diagnosis["detail"][-120:].replace("|", "/")
    return (", ".join(diagnosis["flagged"]) or "nothing flagged") + f" ({len(diagnosis['kernels'])} kernel(s))"


if __name__ == "__main__":
    main()
