"""The fix for naive_transpose.py: transpose a tile in the program, then write rows of the output.

    python examples/memory_access/tiled_transpose.py [--m M] [--n N] [--repeat R]

A clean kernel: a BLOCK x BLOCK tile is read along input rows and, after tl.trans, written
along output rows, so both the loads and the stores are contiguous.
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix


@triton.jit
def tiled_transpose_kernel(x_ptr, y_ptr, m, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    tile = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask)
    # Output row c holds input column c: write the transposed tile along output rows.
    tl.store(y_ptr + cols[:, None] * m + rows[None, :], tl.trans(tile), mask=tl.trans(mask))


def tiled_transpose(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    m, n = x.shape
    y = torch.empty((n, m), device=x.device, dtype=x.dtype)
    tiled_transpose_kernel[(triton.cdiv(m, block), triton.cdiv(n, block))](x, y, m, n, BLOCK=block)
    return y


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        y = tiled_transpose(x)
    check_equal("tiled_transpose", y, x.T)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
