"""The verdict on real fixes: each after-version in benchmarks/fixes/ offered as the candidate for its
before-version, through the path a rewriter's answer takes (the kernel and launcher extracted from the
whole file with what it adds beside them, spliced into the program, the source policy and scope
checks, then `validate`).

    python benchmarks/fixes_run.py [--only REGEX] [--shard I/N] [--out results.json]
    (device tool) bash benchmarks/fixes_gpu.sh     carry: [".whl"]   (4 GPUs: three shards and the GPU tests)

On a GPU each pair also gets `triton.testing.do_bench` of the two launchers, in a process of its own
before the validation, on the inputs the validators time (the recorded size), each side twice in
turn and the faster kept, so the validator's speedup can be checked against it. On the CPU the
kernels run in Triton's interpreter and no speed is judged: a pair passes when the candidate is correct.
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
from intelliperf.validators.workers.replay_calls import call_launcher, placed

descs, inputs, files, name = json.loads(sys.argv[1])
calls = {}
for side, path in files.items():
    spec = importlib.util.spec_from_file_location(f"fix_{side}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = placed(load_tensors(inputs), descs)
    fn = getattr(module, name)
    calls[side] = lambda fn=fn, values=values: call_launcher(fn, descs, values)
out = {side: [] for side in calls}
for _ in range(2):  # each side twice, alternating; the faster of its two stands (a disturbed one is slower)
    for side, call in calls.items():
        out[side].append(triton.testing.do_bench(call, warmup=50, rep=300))
print(json.dumps({side: min(times) for side, times in out.items()}))
"""


def candidate_text(project: Path, after: str, kernel: str, launcher: str) -> str:
    """The before-file (project/program.py) with the after-file's kernel, launcher and code beside them
    in place, as the loop applies a rewriter's answer given as a whole file; raises the loop's own
    ScopeError/PolicyError where a rewriter's answer would be refused."""
    from intelliperf.optimization.apply import apply_candidate
    from intelliperf.rewriters import Candidate
    from intelliperf.rewriters.source import code_unit, extract_function
    from intelliperf.rewriters.transcript import beside_code

    file = project / "program.py"
    before = file.read_text()
    k_unit, l_unit = code_unit(file, kernel, project), code_unit(file, launcher, project)
    assert k_unit is not None and l_unit is not None, "the manifest names a kernel and launcher of the file"
    new_kernel, _ = extract_function(after, kernel)
    new_launcher, _ = extract_function(after, launcher)
    cand = Candidate(
        rewriter="replay",
        title="the maintainers' fix",
        kernel=None if (new_kernel or "").strip() == k_unit.source.strip() else new_kernel,
        launcher=None if (new_launcher or "").strip() == l_unit.source.strip() else new_launcher,
        module=beside_code([after], {kernel, launcher}, before),
    )
    return apply_candidate({"program.py": before}, k_unit, l_unit, cand).get("program.py", before)


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
        text = candidate_text(project, after, entry["kernel"], entry["launcher"])
    except Exception as exc:  # the refusal a rewriter's answer would get
        row.update(status="refused", reason=f"{type(exc).__name__}: {exc}")
        return row
    command = [sys.executable, "program.py", *(entry.get("gpu_args", []) if gpu else entry.get("cpu_args", []))]
    begin = time.perf_counter()
    try:
        program = Program(project, command)
        ref = capture_reference(program, entry["kernel"], interpret=not gpu, work_dir=work / name / "r")
    except Exception as exc:
        row.update(status="reference-failed", reason=f"{type(exc).__name__}: {str(exc)[:500]}")
        return row
    cand = copy_project(project, {"program.py": text}, work / name / "candidate")
    bench = _do_bench(ref, project, cand, entry["launcher"], work / name) if gpu else None
    verdict = validate(ref, Program(cand, command), work_dir=work / name / "v")
    row["seconds"] = round(time.perf_counter() - begin, 1)
    row["correct"] = verdict.correct
    row["accepted"] = verdict.accepted
    row["reasons"] = verdict.reasons()[:1500]
    row["notes"] = [n for n in verdict.notes if "NaN" in n or "timed call" in n]
    if verdict.speedup:
        row["speedup"] = verdict.speedup.model_dump()
    row["status"] = "accepted" if verdict.accepted else "correct" if verdict.correct else "rejected"
    if isinstance(bench, dict):
        row["do_bench_ms"] = bench
        row["do_bench_speedup"] = bench["before"] / bench["after"]
        if verdict.speedup:
            row["agreement"] = verdict.speedup.estimate / row["do_bench_speedup"]
    elif bench:
        row["do_bench_error"] = bench
    return row


def _do_bench(ref, project: Path, cand: Path, launcher: str, work: Path) -> dict | str | None:
    """do_bench of both launchers on the inputs the validators time (the program's own launcher arguments
    where they were kept, else the first replay trial's), in a process of its own, before the validation
    (whose workers would otherwise still be ending on the GPU): {side: ms}, or the error."""
    inputs = next((p for p in ("launcher-program.pt", "launcher-0.pt") if (work / "r" / "inputs" / p).exists()), None)
    if inputs is None:
        return None
    descs = ref.manifest["launcher"]["args"]
    files = {"before": str(project / "program.py"), "after": str(cand / "program.py")}
    arg = json.dumps([descs, str(work / "r" / "inputs" / inputs), files, launcher])
    done = subprocess.run([sys.executable, "-c", BENCH, arg], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return done.stderr[-800:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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
