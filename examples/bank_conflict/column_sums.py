"""Column sums with a cross-warp reduction in every iteration: shared-memory bank conflicts.

    python examples/bank_conflict/column_sums.py [--m M] [--n N] [--repeat R]

Each program owns 64 columns and walks down the rows in 64 x 64 tiles, summing each tile
along axis 0 as it goes. Axis 0 is spread over the program's warps, so every tl.sum goes
through shared memory, and in a pattern where lanes collide on banks: on the H100, 82 % of
the shared-memory wavefronts are bank conflicts (ncu). The fix, column_sums_once.py, adds the
tiles up element-wise and reduces across warps once, after the loop.
"""

import torch
import triton
import triton.language as tl
from _harness import check_close, example_matrix


@triton.jit
def column_sums_kernel(x_ptr, out_ptr, m, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    total = tl.zeros((BLOCK_N,), tl.float32)
    for start in range(0, m, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        tile = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=(rows[:, None] < m) & (cols[None, :] < n))
        total += tl.sum(tile, axis=0)
    tl.store(out_ptr + cols, total, mask=cols < n)


def column_sums(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty(n, device=x.device, dtype=x.dtype)
    column_sums_kernel[(triton.cdiv(n, block),)](x, out, m, n, BLOCK_M=block, BLOCK_N=block)
    return out


def main() -> None:
    args, x = example_matrix(__doc__)
    for _ in range(args.repeat):
        out = column_sums(x)
    check_close("column_sums", out, x.double().sum(0))


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=yes overlap=no
