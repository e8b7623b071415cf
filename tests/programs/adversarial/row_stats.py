"""Row sums and row maxima of a matrix: the adversarial suite's subject.

Written the way many programs are: unseeded inputs, no check of its own. The sums use one
atomic_add per lane into the row's sum (the atomicContention bottleneck); the maxima a masked
load with -inf for the lanes past the row. Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, sum_ptr, max_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.atomic_add(sum_ptr + row + cols * 0, x, mask=mask)
    xm = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    tl.store(max_ptr + row, tl.max(xm, axis=0))


def row_stats(x: torch.Tensor):
    rows, cols = x.shape
    sums = torch.zeros(rows, device=x.device, dtype=x.dtype)
    maxs = torch.empty(rows, device=x.device, dtype=x.dtype)
    row_stats_kernel[(rows,)](x, sums, maxs, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
    return sums, maxs


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (48, 100)
    total = 0.0
    for _ in range(2):
        x = torch.randn(rows, cols, device=device)
        sums, maxs = row_stats(x)
        total += float(sums.sum()) + float(maxs.sum())
    print(f"checksum {total:.4f}")


if __name__ == "__main__":
    main()
