"""Per-block sums and their total: each program stores its block's sum and adds it into the total with an
atomic. The validators' test of races the interpreter cannot show. Runs on a GPU, or on the CPU under
TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def block_sums_kernel(x_ptr, partial_ptr, total_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(partial_ptr + pid, s)
    tl.atomic_add(total_ptr, s)


def block_sums(x: torch.Tensor, block: int = 256):
    programs = triton.cdiv(x.numel(), block)
    partial = torch.empty(programs, device=x.device, dtype=torch.float32)
    total = torch.zeros(1, device=x.device, dtype=torch.float32)
    block_sums_kernel[(programs,)](x, partial, total, x.numel(), BLOCK=block)
    return partial, total


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    torch.manual_seed(0)
    partial, total = block_sums(torch.randn(n, device=device))
    print(f"checksum {float(partial.sum() + total.sum()):.4f}")


if __name__ == "__main__":
    main()
