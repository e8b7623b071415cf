"""x @ w in float16 through tl.dot, accumulated in float32: a linear layer whose weight has channels on scales of
their own (one output channel a thousand times smaller than the rest, as trained layers have)."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def channel_matmul_kernel(x_ptr, w_ptr, out_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in range(0, k, BK):
        ks = start + tl.arange(0, BK)
        x = tl.load(x_ptr + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
        w = tl.load(w_ptr + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
        acc += tl.dot(x, w)
    keep = (rows[:, None] < m) & (cols[None, :] < n)
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], acc.to(out_ptr.dtype.element_ty), mask=keep)


def channel_matmul(x: torch.Tensor, w: torch.Tensor, block_k: int = 16) -> torch.Tensor:
    (m, k), n = x.shape, w.shape[1]
    out = torch.empty(m, n, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
    channel_matmul_kernel[grid](x, w, out, m, n, k, BM=32, BN=32, BK=block_k)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    torch.manual_seed(0)
    x = torch.randn(m, 64, device=device).half()
    w = torch.randn(64, 48, device=device)
    w[:, 5] *= 1e-3  # a channel the training left small
    got = channel_matmul(x, w.half())
    print(f"checksum {float(got.float().abs().sum()):.4f}")
