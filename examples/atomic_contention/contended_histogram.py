"""A 16-bin histogram where every lane atomically increments its bin in global memory.

    python examples/atomic_contention/contended_histogram.py [--n N] [--bins B] [--repeat R]

With few bins, about BLOCK/B lanes of each atomic call hit the same bin: contention.
The fix is privatized_histogram.py.
"""

import argparse

import torch
import triton
import triton.language as tl
from _device import default_size, pick_device


@triton.jit
def contended_histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bins = tl.minimum((x * NUM_BINS).to(tl.int32), NUM_BINS - 1)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)  # many lanes share each of the few bins


def contended_histogram(x: torch.Tensor, bins: int, block: int = 1024) -> torch.Tensor:
    hist = torch.zeros(bins, device=x.device, dtype=torch.int32)
    contended_histogram_kernel[(triton.cdiv(x.numel(), block),)](x, hist, x.numel(), NUM_BINS=bins, BLOCK=block)
    return hist


def reference_histogram(x: torch.Tensor, bins: int) -> torch.Tensor:
    idx = (x.double() * bins).long().clamp(max=bins - 1)
    return torch.bincount(idx, minlength=bins).to(torch.int32)


def main() -> None:
    device = pick_device()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=default_size(device))
    parser.add_argument("--bins", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.rand(args.n, device=device)
    for _ in range(args.repeat):
        got = contended_histogram(x, args.bins)
    torch.testing.assert_close(got, reference_histogram(x, args.bins), rtol=0, atol=0)
    print(f"contended_histogram on {device}: n={args.n} bins={args.bins} OK")


if __name__ == "__main__":
    main()
