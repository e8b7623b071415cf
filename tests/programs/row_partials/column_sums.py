"""Scale each row and sum the columns and the whole: one program per row, every program adds its
scaled row into the same column sums, and its row's sum into the one total, with tl.atomic_add
(contention between programs on each column and on the total)."""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(x_ptr, scale_ptr, y_ptr, colsum_ptr, total_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    offs = tl.arange(0, BLOCK)
    valid = offs < n_cols
    s = tl.load(scale_ptr + row)
    x = tl.load(x_ptr + row * stride + offs, mask=valid, other=0.0)
    y = x * s
    tl.store(y_ptr + row * stride + offs, y, mask=valid)
    tl.atomic_add(colsum_ptr + offs, y, mask=valid)
    tl.atomic_add(total_ptr, tl.sum(y, axis=0))


def scale_rows(x, scale):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    colsum = torch.zeros(n_cols, dtype=torch.float32, device=x.device)
    total = torch.zeros(1, dtype=torch.float32, device=x.device)
    grid = lambda meta: (n_rows,)  # noqa: E731
    block = triton.next_power_of_2(n_cols)
    scale_rows_kernel[grid](x, scale, y, colsum, total, n_rows, n_cols, x.stride(0), BLOCK=block)
    return y, colsum, total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=37)
    parser.add_argument("--cols", type=int, default=50)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.rows, args.cols)
    scale = torch.randn(args.rows)
    y, colsum, total = scale_rows(x, scale)
    torch.testing.assert_close(colsum, (x * scale[:, None]).sum(0))
    torch.testing.assert_close(total, (x * scale[:, None]).sum().reshape(1))
    print("column sums OK")


if __name__ == "__main__":
    main()
