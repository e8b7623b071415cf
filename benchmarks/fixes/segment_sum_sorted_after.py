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
def segment_sum_kernel(x_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    segment = tl.program_id(0)
    start = tl.load(offsets_ptr + segment)
    end = tl.load(offsets_ptr + segment + 1)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for first in range(start, end, BLOCK):
        offs = first + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + offs, mask=offs < end, other=0.0)
    tl.store(out_ptr + segment, tl.sum(total))


def segment_sum(x: torch.Tensor, seg: torch.Tensor, segments: int, block: int = 1024) -> torch.Tensor:
    # sorted ids: segment s covers [offsets[s], offsets[s + 1])
    offsets = torch.searchsorted(seg, torch.arange(segments + 1, device=seg.device, dtype=seg.dtype))
    out = torch.empty(segments, device=x.device, dtype=torch.float32)
    segment_sum_kernel[(segments,)](x, offsets, out, BLOCK=64)
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
