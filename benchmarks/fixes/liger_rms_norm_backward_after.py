"""RMSNorm backward from Liger-Kernel (Unsloth-derived): dX written into dY, dW reduced over rows.

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/rms_norm.py (commit e1e9d2e31a6543e902c0986a4e49cad39ef8887a)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation); the kernel incorporates Unsloth code under Apache-2.0
Fix: e1e9d2e31a6543e902c0986a4e49cad39ef8887a (#255) replaces one program per row, each writing its full dW row into an (n_rows, n_cols) buffer that torch.sum then re-reads, by a persistent grid of one program per SM that loops over its rows and accumulates dW in fp32 registers, storing only an (sm_count, n_cols) partial buffer; the n_rows x n_cols dW write and re-read disappear.
Bottleneck: memoryAccess
Changes: only the backward kernel and its launcher rms_norm_backward are kept (RSTD comes from torch in main); the after launcher reads sm_count from torch.cuda only on a CUDA device and uses 1 otherwise (published: always torch.cuda); calculate_settings and torch_to_triton_dtype are copied from liger_kernel/ops/utils.py; as published the launcher writes dX into dY in place, so main passes a fresh copy of dY to each call; the driver is new.
"""

import argparse
import math

import torch
import triton
import triton.language as tl


_CASTING_MODE_NONE = tl.constexpr(-1)
_CASTING_MODE_LLAMA = tl.constexpr(0)
_CASTING_MODE_GEMMA = tl.constexpr(1)


def calculate_settings(n):
    # reference: https://github.com/unslothai/unsloth/blob/fd753fed99ed5f10ef8a9b7139588d9de9ddecfb/unsloth/kernels/utils.py#L43

    MAX_FUSED_SIZE = 65536
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds "
            f"the recommended Triton blocksize = {MAX_FUSED_SIZE}."
        )

    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


torch_to_triton_dtype = {
    torch.float32: tl.float32,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
}


@triton.jit
def _rms_norm_backward_kernel(
    dY_ptr,
    dY_row_stride,
    X_ptr,
    X_row_stride,
    X_dtype: tl.constexpr,
    W_ptr,
    W_row_stride,
    RSTD_ptr,
    RSTD_row_stride,
    dW_ptr,
    dW_row_stride,
    n_rows,
    n_cols,
    offset,
    rows_per_program: tl.constexpr,
    casting_mode: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    """
    dx = (1 / RMS) * [dy * (w + offset - (1 / N) * (1 / RMS^2) * ((dy * (w + offset)) dot x) * x]. * means element-wise multiplication, whileas dot means dot product
    dw = sum(dy * (x / RMS)). summation over BxT dimension
    """

    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    row_end = min((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)

    dY_ptr += row_start * dY_row_stride
    X_ptr += row_start * X_row_stride
    RSTD_ptr += row_start

    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0)
    W_row = W_row + offset

    for _ in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + col_offsets, mask=mask, other=0.0)
        X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0.0)

        # Get cached rms
        rstd_row = tl.load(RSTD_ptr)

        X_row = X_row.to(tl.float32)

        # Different bacward graphs for different casting modes
        if casting_mode == _CASTING_MODE_LLAMA:
            m = (dY_row * W_row).to(tl.float32)

        elif casting_mode == _CASTING_MODE_GEMMA:
            dY_row = dY_row.to(tl.float32)
            m = dY_row * W_row
        else:
            m = dY_row * W_row

        dX_row = rstd_row * m

        dX_row += (rstd_row) * (
            -(1 / n_cols) * rstd_row * rstd_row * tl.sum(m * X_row, axis=0) * X_row
        )

        # calculate the gradient of W
        if casting_mode == _CASTING_MODE_LLAMA:
            dW_row += dY_row * (X_row * rstd_row).to(X_dtype)
        else:
            # here X_row is already in fp32 (see previous if block)
            dW_row += dY_row * (X_row * rstd_row)

        tl.store(dY_ptr + col_offsets, dX_row.to(X_dtype), mask=mask)

        dY_ptr += dY_row_stride
        X_ptr += X_row_stride
        RSTD_ptr += RSTD_row_stride

    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


def rms_norm_backward(dY, X, W, RSTD, offset, casting_mode, BLOCK_SIZE, num_warps):
    shape = dY.shape
    dim = shape[-1]
    dY = dY.view(-1, dim)
    n_rows, n_cols = dY.shape

    sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count if X.device.type == "cuda" else 1
    # fp32 for numerical stability especially.
    _dW = torch.empty((sm_count, n_cols), dtype=torch.float32, device=W.device)

    if n_cols > BLOCK_SIZE:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    rows_per_program = math.ceil(n_rows / sm_count)
    grid = (sm_count,)
    # Here we use dY to store the value of dX to save memory
    _rms_norm_backward_kernel[grid](
        dY,
        dY.stride(0),
        X,
        X.stride(0),
        torch_to_triton_dtype[X.dtype],
        W,
        W.stride(0),
        RSTD,
        RSTD.stride(0),
        _dW,
        _dW.stride(0),
        n_rows,
        n_cols,
        offset,
        rows_per_program,
        casting_mode,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )
    dX = dY.view(*shape)
    dW = _dW.sum(dim=0).to(W.dtype)
    return dX, dW


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2048 if on_gpu else 64)
    parser.add_argument("--cols", type=int, default=8192 if on_gpu else 256)
    args = parser.parse_args()
    torch.manual_seed(0)
    eps, offset = 1e-6, 0.0
    X = torch.randn(args.rows, args.cols, device=device)
    W = torch.randn(args.cols, device=device)
    dY = torch.randn(args.rows, args.cols, device=device)
    RSTD = torch.rsqrt(X.pow(2).mean(dim=1) + eps)
    BLOCK_SIZE, num_warps = calculate_settings(args.cols)
    for _ in range(3):
        dX, dW = rms_norm_backward(dY.clone(), X, W, RSTD, offset, _CASTING_MODE_LLAMA.value, BLOCK_SIZE, num_warps)
    Xr, Wr = X.clone().requires_grad_(True), W.clone().requires_grad_(True)
    (Xr * torch.rsqrt(Xr.pow(2).mean(dim=1, keepdim=True) + eps) * (offset + Wr)).backward(dY)
    torch.testing.assert_close(dX, Xr.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dW, Wr.grad, atol=1e-2, rtol=1e-4)
    print(f"liger rms_norm backward OK rows={args.rows} cols={args.cols}")


if __name__ == "__main__":
    main()
