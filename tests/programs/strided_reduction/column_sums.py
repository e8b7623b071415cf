"""Column sums of a row-major matrix: one program per column walks the rows in chunks and adds
them into a vector accumulator, reduced once at the end (every lane reads another row)."""

import torch
import triton
import triton.language as tl


@triton.jit
def column_sums_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK_ROWS: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_ROWS):
        rows = start + tl.arange(0, BLOCK_ROWS)
        x = tl.load(x_ptr + rows * stride_row + col, mask=rows < n_rows, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def column_sums(x):
    n_rows, n_cols = x.shape
    out = torch.empty(n_cols, dtype=torch.float32, device=x.device)
    column_sums_kernel[(n_cols,)](x, out, n_rows, n_cols, x.stride(0), BLOCK_ROWS=512)
    return out
