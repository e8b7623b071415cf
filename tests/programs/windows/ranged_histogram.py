"""Counts of x in `bins` equal bins over [lo, hi] (torch.histc's rule: hi in the last bin, values outside
and NaN ignored); the bins come from the values, so they are addresses."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def ranged_histogram_kernel(x_ptr, hist_ptr, n, lo, hi, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    inside = (offs < n) & (x >= lo) & (x <= hi)
    b = tl.minimum(((tl.where(inside, x, lo) - lo) / (hi - lo) * BINS).to(tl.int32), BINS - 1)
    tl.atomic_add(hist_ptr + b, 1, mask=inside)


def ranged_histogram(x: torch.Tensor, bins: int, lo: float, hi: float, block: int = 256) -> torch.Tensor:
    hist = torch.zeros(bins, device=x.device, dtype=torch.int32)
    ranged_histogram_kernel[(triton.cdiv(x.numel(), block),)](x, hist, x.numel(), lo, hi, BINS=bins, BLOCK=block)
    return hist


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    torch.manual_seed(0)
    x = torch.rand(n, device=device) * 10
    got = ranged_histogram(x, 16, 0.0, 10.0)
    assert torch.equal(got.cpu(), torch.histc(x.cpu(), 16, 0.0, 10.0).to(torch.int32)), "histogram differs"
    print("counts", got.sum().item())
