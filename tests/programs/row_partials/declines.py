"""Row kernels the rows-per-program recipe must decline, each with a launcher (never run)."""

import torch
import triton
import triton.language as tl


@triton.jit
def early_exit_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.atomic_add(out_ptr + offs, x, mask=offs < n_cols)


def early_exit(x):
    out = torch.zeros(x.shape[1], device=x.device)
    early_exit_kernel[(x.shape[0],)](x, out, x.shape[0], x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def row_sums_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(x, axis=0))


def row_sums(x):
    out = torch.zeros(x.shape[0], device=x.device)
    row_sums_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def persistent_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        tl.atomic_add(out_ptr + offs, x, mask=offs < n_cols)


def persistent(x):
    out = torch.zeros(x.shape[1], device=x.device)
    persistent_kernel[(4,)](x, out, x.shape[0], x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def blocked_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    first = tl.program_id(0) * 4
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(first, tl.minimum(first + 4, n_rows)):
        acc += tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.atomic_add(out_ptr + offs, acc, mask=offs < n_cols)


def blocked_rows(x):
    out = torch.zeros(x.shape[1], device=x.device)
    n_rows = x.shape[0]
    blocked_rows_kernel[(triton.cdiv(n_rows, 4),)](x, out, n_rows, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def column_max_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.atomic_max(out_ptr + offs, x, mask=offs < n_cols)


def column_max(x):
    out = torch.full((x.shape[1],), float("-inf"), device=x.device)
    column_max_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def column_sums_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.atomic_add(out_ptr + offs, x, mask=offs < n_cols)


def column_sums_padded_grid(x):
    out = torch.zeros(x.shape[1], device=x.device)
    column_sums_kernel[(x.shape[0], 1, 1)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
