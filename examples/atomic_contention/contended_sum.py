"""Sum of a vector where every lane atomically adds into one cell: heavy atomic contention.

    python examples/atomic_contention/contended_sum.py [--n N] [--repeat R]

Runs on a GPU, or on the CPU under TRITON_INTERPRET=1. The fix is `reduced_sum.py`.
"""

import torch
import triton
import triton.language as tl
from _harness import check_sum, example_input


@triton.jit
def contended_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    zeros = tl.zeros([BLOCK], dtype=tl.int32)
    tl.atomic_add(out_ptr + zeros, x, mask=mask)  # every lane hits out[0]


def contended_sum(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    contended_sum_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


def main() -> None:
    args, x = example_input(__doc__)
    for _ in range(args.repeat):
        got = contended_sum(x)
    check_sum("contended_sum", got, x)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=yes memoryAccess=no bankConflict=no overlap=no
