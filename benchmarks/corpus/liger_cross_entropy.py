"""Cross-entropy forward from Liger-Kernel: one row per program, an online softmax over the
vocabulary in BLOCK_SIZE chunks (two loops over the row, no dot).

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/cross_entropy.py (`liger_cross_entropy_kernel`)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: the forward loss only (no label smoothing, z-loss or in-place gradient); the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def liger_cross_entropy_kernel(
    X_ptr,
    X_stride,
    Y_ptr,
    Y_stride,
    loss_ptr,
    loss_stride,
    n_cols,
    ignore_index,
    BLOCK_SIZE: tl.constexpr,
):
    program_id = tl.program_id(0).to(tl.int64)

    Y_ptr += program_id * Y_stride
    y = tl.load(Y_ptr)

    X_ptr += program_id * X_stride
    loss_ptr += program_id * loss_stride

    if y == ignore_index:
        tl.store(loss_ptr, 0.0)
        return

    # Online softmax: the max and the normaliser of the row, one chunk at a time
    m = float("-inf")
    d = 0.0
    ori_X_y = tl.load(X_ptr + y).cast(tl.float32)
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=float("-inf")).cast(tl.float32)
        block_max = tl.max(X_block)
        m_new = tl.maximum(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
        m = m_new

    lse = m + tl.log(d)
    loss = lse - ori_X_y
    tl.store(loss_ptr, loss)


MAX_FUSED_SIZE = 65536 // 2


def cross_entropy_forward(_input, target, ignore_index=-100):
    BT, V = _input.shape
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))
    loss_1d = torch.zeros(BT, dtype=torch.float32, device=_input.device)
    liger_cross_entropy_kernel[(BT,)](
        X_ptr=_input,
        X_stride=_input.stride(-2),
        Y_ptr=target,
        Y_stride=target.stride(-1),
        loss_ptr=loss_1d,
        loss_stride=loss_1d.stride(-1),
        n_cols=V,
        ignore_index=ignore_index,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=32,
    )
    return loss_1d.sum() / (target != ignore_index).sum()


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    BT, V = (64, 1000) if SMALL else (8192, 32000)
    torch.manual_seed(0)
    x = torch.randn(BT, V, device=DEVICE)
    y = torch.randint(0, V, (BT,), device=DEVICE)
    for _ in range(3):
        loss = cross_entropy_forward(x, y)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(x, y), atol=1e-4, rtol=1e-4)
    print("cross entropy OK")
