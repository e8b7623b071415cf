"""Row sums of a matrix over a 2-D tile (a block of rows by a block of columns) per program: the
registerPressure recipe tile-row-loop declines it (its blocks are not one row). Runs on a GPU, or on
the CPU under TRITON_INTERPRET=1."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def row_sums_2d_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=rows < n_rows)


def row_sums_2d(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty(rows, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(rows, 4),)
    row_sums_2d_kernel[grid](x, out, rows, cols, x.stride(0), BLOCK_M=4, BLOCK_N=triton.next_power_of_2(cols))
    return out


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (8, 5000)
    print(f"checksum {float(row_sums_2d(torch.randn(rows, cols, device=device)).sum()):.4f}")


if __name__ == "__main__":
    main()
