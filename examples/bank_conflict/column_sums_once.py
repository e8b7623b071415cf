"""The fix for column_sums.py: add the tiles element-wise, reduce across warps once at the end.

    python examples/bank_conflict/column_sums_once.py [--m M] [--n N] [--repeat R]

The loop keeps a 64 x 64 accumulator in registers (each thread adds its own elements, no
exchange), and the one reduction along axis 0, through shared memory, happens after the loop.
Shared-memory traffic drops about 60-fold on the H100 and the kernel is clean for bankConflict.
"""

import torch
import triton
import triton.language as tl
from _harness import check_close, example_matrix


@triton.jit
def column_sums_once_kernel(x_ptr, out_ptr, m, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for start in range(0, m, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=(rows[:, None] < m) & (cols[None, :] < n))
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cols < n)


def column_sums_once(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty(n, device=x.device, dtype=x.dtype)
    column_sums_once_kernel[(triton.cdiv(n, block),)](x, out, m, n, BLOCK_M=block, BLOCK_N=block)
    return out


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        out = column_sums_once(x)
    check_close("column_sums_once", out, x.double().sum(0))


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
