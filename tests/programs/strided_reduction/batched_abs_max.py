"""The largest magnitude down each column of a batch of matrices: a 2-D grid of (matrix, column)
programs, the address summed into a name of its own, a vector running maximum."""

import torch
import triton
import triton.language as tl


@triton.jit
def batched_abs_max_kernel(X, Y, M, N, stride_b, stride_m, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    n = tl.program_id(1)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, M, BLOCK):
        r = s + tl.arange(0, BLOCK)
        offs = b * stride_b + r * stride_m + n
        acc = tl.maximum(acc, tl.abs(tl.load(X + offs, mask=r < M, other=0.0)))
    tl.store(Y + b * N + n, tl.max(acc, 0))


def batched_abs_max(x):
    B, M, N = x.shape
    y = torch.empty(B, N, dtype=x.dtype, device=x.device)
    batched_abs_max_kernel[(B, N)](x, y, M, N, x.stride(0), x.stride(1), BLOCK=16)
    return y
