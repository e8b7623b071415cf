"""The fix for column_copy.py: one row block per program, lanes along a row.

    python examples/memory_access/row_copy.py [--m M] [--n N] [--repeat R]

A clean kernel: consecutive lanes read consecutive floats, every sector fully used.
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, m, n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask)
    tl.store(y_ptr + row * n + cols, x, mask=mask)


def row_copy(x: torch.Tensor, block_n: int = 256) -> torch.Tensor:
    y = torch.empty_like(x)
    m, n = x.shape
    row_copy_kernel[(m, triton.cdiv(n, block_n))](x, y, m, n, BLOCK_N=block_n)
    return y


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        y = row_copy(x)
    check_equal("row_copy", y, x)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
