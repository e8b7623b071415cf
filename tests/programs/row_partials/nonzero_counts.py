"""Count the nonzeros of each column and of each row: one program per row; the column counts are
int32 cells every program adds to (contended between programs), the row totals one cell per row."""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def nonzero_counts_kernel(
    x_ptr,
    col_counts,
    row_counts,
    n_cols,
    stride_row,
    BLOCK_COLS: tl.constexpr,
):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK_COLS)
    inside = c < n_cols
    values = tl.load(x_ptr + r * stride_row + c, inside, other=0)
    nonzero = (values != 0).to(tl.int32)
    # per row: its own cell, no contention
    tl.atomic_add(row_counts + r, tl.sum(nonzero, axis=0))
    # per column: every program adds here
    tl.atomic_add(col_counts + c, nonzero, inside)


def nonzero_counts(x):
    cols = torch.zeros(x.shape[1], dtype=torch.int32, device=x.device)
    rows = torch.zeros(x.shape[0], dtype=torch.int32, device=x.device)
    nonzero_counts_kernel[(x.shape[0],)](
        x, cols, rows, x.shape[1], x.stride(0), BLOCK_COLS=triton.next_power_of_2(x.shape[1])
    )
    return cols, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=45)
    parser.add_argument("--cols", type=int, default=30)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randint(-1, 2, (args.rows, args.cols), dtype=torch.int32)
    cols, rows = nonzero_counts(x)
    assert torch.equal(cols, (x != 0).sum(0).to(torch.int32)) and torch.equal(rows, (x != 0).sum(1).to(torch.int32))
    print("nonzero counts OK")


if __name__ == "__main__":
    main()
