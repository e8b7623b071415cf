"""Row sums of x clipped to [lo, hi]: the launcher takes the bounds as float arguments."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def clipped_sums_kernel(x_ptr, out_ptr, n_cols, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    clipped = tl.minimum(tl.maximum(x, lo), hi)
    tl.store(out_ptr + row, tl.sum(tl.where(mask, clipped, 0.0), axis=0))


def clipped_sums(x: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty(rows, device=x.device, dtype=x.dtype)
    clipped_sums_kernel[(rows,)](x, out, cols, lo, hi, BLOCK=triton.next_power_of_2(cols))
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (16, 100)
    torch.manual_seed(0)
    x = torch.rand(rows, cols, device=device)
    print(f"checksum {float(clipped_sums(x, 0.25, 0.75).sum()):.4f}")
