"""One tiny kernel launched many times (recorder aggregation and overhead)."""

import os
import sys

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def tiny_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def main(launches: int) -> None:
    x = torch.zeros(64, device=DEVICE)
    for _ in range(launches):
        tiny_kernel[(1,)](x, x.numel(), BLOCK=64)
    assert float(x[0]) == launches
    print(f"many_launches: {launches} OK")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
