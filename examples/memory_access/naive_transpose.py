"""Transpose a matrix row by row: reads are contiguous, writes are a whole column apart.

    python examples/memory_access/naive_transpose.py [--m M] [--n N] [--repeat R]

Each program reads a stretch of one input row and writes it down one output column (stride M
floats): the stores are uncoalesced. The fix is tiled_transpose.py.
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix


@triton.jit
def naive_transpose_kernel(x_ptr, y_ptr, m, n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask)
    tl.store(y_ptr + cols * m + row, x, mask=mask)  # lanes walk down an output column: stride m


def naive_transpose(x: torch.Tensor, block_n: int = 256) -> torch.Tensor:
    m, n = x.shape
    y = torch.empty((n, m), device=x.device, dtype=x.dtype)
    naive_transpose_kernel[(m, triton.cdiv(n, block_n))](x, y, m, n, BLOCK_N=block_n)
    return y


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        y = naive_transpose(x)
    check_equal("naive_transpose", y, x.T)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=yes bankConflict=no overlap=no
