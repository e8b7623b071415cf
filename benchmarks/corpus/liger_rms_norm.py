"""RMSNorm forward from Liger-Kernel (one row per program, the row in one block).

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/rms_norm.py (`_rms_norm_forward_kernel`, Llama casting mode)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: only the Llama casting mode is kept; the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    RSTD_ptr,
    RSTD_row_stride,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    RSTD_ptr += row_idx * RSTD_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr, rstd)

    X_row = X_row * rstd
    X_row = X_row.to(X_row_dtype)
    Y_row = X_row * (offset + W_row)
    tl.store(Y_ptr + col_offsets, Y_row, mask=mask)


def rms_norm_forward(X, W, eps, offset):
    shape = X.shape
    dim = shape[-1]
    X = X.view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_SIZE < 2048 else 8
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _rms_norm_forward_kernel[(n_rows,)](
        Y,
        Y.stride(0),
        X,
        X.stride(0),
        W,
        W.stride(0),
        RSTD,
        RSTD.stride(0),
        n_cols,
        eps,
        offset,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )
    return Y.view(*shape), RSTD


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    rows, hidden = (256, 512) if SMALL else (16384, 4096)
    x = torch.randn(rows, hidden, device=DEVICE)
    w = torch.randn(hidden, device=DEVICE)
    for _ in range(3):
        y, _ = rms_norm_forward(x, w, 1e-6, 0.0)
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)
    print("rms norm OK")
