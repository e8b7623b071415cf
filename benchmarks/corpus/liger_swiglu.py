"""SwiGLU forward from Liger-Kernel (one row per program).

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/swiglu.py (`_swiglu_forward_kernel`)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _swiglu_forward_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    c_ptr += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    # sigmoid requires type float32
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    c_row = silu(a_row) * b_row
    tl.store(c_ptr + col_offsets, c_row, mask=mask)


def swiglu_forward(a, b):
    ori_shape = a.shape
    n_cols = ori_shape[-1]
    a = a.view(-1, n_cols)
    b = b.view(-1, n_cols)
    c = torch.empty_like(a)
    n_rows = a.shape[0]
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_SIZE < 2048 else 8
    _swiglu_forward_kernel[(n_rows,)](
        a,
        b,
        c,
        c.stride(-2),
        n_cols=n_cols,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )
    return a, b, c.view(*ori_shape)


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    rows, cols = (256, 1024) if SMALL else (8192, 11008)
    a = torch.randn(rows, cols, device=DEVICE)
    b = torch.randn(rows, cols, device=DEVICE)
    for _ in range(3):
        _, _, c = swiglu_forward(a, b)
    torch.testing.assert_close(c, torch.nn.functional.silu(a) * b, atol=1e-4, rtol=1e-4)
    print("swiglu OK")
