"""A 16-bin histogram where every lane atomically increments its bin in global memory.

    python examples/atomic_contention/contended_histogram.py [--n N] [--bins B] [--repeat R]

With few bins, about BLOCK/B lanes of each atomic call hit the same bin: contention.
The fix is privatized_histogram.py.
"""

import torch
import triton
import triton.language as tl
from _harness import check_histogram, example_input


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


def main() -> None:
    args, x = example_input(__doc__, histogram=True)
    for _ in range(args.repeat):
        got = contended_histogram(x, args.bins)
    check_histogram("contended_histogram", got, x, args.bins)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=yes memoryAccess=no bankConflict=no overlap=no
