"""A kernel with outputs of three depths: `y` and `acc` are element-wise (each element one value of x, `acc`
through an atomic add into zeros), `total` sums every element. The validators' test of how many terms an
output's tolerance may allow for. Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, acc_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2, mask=mask)
    tl.atomic_add(acc_ptr + offs, x * 2, mask=mask)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


def scale(x: torch.Tensor, block: int = 4096):
    y = torch.empty_like(x)
    acc = torch.zeros_like(x)
    total = torch.zeros(1, device=x.device, dtype=x.dtype)
    scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, acc, total, x.numel(), BLOCK=block)
    return y, acc, total


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
    dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float32
    torch.manual_seed(0)
    x = torch.randn(n, device=device).to(dtype)
    y, acc, total = scale(x)
    print(f"checksum {float(y.sum() + acc.sum() + total.sum()):.4f}")


if __name__ == "__main__":
    main()
