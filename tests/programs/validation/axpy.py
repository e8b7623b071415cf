"""The validators' test subject: out = alpha * x + y, launched a few times with new inputs.

It checks nothing itself, as many real programs do not: catching a wrong candidate is the
validator's job. Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float, block: int = 128) -> torch.Tensor:
    out = torch.empty_like(x)
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    return out


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    torch.manual_seed(0)
    total = 0.0
    for _ in range(4):
        x, y = torch.randn(n, device=device), torch.randn(n, device=device)
        total += float(axpy(x, y, 2.0).sum())
    print(f"checksum {total:.4f}")


if __name__ == "__main__":
    main()
