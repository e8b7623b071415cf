"""Rows of 64 elements doubled, one program per row, BLOCK = 64 on the default 4 warps.

The mask keeps every element, but a program has 128 threads for its 64 elements: half of them hold
a copy of another's element and repeat its work.
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def double_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, offs < n_cols, other=0.0)
    tl.store(y_ptr + row * n_cols + offs, 2 * x, offs < n_cols)


def double_rows(x, num_warps=4):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    double_rows_kernel[(n_rows,)](x, y, n_cols, BLOCK=triton.next_power_of_2(n_cols), num_warps=num_warps)
    return y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--warps", type=int, default=4)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(args.rows, 64, device=device)
    torch.testing.assert_close(double_rows(x, args.warps), 2 * x)
    print("short rows OK")


if __name__ == "__main__":
    main()
