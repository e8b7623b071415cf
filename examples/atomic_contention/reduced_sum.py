"""The fix for contended_sum.py: each program reduces its block, then adds once.

    python examples/atomic_contention/reduced_sum.py [--n N] [--repeat R]

A clean kernel: one atomic per program, so atomicContention must not flag it.
"""

import torch
import triton
import triton.language as tl
from _harness import check_sum, example_input


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
    args, x = example_input(__doc__)
    for _ in range(args.repeat):
        got = reduced_sum(x)
    check_sum("reduced_sum", got, x)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
