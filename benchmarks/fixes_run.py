"""The verdict on real fixes: each after-version in benchmarks/fixes/ offered as the candidate for its
before-version, through the path a rewriter's answer takes (the kernel and launcher extracted from the
whole file, spliced into the program, the source policy and scope checks, then `validate`).

    python benchmarks/fixes_run.py [--only REGEX] [--shard I/N] [--out results.json]
    (device tool) bash benchmarks/fixes_gpu.sh     carry: [".whl"]   (4 GPUs: three shards and the GPU tests)

On a GPU each pair also gets `triton.testing.do_bench` of the two launchers, in one process that
imports no intelliperf validation code, on the reference replay's own inputs (the recorded size), so
the validator's speedup can be checked against it. On the CPU the kernels run in Triton's interpreter
and no speed is judged: a pair passes when the candidate is correct.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXES = HERE / "fixes"

BENCH = r"""
import importlib.util, json, sys, torch, triton
from intelliperf.validators.correctness import load_tensors
from intelliperf.validators.replay import _placed, call_launcher

descs, inputs, files, name = json.loads(sys.argv[1])
out = {}
for side, path in files.items():
    spec = importlib.util.spec_from_file_location(f"fix_{side}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = _placed(load_tensors(inputs), descs)
    fn = getattr(module, name)
    out[side] = triton.testing.do_bench(lambda: call_launcher(fn, descs, values), warmup=50, rep=300)
print(json.dumps(out))
"""


def candidate_text(before: str, after: str, kernel: str, launcher: str) -> str:
    """The before-file with the after-file's kernel and launcher in place, as the loop splices an answer;
    raises the loop's own ScopeError/PolicyError where a rewriter's answer would be refused."""
    from intelliperf.rewriters.source import check_scope, extract_function, splice
    from intelliperf.validators.policy import check as check_policy

    text = before
    allowed = set()
    for name, is_kernel in ((kernel, True), (launcher, False)):
        new, _ = extract_function(after, name)
        old, _ = extract_function(before, name)
        if new is None or old is None or new.strip() == old.strip():
            continue
        check_policy(old, new, name, kernel=is_kernel)
        text = splice(text, name, new)
        allowed.add(name)
    check_scope(before, text, allowed, kernel=kernel)
    return text


def run_pair(entry: dict, gpu: bool, work: Path) -> dict:
    from intelliperf.validators import Program, capture_reference, copy_project, validate

    name = entry["name"]
    before = (FIXES / f"{name}_before.py").read_text()
    after = (FIXES / f"{name}_after.py").read_text()
    row: dict = {"name": name, "kind": entry["kind"], "bottleneck": entry["bottleneck"]}
    project = work / name / "project"
    project.mkdir(parents=True)
    (project / "program.py").write_text(before)
    try:
        text = candidate_text(before, after, entry["kernel"], entry["launcher"])
    except Exception as exc:  # the refusal a rewriter's answer would get
        row.update(status="refused", reason=f"{type(exc).__name__}: {exc}")
        return row
    command = [sys.executable, "program.py", *([] if gpu else entry.get("cpu_args", []))]
    begin = time.perf_counter()
    try:
        program = Program(project, command)
        ref = capture_reference(program, entry["kernel"], interpret=not gpu, work_dir=work / name / "r")
    except Exception as exc:
        row.update(status="reference-failed", reason=f"{type(exc).__name__}: {str(exc)[:500]}")
        return row
    cand = copy_project(project, {"program.py": text}, work / name / "candidate")
    verdict = validate(ref, Program(cand, command), work_dir=work / name / "v")
    row["seconds"] = round(time.perf_counter() - begin, 1)
    row["correct"] = verdict.correct
    row["accepted"] = verdict.accepted
    row["reasons"] = verdict.reasons()[:1500]
    row["notes"] = [n for n in verdict.notes if "NaN" in n or "timed call" in n]
    if verdict.speedup:
        row["speedup"] = verdict.speedup.model_dump()
    row["status"] = "accepted" if verdict.accepted else "correct" if verdict.correct else "rejected"
    if gpu and (work / name / "r" / "inputs" / "launcher-0.pt").exists():
        descs = ref.manifest["launcher"]["args"]
        files = {"before": str(project / "program.py"), "after": str(cand / "program.py")}
        arg = json.dumps([descs, str(work / name / "r" / "inputs" / "launcher-0.pt"), files, entry["launcher"]])
        done = subprocess.run([sys.executable, "-c", BENCH, arg], capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            bench = json.loads(done.stdout.strip().splitlines()[-1])
            row["do_bench_ms"] = bench
            row["do_bench_speedup"] = bench["before"] / bench["after"]
            if verdict.speedup:
                row["agreement"] = verdict.speedup.estimate / row["do_bench_speedup"]
        else:
            row["do_bench_error"] = done.stderr[-800:]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--shard", default="0/1", help="I/N: every N-th pair from the I-th (one per GPU)")
    args = parser.parse_args()
    import torch

    gpu = torch.cuda.is_available()
    entries = [e for e in json.loads((FIXES / "MANIFEST.json").read_text()) if re.search(args.only, e["name"])]
    index, count = map(int, args.shard.split("/"))
    entries = entries[index::count]
    rows = []
    work = Path(tempfile.mkdtemp(prefix="intelliperf-fixes-"))
    try:
        for entry in entries:
            row = run_pair(entry, gpu, work)
            rows.append(row)
            shown = {k: row.get(k) for k in ("name", "status", "do_bench_speedup", "agreement")}
            if row.get("speedup"):
                shown["speedup"] = round(row["speedup"]["estimate"], 3)
            print(json.dumps(shown), flush=True)
            if row["status"] not in ("accepted", "correct"):
                print("   ", (row.get("reason") or row.get("reasons") or "")[:600].replace("\n", "\n    "), flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
