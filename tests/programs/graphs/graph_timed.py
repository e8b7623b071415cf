"""A workload timed as AgentKernelArena's vLLM runners time theirs: capture the kernel's launches in a
CUDA graph and replay it; where no graph can be made (torch's CPU build refuses one), launch eagerly."""

import os
import time

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def step(x):
    add_one_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)


def bench(fn, replays=3):
    """Mean seconds per call: through a CUDA graph's replays, else eager calls."""
    try:
        graph = torch.cuda.CUDAGraph()
    except RuntimeError:  # no CUDA: time eager launches
        start = time.perf_counter()
        for _ in range(replays):
            fn()
        return "eager", (time.perf_counter() - start) / replays
    fn()  # warm up (compile) outside the capture
    with torch.cuda.graph(graph):
        fn()
    start = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    torch.cuda.synchronize()
    return "graph", (time.perf_counter() - start) / replays


if __name__ == "__main__":
    x = torch.zeros(1000, device=DEVICE)
    how, seconds = bench(lambda: step(x))
    ran = 3 + (how == "graph")  # the warm-up launch runs; the captured one runs only in the replays
    assert torch.all(x == ran), x[:4]
    print(f"{how}: {seconds * 1e3:.3f} ms per call")
