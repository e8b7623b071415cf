"""Copy a matrix one column per program: consecutive lanes read and write a whole row apart.

    python examples/memory_access/column_copy.py [--m M] [--n N] [--repeat R]

Each lane of a warp touches another 32-byte sector (stride N floats), so 1/8 of every sector
moved is used: uncoalesced. The fix is row_copy.py.
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix


@triton.jit
def column_copy_kernel(x_ptr, y_ptr, m, n, BLOCK_M: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = rows < m
    x = tl.load(x_ptr + rows * n + col, mask=mask)  # lanes walk down a column: stride n
    tl.store(y_ptr + rows * n + col, x, mask=mask)


def column_copy(x: torch.Tensor, block_m: int = 256) -> torch.Tensor:
    y = torch.empty_like(x)
    m, n = x.shape
    column_copy_kernel[(n, triton.cdiv(m, block_m))](x, y, m, n, BLOCK_M=block_m)
    return y


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        y = column_copy(x)
    check_equal("column_copy", y, x)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=yes bankConflict=no overlap=no
