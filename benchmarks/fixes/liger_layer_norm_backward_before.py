"""LayerNorm backward from Liger-Kernel: dX per row, dW/dB summed over all rows.

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/layer_norm.py (commit 397ab301bb5f3237b703c9f08cf987241ddc9460)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Fix: 540575bc2bbaa94b7d96b7616cd6c009eeffacb1 (#945) replaces the per-row tl.atomic_add of dW/dB into one shared (n_cols,) buffer by a persistent grid of one program per SM, each accumulating its rows' dW/dB in registers and storing one partial row, summed on the host; thousands of programs no longer serialise on atomics to the same addresses.
Bottleneck: atomicContention
Changes: only the backward kernel and its launcher layer_norm_backward are kept (the forward statistics Mean/RSTD come from torch in main); calculate_settings is copied from liger_kernel/ops/utils.py with the ROCm branch (is_hip) dropped; the driver is new.
"""

import argparse
import math

import torch
import triton
import triton.language as tl


def calculate_settings(n):
    # reference: https://github.com/unslothai/unsloth/blob/fd753fed99ed5f10ef8a9b7139588d9de9ddecfb/unsloth/kernels/utils.py#L43

    MAX_FUSED_SIZE = 65536
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize = {MAX_FUSED_SIZE}."
        )

    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def _layer_norm_backward_kernel(
    X_ptr,  # pointer to input, shape (n_rows, n_cols)
    W_ptr,  # pointer to weights, shape (n_cols,)
    Mean_ptr,  # pointer to mean, shape (n_rows,)
    RSTD_ptr,  # pointer to rstd, shape (n_rows,)
    DX_ptr,  # pointer to input grad, shape (n_rows, n_cols)
    DW_ptr,  # pointer to weights grad, shape (n_cols,)
    DB_ptr,  # pointer to bias grad, shape (n_cols,)
    DY_ptr,  # pointer to output grad, shape (n_rows, n_cols)
    stride_x,  # stride of each row in input
    stride_dx,  # stride of each row in input grad
    stride_dy,  # stride of each row in output grad
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    dtype: tl.constexpr,
    atomic_dtype: tl.constexpr,
):
    """
    References:
    https://arxiv.org/abs/1607.06450
    https://github.com/karpathy/llm.c/blob/master/doc/layernorm/layernorm.md
    """
    row_idx = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols

    # Pre-load weights once (same optimization as forward pass)
    w = tl.load(W_ptr + cols, mask=mask, other=0.0)
    w_f32 = w.to(tl.float32)

    # Calculate pointers for this specific row
    row_X_ptr = X_ptr + row_idx * stride_x
    row_DX_ptr = DX_ptr + row_idx * stride_dx
    row_DY_ptr = DY_ptr + row_idx * stride_dy
    row_Mean_ptr = Mean_ptr + row_idx
    row_RSTD_ptr = RSTD_ptr + row_idx

    # Load data for this row
    x = tl.load(row_X_ptr + cols, mask=mask, other=0.0)
    dy = tl.load(row_DY_ptr + cols, mask=mask, other=0.0)
    mean = tl.load(row_Mean_ptr)
    rstd = tl.load(row_RSTD_ptr)

    # Convert to fp32 for numerical stability
    x_f32 = x.to(tl.float32)
    dy_f32 = dy.to(tl.float32)
    mean_f32 = mean.to(tl.float32)
    rstd_f32 = rstd.to(tl.float32)

    # Compute backward pass for this row
    x_hat = (x_f32 - mean_f32) * rstd_f32
    wdy = w_f32 * dy_f32
    c1 = tl.sum(x_hat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (x_hat * c1 + c2)) * rstd_f32

    # Store input gradient
    tl.store(row_DX_ptr + cols, dx.to(dtype), mask=mask)

    # Accumulate weight and bias gradients using atomic operations
    dw = dy_f32 * x_hat
    db = dy_f32
    tl.atomic_add(DW_ptr + cols, dw.to(atomic_dtype), mask=mask)
    tl.atomic_add(DB_ptr + cols, db.to(atomic_dtype), mask=mask)


def layer_norm_backward(dY, X, W, B, Mean, RSTD):
    """
    Args:
        dY: Gradient of output
        X: Input tensor
        W: Weight tensor
        B: Bias tensor
        Mean: Pre-computed mean
        RSTD: Pre-computed reciprocal standard deviation

    Returns:
        Tuple of (input_grad, weight_grad, bias_grad)
    """
    shape = dY.shape
    dim = shape[-1]
    dY = dY.view(-1, dim)
    n_rows, n_cols = dY.shape

    # Allocate gradient tensors
    DX = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    # Use float32 for weight/bias gradients if bfloat16 (due to atomic_add limitation)
    grad_dtype = torch.float32 if W.dtype == torch.bfloat16 else W.dtype
    DW = torch.zeros(n_cols, dtype=grad_dtype, device=W.device)
    DB = torch.zeros(n_cols, dtype=grad_dtype, device=W.device)

    # Calculate optimal block size and warp configuration
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    if n_cols > BLOCK_SIZE:
        raise RuntimeError(f"Feature dimension {n_cols} exceeds maximum supported size of {BLOCK_SIZE}.")

    # Determine dtype for triton operations
    triton_dtype = (
        tl.float32
        if X.dtype == torch.float32
        else tl.bfloat16
        if X.dtype == torch.bfloat16
        else tl.float16
        if X.dtype == torch.float16
        else tl.float32  # fallback
    )

    # Use float32 for atomic operations if bfloat16 is not supported
    atomic_dtype = tl.float32 if triton_dtype == tl.bfloat16 else triton_dtype

    kernel_args = {"num_warps": num_warps}
    # XPU-specific optimization
    if X.device.type == "xpu":
        kernel_args.update({"grf_mode": "large", "num_warps": 32, "num_stages": 4})

    # Launch kernel with one thread block per row for optimal performance
    grid = (n_rows,)
    _layer_norm_backward_kernel[grid](
        X,
        W,
        Mean,
        RSTD,
        DX,
        DW,
        DB,
        dY,
        X.stride(0),
        DX.stride(0),
        dY.stride(0),
        n_cols,
        BLOCK_SIZE=BLOCK_SIZE,
        dtype=triton_dtype,
        atomic_dtype=atomic_dtype,
        **kernel_args,
    )

    DX = DX.view(*shape)
    return DX, DW.to(W.dtype), DB.to(W.dtype)


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4096 if on_gpu else 64)
    parser.add_argument("--cols", type=int, default=8192 if on_gpu else 256)
    args = parser.parse_args()
    torch.manual_seed(0)
    eps = 1e-6
    X = torch.randn(args.rows, args.cols, device=device)
    W = torch.randn(args.cols, device=device)
    B = torch.randn(args.cols, device=device)
    dY = torch.randn(args.rows, args.cols, device=device)
    Mean = X.mean(dim=1)
    RSTD = torch.rsqrt(X.var(dim=1, unbiased=False) + eps)
    for _ in range(3):
        DX, DW, DB = layer_norm_backward(dY, X, W, B, Mean, RSTD)
    Xr, Wr, Br = (t.clone().requires_grad_(True) for t in (X, W, B))
    torch.nn.functional.layer_norm(Xr, (args.cols,), Wr, Br, eps).backward(dY)
    torch.testing.assert_close(DX, Xr.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(DW, Wr.grad, atol=1e-2, rtol=1e-4)
    torch.testing.assert_close(DB, Br.grad, atol=1e-2, rtol=1e-4)
    print(f"liger layer_norm backward OK rows={args.rows} cols={args.cols}")


if __name__ == "__main__":
    main()
