"""What compute-sanitizer costs a worker on the GPU (issue 19): the pipelined 4096^3 GEMM of examples/overlap
under racecheck, and whether its instrumented kernel holds the GPU from other processes.

    python benchmarks/sanitizer_probe.py parts NUM_STAGES     a worker's start-up parts (torch, CUDA context,
                                                              module, compile, first launch on 8 CTAs, again)
    python benchmarks/sanitizer_probe.py race [CTAS]          the kernel under racecheck on its first CTAS
                                                              (default one per SM, as the validation does)
    python benchmarks/sanitizer_probe.py ticker [SECONDS]     1024^2 matmuls; the gaps over 0.2 s between them

(on the device machine, after gpu_setup.sh; `compute-sanitizer --tool racecheck|memcheck python ...` for the
sanitized rows; `race` beside `ticker`, both with the same T0 in the environment, for the GPU's sharing)
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "overlap"))
T0 = float(os.environ.get("T0", time.time()))
_last = time.perf_counter()


def mark(what: str) -> None:
    print(f"[{time.time() - T0:7.3f}] {what}", flush=True)


def part(what: str) -> None:
    global _last
    now = time.perf_counter()
    print(f"{what}: {now - _last:.3f} s", flush=True)
    _last = now


def _gemm_args(torch):
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b, c = torch.randn_like(a), torch.empty_like(a)
    return (a, b, c, 4096, 4096, 4096, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def parts(num_stages: int) -> None:
    import torch

    part("import torch")
    torch.cuda.init()
    part("torch.cuda.init")
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    part("first allocation (context)")
    import gemm

    part("import gemm.py")
    args = _gemm_args(torch)
    torch.cuda.synchronize()
    part("inputs")
    kw = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=num_stages)
    gemm.gemm_kernel.warmup(*args, grid=(8,), **kw)
    part("compile")
    for what in ("launch on 8 CTAs", "again"):
        gemm.gemm_kernel[(8,)](*args, **kw)
        torch.cuda.synchronize()
        part(what)


def race(ctas: int | None) -> None:
    import torch

    from intelliperf.validators import racecheck

    racecheck.cap_grids(ctas)
    import gemm

    args = _gemm_args(torch)
    torch.cuda.synchronize()
    mark("race: inputs")
    kw = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=4)
    gemm.gemm_kernel.warmup(*args, grid=(1024,), **kw)
    mark("race: compiled")
    gemm.gemm_kernel[(1024,)](*args, **kw)
    mark("race: launched")
    torch.cuda.synchronize()
    mark("race: kernel done")
    print(racecheck.notes())


def ticker(seconds: float) -> None:
    import torch

    x = torch.randn(1024, 1024, device="cuda")
    torch.cuda.synchronize()
    mark("ticker: ready")
    last, gaps, end = time.time(), [], time.time() + seconds
    while time.time() < end:
        x @ x
        torch.cuda.synchronize()
        now = time.time()
        if now - last > 0.2:
            gaps.append((round(last - T0, 3), round(now - last, 3)))
        last = now
    mark(f"ticker: gaps over 0.2 s (start, length): {gaps}")


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "parts":
        parts(int(rest[0]) if rest else 4)
    elif mode == "race":
        race(int(rest[0]) if rest else None)
    else:
        ticker(float(rest[0]) if rest else 25)
