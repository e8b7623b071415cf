"""A clean kernel for bankConflict: row sums, reduced along the axis a warp already holds.

    python examples/bank_conflict/row_sums.py [--m M] [--n N] [--repeat R]

Each program owns 64 rows and walks along them in 64 x 64 tiles, summing each tile along
axis 1, the contiguous one. The lanes that share a row sit in one warp, so the reduction is
done with shuffles and never touches shared memory.
"""

import torch
import triton
import triton.language as tl
from _harness import check_close, example_matrix


@triton.jit
def row_sums_kernel(x_ptr, out_ptr, m, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    total = tl.zeros((BLOCK_M,), tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        tile = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=(rows[:, None] < m) & (cols[None, :] < n))
        total += tl.sum(tile, axis=1)
    tl.store(out_ptr + rows, total, mask=rows < m)


def row_sums(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty(m, device=x.device, dtype=x.dtype)
    row_sums_kernel[(triton.cdiv(m, block),)](x, out, m, n, BLOCK_M=block, BLOCK_N=block)
    return out


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        out = row_sums(x)
    check_close("row_sums", out, x.double().sum(1))


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
