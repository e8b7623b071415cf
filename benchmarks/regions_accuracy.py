"""Overhead and accuracy of intelliperf's region timers (GPU).

    python benchmarks/regions_accuracy.py OUT_DIR [inner|outer] [PROTON_MODE]

Instruments each examples/overlap kernel as `intelliperf regions` does (`inner`: also the loop's
load/dot/math statements; `outer`: kernel, prologue, loop and epilogue only), runs it once under
Proton (chrome trace, reduced size), and times the plain and the instrumented kernel at full
size: median CUPTI kernel duration of 20 launches (torch.profiler), so Proton's per-launch buffer
fill is not counted. Then a spin of known length (clock64) inside one CTA: the "spin" region
against the cycles the kernel counted itself, and the whole-kernel region (cycles over the SM
clock measured with %globaltimer) against the CUPTI duration. Writes probe.json to OUT_DIR.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from intelliperf.profiling.regions import instrument  # noqa: E402

EXAMPLES = {
    "gemm": ("gemm_kernel", "gemm", ["--m", "1024", "--n", "1024", "--k", "4096"]),
    "gemm_pipelined": ("gemm_kernel", "gemm", ["--m", "1024", "--n", "1024", "--k", "4096"]),
    "attention": ("attention_kernel", "attention", ["--batch", "1", "--heads", "2", "--seq", "4096"]),
    "attention_pipelined": ("attention_kernel", "attention", ["--batch", "1", "--heads", "2", "--seq", "4096"]),
}

CHILD = r"""
import json, sys, time, torch
import triton, triton.profiler as proton, triton.profiler.language as pl
from torch.profiler import profile, ProfilerActivity
pl.enable_semantic("triton")
mod_dir, name, fn_name, out, mode = sys.argv[1:6]
small = sys.argv[6:]
sys.path.insert(0, mod_dir)
import importlib
orig = importlib.import_module(name)          # the example as written
inst = importlib.import_module(name + "_instrumented")
fn_o, fn_i = getattr(orig, fn_name), getattr(inst, fn_name)

def inputs(argv):
    sys.argv = ["x"] + argv
    h = importlib.import_module("_harness")
    return (h.gemm_inputs if fn_name == "gemm" else h.attention_inputs)("probe")[1:]

def cupti_ms(f, args, n=20):
    for _ in range(3): f(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n): f(*args)
        torch.cuda.synchronize()
    d = sorted(e.device_time for e in prof.events() if e.device_type.name == "CUDA" and fn_name + "_kernel" in e.name)
    return d[len(d)//2] / 1000 if d else None, len(d)

small_args, full_args = inputs(small), inputs([])
res = {"example": name}
res["plain_ms"], _ = cupti_ms(fn_o, full_args)
res["plain_small_ms"], _ = cupti_ms(fn_o, small_args)
proton.start(out + "/" + name, backend="instrumentation", data="trace", mode=mode or None)
t = time.perf_counter(); fn_i(*small_args); torch.cuda.synchronize()
res["traced_launch_s"] = time.perf_counter() - t
proton.finalize()
proton.start(out + "/" + name + "_tree", backend="instrumentation", data="tree", mode=mode or None)
res["instrumented_small_ms"], n1 = cupti_ms(fn_i, small_args, 5)
res["instrumented_ms"], n2 = cupti_ms(fn_i, full_args, 5)
proton.finalize()
res["cupti_kernels_seen"] = [n1, n2]
print(json.dumps(res))
"""

SPIN = r"""
import json, sys, torch, triton, triton.language as tl
import triton.profiler as proton, triton.profiler.language as pl
from torch.profiler import profile, ProfilerActivity
pl.enable_semantic("triton")

@triton.jit
def clock64(x):
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l,r", [x], dtype=tl.int64, is_pure=False, pack=1)

@triton.jit
def globaltimer(x):
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [x], dtype=tl.int64, is_pure=False, pack=1)

@triton.jit
def spin_kernel(out_ptr, cycles):
    pl.enter_scope("kernel")
    pid = tl.program_id(0)
    pl.enter_scope("spin")
    t0 = clock64(pid)
    t = t0
    while t - t0 < cycles:
        t = clock64(pid)
    pl.exit_scope("spin")
    tl.store(out_ptr + pid, t - t0)
    pl.exit_scope("kernel")

@triton.jit
def freq_kernel(out_ptr, cycles):
    pid = tl.program_id(0)
    g0 = globaltimer(pid)
    t0 = clock64(pid)
    t = t0
    while t - t0 < cycles:
        t = clock64(pid)
    g1 = globaltimer(pid)
    tl.store(out_ptr, t - t0)
    tl.store(out_ptr + 1, g1 - g0)

out = sys.argv[1]
buf = torch.zeros(2, dtype=torch.int64, device="cuda")
freq_kernel[(1,)](buf, 20_000_000); torch.cuda.synchronize()
freq_kernel[(1,)](buf, 20_000_000); torch.cuda.synchronize()
res = {"sm_clock_mhz": buf[0].item() / buf[1].item() * 1000, "freq_cycles": buf[0].item(), "freq_ns": buf[1].item()}
spins = []
for cycles in (10_000, 1_000_000, 4_000_000):
    o = torch.zeros(1, dtype=torch.int64, device="cuda")
    proton.start(f"{out}/spin_{cycles}", backend="instrumentation", data="trace", mode=sys.argv[2])
    spin_kernel[(1,)](o, cycles); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        spin_kernel[(1,)](o, cycles); torch.cuda.synchronize()
    proton.finalize()
    d = [e.device_time for e in prof.events() if e.device_type.name == "CUDA" and "spin" in e.name]
    spins.append({"cycles": cycles, "measured_in_kernel": o.item(), "cupti_us": d})
res["spins"] = spins
print(json.dumps(res))
"""


def summarize(path: Path) -> dict:
    data = json.loads(path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    per = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") == "call_path":
            continue
        s = per.setdefault(e["name"], {"n": 0, "dur_kcycles": 0.0, "negative": 0, "warps": set()})
        s["n"] += 1
        s["dur_kcycles"] += e["dur"]
        s["negative"] += e["dur"] < 0
        s["warps"].add((e["pid"], e["tid"].split(" (")[0]))
    for s in per.values():
        s["warps"] = len(s["warps"])
        s["per_warp_kcycles"] = s["dur_kcycles"] / max(s["warps"], 1)
    first = next((e for e in events if e.get("ph") == "X"), None)
    return {"regions": per, "events": len(events), "first_event": first}


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    inner = (sys.argv[2] if len(sys.argv) > 2 else "inner") == "inner"
    from intelliperf.profiling.region_timers import DEFAULT_MODE

    mode = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_MODE
    results = {"mode": mode, "inner": inner}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (kernel, fn, small) in EXAMPLES.items():
            src = (ROOT / "examples/overlap" / f"{name}.py").read_text()
            inst = instrument(src, kernel, inner=inner)
            (Path(tmp) / f"{name}.py").write_text(src)
            (Path(tmp) / f"{name}_instrumented.py").write_text(inst.text)
            (Path(tmp) / "_harness.py").write_text((ROOT / "examples/overlap/_harness.py").read_text())
            env = dict(os.environ)
            p = subprocess.run(
                [sys.executable, "-c", CHILD, tmp, name, fn, str(out), mode, *small],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            print(p.stderr[-3000:], file=sys.stderr)
            row = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-2000:]}
            trace = out / f"{name}.chrome_trace"
            if trace.exists():
                row["trace"] = summarize(trace)
            row["regions"] = [r.to_dict() for r in inst.regions]
            results[name] = row
            print(name, json.dumps({k: v for k, v in row.items() if k not in ("trace", "regions")}), flush=True)
        spin_file = Path(tmp) / "spin.py"  # @triton.jit needs its source in a file
        spin_file.write_text(SPIN)
        p = subprocess.run(
            [sys.executable, str(spin_file), str(out), mode], capture_output=True, text=True, timeout=300
        )
        print(p.stderr[-3000:], file=sys.stderr)
        results["spin"] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr}
        for f in out.glob("spin_*.chrome_trace"):
            results["spin"].setdefault("traces", {})[f.name] = summarize(f)
    (out / "probe.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"{'example':22s} {'plain ms':>9s} {'timed ms':>9s} {'overhead':>9s}")
    for name in EXAMPLES:
        row = results[name]
        if "plain_ms" in row:
            print(
                f"{name:22s} {row['plain_ms']:9.4f} {row['instrumented_ms']:9.4f} "
                f"{row['instrumented_ms'] / row['plain_ms'] - 1:+9.2%}"
            )
    spin = results["spin"]
    if "spins" in spin:
        clock = spin["sm_clock_mhz"]
        for sp, (_file, tr) in zip(
            spin["spins"],
            sorted(spin.get("traces", {}).items(), key=lambda kv: int(kv[0].split("_")[1].split(".")[0])),
            strict=False,
        ):
            regions = tr["regions"]
            # per execution: the trace holds two launches of 4 warps (the traced one and the timed one)
            region = regions["spin"]["dur_kcycles"] * 1000 / regions["spin"]["n"]
            whole = regions["kernel"]["dur_kcycles"] * 1000 / regions["kernel"]["n"]
            cupti = min(sp["cupti_us"]) if sp["cupti_us"] else None
            print(
                f"spin {sp['cycles']:>9,} cycles: region {region:,.0f} vs in-kernel {sp['measured_in_kernel']:,} "
                f"({region / sp['measured_in_kernel'] - 1:+.3%}); kernel region {whole / clock:,.1f} us at "
                f"{clock:.0f} MHz vs CUPTI {cupti} us"
            )


if __name__ == "__main__":
    main()
