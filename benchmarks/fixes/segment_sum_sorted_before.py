"""Segment sum over sorted segment ids (a graph network's neighbour aggregation, a mixture of experts' combine step): one atomic add per element into its segment's cell.

Source: written for intelliperf (its recipe test, tests/unit/rewriters/test_recipes.py, uses the before-version); no public upstream
License: MIT (intelliperf)
Fix: expert fix (no upstream commit): with sorted ids each segment is a contiguous range, so the launcher finds the ranges (torch.searchsorted) and one program per segment sums its range with plain loads and stores its cell once: a gather instead of an atomic scatter.
Bottleneck: atomicContention
Changes: none (the program is this repository's own).
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def segment_sum_kernel(x_ptr, seg_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + seg, x, mask=mask)  # runs of lanes add into the same cell


def segment_sum(x: torch.Tensor, seg: torch.Tensor, segments: int, block: int = 1024) -> torch.Tensor:
    out = torch.zeros(segments, device=x.device, dtype=torch.float32)
    segment_sum_kernel[(triton.cdiv(x.numel(), block),)](x, seg, out, x.numel(), BLOCK=block)
    return out


def main() -> None:
    on_gpu = torch.cuda.is_available()
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1 << 24 if on_gpu else 5000)
    parser.add_argument("--run", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    device = "cuda" if on_gpu else "cpu"
    generator = torch.Generator().manual_seed(0)
    segments = max(1, args.n // args.run)
    seg = torch.sort(torch.randint(0, segments, (args.n,), generator=generator))[0].to(device)
    x = torch.randn(args.n, generator=generator).to(device)
    for _ in range(args.repeat):
        got = segment_sum(x, seg, segments)
    want = torch.zeros(segments, device=device).index_add_(0, seg, x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    print(f"segment sum OK n={args.n} segments={segments}")


if __name__ == "__main__":
    main()
