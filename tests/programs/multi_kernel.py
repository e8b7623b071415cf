"""Three kernels with known launch counts and a clear ranking by time (for the recorder tests).

heavy_kernel: 1 launch over 2**18 elements (most time); add_kernel: 5 launches over 4096;
scale_kernel: 2 launches over 1024, grid given as a lambda, num_warps=2, a float scalar.
"""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def heavy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    for _ in range(4):
        x = x * 1.0001 + 0.5
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def main() -> None:
    big = torch.rand(1 << 18, device=DEVICE)
    heavy_out = torch.empty_like(big)
    heavy_kernel[(triton.cdiv(big.numel(), 1024),)](big, heavy_out, big.numel(), BLOCK=1024)

    x, y = torch.rand(4096, device=DEVICE), torch.rand(4096, device=DEVICE)
    out = torch.empty_like(x)
    for _ in range(5):
        add_kernel[(4,)](x, y, out, x.numel(), BLOCK=1024)
    torch.testing.assert_close(out, x + y)

    small = torch.rand(1024, dtype=torch.float16, device=DEVICE)
    scaled = torch.empty_like(small)
    for _ in range(2):
        # meta["n"] would be a tensor under Triton 3.6's interpreter: take the size from the host.
        scale_kernel[lambda meta: (triton.cdiv(small.numel(), meta["BLOCK"]),)](
            small, scaled, 2.5, small.numel(), BLOCK=256, num_warps=2)
    torch.testing.assert_close(scaled, small * 2.5)
    print("multi_kernel OK")


if __name__ == "__main__":
    main()
