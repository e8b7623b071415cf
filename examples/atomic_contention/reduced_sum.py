"""The fix for contended_sum.py: each program reduces its block, then adds once.

    python examples/atomic_contention/reduced_sum.py [--n N] [--repeat R]

A clean kernel: one atomic per program, so atomicContention must not flag it.
"""

import argparse

import torch
import triton
import triton.language as tl
from _device import default_size, pick_device


@triton.jit
def reduced_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))  # one atomic per program


def reduced_sum(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    reduced_sum_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


def main() -> None:
    device = pick_device()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=default_size(device))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.rand(args.n, device=device)
    expected = x.double().sum()
    for _ in range(args.repeat):
        got = reduced_sum(x)
    torch.testing.assert_close(got.double()[0], expected, rtol=1e-4, atol=1e-3)
    print(f"reduced_sum on {device}: n={args.n} sum={got.item():.3f} (reference {expected.item():.3f}) OK")


if __name__ == "__main__":
    main()
