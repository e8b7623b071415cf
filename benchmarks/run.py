"""The example suite end to end on a GPU, against the baselines, in one command.

    python benchmarks/run.py [--quick] [--only REGEX] [--gpus all|0,1] [--scaling REGEX] [--append]
                             [--repeat N] [--out FILE.json]

For every example under examples/ (each formula's positive cases and the clean kernels) it runs
`intelliperf diagnose` (was the bottleneck found, and not found on clean kernels?) and, for the
positive cases, `intelliperf optimize` with the offline rewriters (speedup with its interval,
the formula's metric before/after, seconds per stage, program runs). Baselines in the same run:
the original kernel, the hand-written fix in the example's folder and `triton.autotune` over the
compile knobs, all three timed alike (benchmarks/autotune_baseline.py: `triton.testing.do_bench`
through the example's launcher). The fix's kernel comes from its own clean-kernel row (a
`diagnose --counters off` run at held-back sizes). The roofline fraction is the kernel's throughput over peaks
measured once per run (a device-to-device copy; a bf16 matmul): bytes = every tensor argument
read or written once (a model, stated as such), flops = 2MNK for the GEMM, 4·B·H·S²·D for
attention. Each accepted winner is also run again on its own (its files over a copy of the
example folder) and must pass the example's own reference check. Held-back cases run the same
programs at sizes the examples were not written for.

With --gpus the cases are spread over several GPUs of the host, one case per GPU at a time
(every process of a case sees only its GPU, so its timings are its own); --scaling times
`optimize --devices` to a verdict with one GPU and with all of them.

Results go to a JSON file (rewritten after every case, so a cut-off run keeps what it measured),
a Markdown table next to it and a PNG of speedup per example against the hand-written fix and
`triton.autotune` (benchmarks/autotune_baseline.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from run_report import markdown, plot

from intelliperf.workload.devices import parse_devices, pinned_env, spread_over

REPO = Path(__file__).resolve().parents[1]
DEVICE = "gpu"  # a CPU dry run of the plumbing sets "cpu" (its numbers mean nothing)
MAX_ATTEMPTS = 3  # every offline win so far came at attempt 1; a no-win case costs one run per attempt
_WORKER = threading.local()  # .gpu: the GPU this thread's cases run on (None: all visible)


@dataclass
class Case:
    program: str  # examples/<folder>/<name>.py
    formula: str
    positive: bool
    fix: str | None = None  # the hand-written fix in the same folder
    target: float | None = None  # speedup the issue asks for
    args: list[str] = field(default_factory=list)
    held_back: bool = False
    quick: bool = False

    @property
    def name(self) -> str:
        return Path(self.program).stem + (" " + " ".join(self.args) if self.args else "")


def _cases() -> list[Case]:
    ac, ma = "examples/atomic_contention", "examples/memory_access"
    bc, ov = "examples/bank_conflict", "examples/overlap"
    return [
        Case(f"{ac}/contended_sum.py", "atomicContention", True, "reduced_sum.py", 100, quick=True),
        Case(f"{ac}/contended_histogram.py", "atomicContention", True, "privatized_histogram.py", 3),
        Case(f"{ac}/reduced_sum.py", "atomicContention", False, quick=True),
        Case(f"{ac}/privatized_histogram.py", "atomicContention", False),
        Case(f"{ma}/column_copy.py", "memoryAccess", True, "row_copy.py", 4, quick=True),
        Case(f"{ma}/naive_transpose.py", "memoryAccess", True, "tiled_transpose.py", 4),
        Case(f"{ma}/aos_gather.py", "memoryAccess", True, "soa_gather.py"),
        Case(f"{ma}/row_copy.py", "memoryAccess", False),
        Case(f"{ma}/tiled_transpose.py", "memoryAccess", False),
        Case(f"{ma}/soa_gather.py", "memoryAccess", False),
        Case(f"{bc}/column_sums.py", "bankConflict", True, "column_sums_once.py"),
        Case(f"{bc}/row_sums.py", "bankConflict", False),
        Case(f"{bc}/column_sums_once.py", "bankConflict", False),
        Case(f"{ov}/gemm.py", "overlap", True, "gemm_pipelined.py", 1.3, quick=True),
        Case(f"{ov}/attention.py", "overlap", True, "attention_pipelined.py"),
        Case(f"{ov}/gemm_pipelined.py", "overlap", False),
        Case(f"{ov}/attention_pipelined.py", "overlap", False),
        # held back: sizes the examples were not written for (odd lengths, rectangles)
        Case(
            f"{ac}/contended_sum.py",
            "atomicContention",
            True,
            "reduced_sum.py",
            args=["--n", "3000017"],
            held_back=True,
        ),
        Case(
            f"{ma}/naive_transpose.py",
            "memoryAccess",
            True,
            "tiled_transpose.py",
            args=["--m", "3000", "--n", "5000"],
            held_back=True,
        ),
        Case(
            f"{ov}/gemm.py",
            "overlap",
            True,
            "gemm_pipelined.py",
            args=["--m", "768", "--n", "1536", "--k", "2048"],
            held_back=True,
        ),
    ]


def env() -> dict:
    """Our environment, pinned to this worker thread's GPU when the cases are spread over several."""
    return {**os.environ, **pinned_env(getattr(_WORKER, "gpu", None))}


def cli(*args: str, timeout_s: float = 300) -> tuple[int, float, str]:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "intelliperf", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env(),
        )
        return done.returncode, time.perf_counter() - started, done.stderr[-1500:]
    except subprocess.TimeoutExpired:
        return 124, time.perf_counter() - started, f"timed out after {timeout_s:.0f} s"


def peaks() -> dict:
    """Copy bandwidth and bf16 matmul throughput, measured here (median of 10 after warm-up)."""
    import torch

    def median_ms(fn) -> float:
        for _ in range(3):
            fn()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src))
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    mm_ms = median_ms(lambda: a @ a)
    return {"copy_bytes_per_s": 2 * (1 << 30) / (copy_ms / 1e3), "bf16_flops_per_s": 2 * 8192**3 / (mm_ms / 1e3)}


def work(report: dict, program: str) -> tuple[str, float] | None:
    """('bytes' | 'flops', amount) of the top kernel's most used launch."""
    kernel = report["kernels"][0]
    args = {a["name"]: a for a in kernel["signatures"][0]["args"]}
    if "gemm" in program:
        m, k = args["a_ptr"]["shape"]
        return "flops", 2.0 * m * k * args["b_ptr"]["shape"][1]
    if "attention" in program:
        b, h, s, d = args["q_ptr"]["shape"]
        return "flops", 4.0 * b * h * s * s * d
    sizes = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "uint8": 1, "int8": 1}
    total = sum(
        math.prod(a["shape"]) * sizes.get(str(a["dtype"]).replace("torch.", ""), 4)
        for a in args.values()
        if a["kind"] == "tensor" and a.get("shape")
    )
    return "bytes", float(total)


def found(report: dict, case: Case, program: str) -> dict:
    """What the diagnosis said: flagged?, the top kernel, its device time, its work."""
    top = report["kernels"][0]
    return {
        "flagged": report["selected"] is not None,
        "kernel": top["name"],
        "time_ms": top["mean_time_s"] * 1e3,
        "work": work(report, program),
        "metric": next(
            (
                f["metric"]["value"]
                for d in report["diagnoses"]
                for f in d["findings"]
                if f["formula"] == case.formula and f.get("metric")
            ),
            None,
        ),
    }


def diagnose(case: Case, program: str, work_dir: Path, counters: str = "auto") -> dict:
    out = work_dir / "report.json"
    code, wall, err = cli(
        "diagnose",
        "--formula",
        case.formula,
        "--device",
        DEVICE,
        "--counters",
        counters,
        "-o",
        str(out),
        "--",
        sys.executable,
        program,
        *case.args,
    )
    if not out.exists():
        return {"exit": code, "error": err, "wall_s": round(wall, 1)}
    return {"exit": code, "wall_s": round(wall, 1), **found(json.loads(out.read_text()), case, program)}


def optimize(case: Case, work_dir: Path) -> tuple[dict, dict]:
    """optimize's own diagnosis (as `diagnose` would give it) and its optimization."""
    out = work_dir / "opt"
    code, wall, err = cli(
        "optimize",
        "--formula",
        case.formula,
        "--device",
        DEVICE,
        "--out-dir",
        str(out),
        "--max-attempts",
        str(MAX_ATTEMPTS),
        "--",
        sys.executable,
        case.program,
        *case.args,
        timeout_s=400,
    )
    path = out / "report.json"
    if not path.exists():
        failed = {"exit": code, "error": err, "wall_s": round(wall, 1)}
        return failed, failed
    report = json.loads(path.read_text())
    diagnosis = {"exit": code, **found(report, case, case.program)}
    opt = report.get("optimization") or {}
    attempts = opt.get("attempts", [])
    winner = attempts[opt["winner"] - 1] if opt.get("winner") else None
    result = {
        "exit": code,
        "wall_s": round(wall, 1),
        "status": opt.get("status"),
        "stages": report["stages"],
        "attempts": len(attempts),
        "program_runs": 1 + sum("candidate_run" in a["seconds"] for a in attempts),
        "speedup": opt.get("speedup"),
        "winner": winner and winner["title"],
        "metric": [
            winner and (winner.get("before") or {}).get("metric"),
            winner and (winner.get("after") or {}).get("metric"),
        ],
        "after_ms": winner and ((winner.get("after") or {}).get("kernel_time_s") or 0) * 1e3,
    }
    if winner:
        result["rerun_ok"] = rerun(case, opt["files"], work_dir)
    return diagnosis, result


def autotune(case: Case, program: str, kernel: str | None, *options: str) -> dict | None:
    """benchmarks/autotune_baseline.py on `program`'s `kernel`: the triton.autotune baseline, or with
    --time-only the kernel as written, timed the same way."""
    if DEVICE == "cpu" or not kernel:
        return None
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "autotune_baseline.py"), *options, program, kernel, *case.args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env=env(),
        )
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 300 s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"error": done.stderr[-800:]}
    return json.loads(lines[-1]) | {"wall_s": round(time.perf_counter() - started, 1)}


def rerun(case: Case, files: dict, work_dir: Path) -> bool:
    """The winner's files over a copy of the example folder; the program must pass its own check."""
    folder = REPO / Path(case.program).parent
    copy = work_dir / "rerun"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, path in files.items():
        (copy / Path(rel).name).write_text(Path(path).read_text())
    done = subprocess.run(
        [sys.executable, Path(case.program).name, *case.args],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
        env=env() | ({"TRITON_INTERPRET": "1"} if DEVICE == "cpu" else {}),
    )
    return done.returncode == 0 and "OK" in done.stdout


def roofline(d: dict, ms: float | None, peak: dict) -> float | None:
    if not d.get("work") or not ms:
        return None
    kind, amount = d["work"]
    rate = amount / (ms / 1e3)
    return rate / (peak["copy_bytes_per_s"] if kind == "bytes" else peak["bf16_flops_per_s"])


def run_case(case: Case, peak: dict, tmp: Path, clean: dict) -> dict:
    work_dir = tmp / re.sub(r"\W+", "_", case.name + case.formula)
    work_dir.mkdir(parents=True)
    row = {
        "case": case.name,
        "program": case.program,
        "formula": case.formula,
        "positive": case.positive,
        "held_back": case.held_back,
        "target": case.target,
        "gpu": getattr(_WORKER, "gpu", None),
    }
    started = time.perf_counter()
    if case.positive:  # optimize diagnoses first: its report holds both
        row["diagnose"], row["optimize"] = optimize(case, work_dir)
    else:
        row["diagnose"] = clean[(case.program, tuple(case.args))] = diagnose(case, case.program, work_dir / "diag")
    if case.fix:
        fix = str(Path(case.program).parent / case.fix)
        row["fix"] = clean.get((fix, tuple(case.args))) or diagnose(case, fix, work_dir / "fix", counters="off")
        row["autotune"] = autotune(case, case.program, row["diagnose"].get("kernel"))
        row["fix_bench"] = autotune(case, fix, row["fix"].get("kernel"), "--time-only")
    d, o, f = row["diagnose"], row.get("optimize", {}), row.get("fix", {})
    # One method for the original, the fix and autotune where the GPU timed them (do_bench through the
    # example's launcher); the recorder's device times otherwise (a CPU dry run). The roofline before and
    # after the fix: the validators' own times of the reference and the winner (one method, one worker).
    bench = (row.get("autotune") or {}).get("original_ms") or d.get("time_ms")
    fix_ms = (row.get("fix_bench") or {}).get("original_ms") or f.get("time_ms")
    timed = o.get("speedup") or {}
    row["roofline"] = {
        "before": roofline(d, timed.get("reference_ms") or bench, peak),
        "after": roofline(d, timed.get("candidate_ms"), peak),
        "fix": roofline(d, fix_ms, peak),
    }
    row["fix_speedup"] = bench / fix_ms if bench and fix_ms else None
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def scaling(pattern: str, gpus: list[str | None], tmp: Path) -> dict:
    """Time to a verdict of `optimize --rewriter search --devices ...` with one GPU and with all:
    the same attempt budget (two rounds' worth with all GPUs), so only the parallelism differs."""
    case = next((c for c in _cases() if c.positive and re.search(pattern, c.program)), None)
    if case is None or len(gpus) < 2 or None in gpus:
        return {"note": "needs a positive case and --gpus with two or more GPUs"}
    result = {"case": case.name, "max_attempts": 2 * len(gpus), "runs": []}
    for devices in (gpus[:1], gpus):
        out = tmp / f"scaling-{len(devices)}"
        code, wall, err = cli(
            "optimize",
            "--formula",
            case.formula,
            "--device",
            DEVICE,
            "--rewriter",
            "search",
            "--max-attempts",
            str(2 * len(gpus)),
            "--devices",
            ",".join(devices),
            "--out-dir",
            str(out),
            "--",
            sys.executable,
            case.program,
            "--repeat",
            "1",
            timeout_s=500,
        )
        report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
        opt = report.get("optimization") or {}
        result["runs"].append(
            {
                "gpus": len(devices),
                "exit": code,
                "wall_s": round(wall, 1),
                "attempts_s": (report.get("stages") or {}).get("attempts"),
                "status": opt.get("status"),
                "attempts": [(a["number"], a["title"], a["status"], a.get("device")) for a in opt.get("attempts", [])],
                "error": None if report else err,
            }
        )
    return result


def _meta(device: str) -> dict:
    """The run's device, versions, command and peaks, saved beside its results."""
    import torch
    import triton

    driver = (
        subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()
    )
    return {
        "device": device,
        "driver": driver[0] if driver else "?",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "command": " ".join(["python", "benchmarks/run.py", *sys.argv[1:]]),
        "peaks": peaks(),
        "max_attempts": MAX_ATTEMPTS,
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one positive and one clean case per formula family")
    parser.add_argument("--out", type=Path, help="JSON path (default benchmarks/results/run_<device>.json)")
    parser.add_argument("--only", help="only cases whose program path matches this regex")
    parser.add_argument("--append", action="store_true", help="add to the results already in --out")
    parser.add_argument(
        "--gpus",
        help="spread the cases over these GPUs (`all` or 0,1,...), one case per GPU at "
        "a time; each case's processes see only its GPU",
    )
    parser.add_argument(
        "--scaling",
        metavar="REGEX",
        help="also time optimize --devices to a verdict on the first "
        "positive case matching REGEX, with one GPU and with all of --gpus (search rewriter)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="launches per program run (default 1: each run "
        "records, traces and times one launch; the examples' own default is 3)",
    )
    parser.add_argument(
        "--render", type=Path, metavar="FILE.json", help="only write the Markdown and PNG of results measured before"
    )
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    if args.render:
        saved = json.loads(args.render.read_text())
        args.render.with_suffix(".md").write_text(markdown(saved["meta"], saved["results"]))
        plot(saved["results"], args.render.with_suffix(".png"))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("benchmarks/run.py measures on a GPU; none is visible here.", file=sys.stderr)
        return 2
    device = torch.cuda.get_device_name()
    slug = re.sub(r"\W+", "_", device).strip("_").lower()
    out = args.out or REPO / "benchmarks" / "results" / f"run_{slug}.json"
    meta = _meta(device)
    cases = [c for c in _cases() if (c.quick or not args.quick) and (not args.only or re.search(args.only, c.program))]
    for case in cases:
        case.args += ["--repeat", str(args.repeat)]
    order = {(c.program, c.name): i for i, c in enumerate(cases)}
    gpus = parse_devices(args.gpus) or [None]
    meta["gpus"] = len(gpus)
    rows: list[dict] = json.loads(out.read_text())["results"] if args.append and out.exists() else []
    if args.append and out.exists():
        meta["command"] = json.loads(out.read_text())["meta"]["command"] + " && " + meta["command"]
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)

    def save(case: Case, row: dict) -> None:  # in this thread, as each case finishes
        rows.append(row)
        meta["seconds"] = round(time.perf_counter() - started, 1)
        out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1, default=str) + "\n")
        print(
            json.dumps(
                {k: row[k] for k in ("case", "seconds", "gpu")}
                | {
                    "found": row["diagnose"].get("flagged"),
                    "speedup": (row.get("optimize") or {}).get("speedup", {})
                    and row["optimize"]["speedup"]["estimate"],
                }
            ),
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="intelliperf-bench-") as tmp:
        clean: dict = {}

        def on_gpu(case: Case, gpu: str | None) -> dict:
            _WORKER.gpu = gpu
            return run_case(case, meta["peaks"], Path(tmp), clean)

        # Clean kernels first (they are the hand fixes' baselines), then the positive cases.
        for batch in ([c for c in cases if not c.positive], [c for c in cases if c.positive]):
            spread_over(gpus, batch, on_gpu, save)
        if args.scaling:
            meta["scaling"] = scaling(args.scaling, gpus, Path(tmp))
            out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1, default=str) + "\n")
    rows.sort(key=lambda r: order.get((r["program"], r["case"]), len(order)))
    out.with_suffix(".md").write_text(markdown(meta, rows))
    plot(rows, out.with_suffix(".png"))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
