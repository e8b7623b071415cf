"""Per-column statistics of a row-major matrix, one program per column: the mean (a scalar sum
of per-chunk tl.sum), the variance around it (a second pass over the column), and the running
sum down each column (a chunked tl.cumsum with the total of the chunks before it carried)."""

import torch
import triton
import triton.language as tl


@triton.jit
def column_mean_var_kernel(X, Mean, Var, M, N, stride_xm, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    total = 0.0
    for m in range(0, M, BLOCK_M):
        offs_m = m + tl.arange(0, BLOCK_M)
        x = tl.load(X + offs_m * stride_xm + pid, mask=offs_m < M, other=0.0).to(tl.float32)
        total += tl.sum(x, axis=0)
    mean = total / M
    sq = tl.zeros([BLOCK_M], dtype=tl.float32)
    for m in range(0, M, BLOCK_M):
        offs_m = m + tl.arange(0, BLOCK_M)
        x = tl.load(X + offs_m * stride_xm + pid, mask=offs_m < M, other=0.0).to(tl.float32)
        d = tl.where(offs_m < M, x - mean, 0.0)
        sq += d * d
    tl.store(Mean + pid, mean.to(Mean.dtype.element_ty))
    tl.store(Var + pid, (tl.sum(sq) / M).to(Var.dtype.element_ty))


def column_mean_var(x):
    M, N = x.shape
    mean = torch.empty(N, dtype=x.dtype, device=x.device)
    var = torch.empty(N, dtype=x.dtype, device=x.device)
    grid = (N,)
    column_mean_var_kernel[grid](x, mean, var, M, N, x.stride(0), BLOCK_M=128)
    return mean, var


@triton.jit
def column_cumsum_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        inside = rows < n_rows
        x = tl.load(x_ptr + rows * stride + col, mask=inside, other=0.0)
        tl.store(y_ptr + rows * stride + col, tl.cumsum(x, axis=0) + carry, mask=inside)
        carry += tl.sum(x, axis=0)


def column_cumsum(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    column_cumsum_kernel[(n_cols,)](x, y, n_rows, n_cols, x.stride(0), BLOCK=32)
    return y


@triton.jit
def column_prefix_and_total_kernel(X, Y, M, N, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    running = 0.0
    for s in range(0, M, BLOCK):
        r = s + tl.arange(0, BLOCK)
        x = tl.load(X + r * N + col, mask=r < M, other=0.0)
        tl.store(Y + r * N + col, tl.cumsum(x, axis=-1) + running, mask=r < M)
        running = running + tl.sum(x)
    tl.store(Y + M * N + col, running)


def column_prefix_and_total(x):
    M, N = x.shape
    y = torch.empty(M + 1, N, dtype=x.dtype, device=x.device)
    column_prefix_and_total_kernel[(N,)](x, y, M, N, BLOCK=16)
    return y
