"""Column kernels the tile-strided-reduction recipe must decline, each with a launcher (never run)."""

import torch
import triton
import triton.language as tl


@triton.jit
def column_major_sums_kernel(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + col * n_rows + rows, mask=rows < n_rows, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def column_major_sums(x):
    out = torch.empty(x.shape[1], device=x.device)
    column_major_sums_kernel[(x.shape[1],)](x, out, x.shape[0], BLOCK=128)
    return out


@triton.jit
def seeded_sums_kernel(x_ptr, seed_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.load(seed_ptr)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0))
    tl.store(out_ptr + col, acc)


def seeded_sums(x, seed):
    out = torch.empty(x.shape[1], device=x.device)
    seeded_sums_kernel[(x.shape[1],)](x, seed, out, x.shape[0], x.shape[1], BLOCK=128)
    return out


@triton.jit
def tiled_sums_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        acc += tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cols < n_cols)


def tiled_sums(x):
    out = torch.empty(x.shape[1], device=x.device)
    grid = (triton.cdiv(x.shape[1], 32),)
    tiled_sums_kernel[grid](x, out, x.shape[0], x.shape[1], BLOCK_R=64, BLOCK_C=32)
    return out


@triton.jit
def lower_triangle_sums_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, col + 1, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows * n_cols + col, mask=rows <= col, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def lower_triangle_sums(x):
    out = torch.empty(x.shape[1], device=x.device)
    lower_triangle_sums_kernel[(x.shape[1],)](x, out, x.shape[1], BLOCK=64)
    return out


@triton.jit
def guarded_sums_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    if col >= n_cols:
        return
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def guarded_sums(x):
    out = torch.empty(x.shape[1], device=x.device)
    guarded_sums_kernel[(x.shape[1] + 1,)](x, out, x.shape[0], x.shape[1], BLOCK=64)
    return out


@triton.jit
def atomic_total_kernel(x_ptr, total_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0)
        tl.atomic_add(total_ptr + col, tl.sum(x, axis=0))


def atomic_total(x):
    total = torch.zeros(x.shape[1], device=x.device)
    atomic_total_kernel[(x.shape[1],)](x, total, x.shape[0], x.shape[1], BLOCK=64)
    return total


@triton.jit
def elementwise_scale_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows)
    tl.store(y_ptr + rows * n_cols + col, 2 * x, mask=rows < n_rows)


def elementwise_scale(x):
    y = torch.empty_like(x)
    elementwise_scale_kernel[(x.shape[1],)](x, y, x.shape[0], x.shape[1], BLOCK=triton.next_power_of_2(x.shape[0]))
    return y


@triton.jit
def row_major_sums_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def _grid_of(n_cols):
    return (n_cols,)


def sums_with_a_grid_function(x):
    out = torch.empty(x.shape[1], device=x.device)
    row_major_sums_kernel[_grid_of(x.shape[1])](x, out, x.shape[0], x.shape[1], BLOCK=128)
    return out


def sums_with_a_computed_block(x):
    out = torch.empty(x.shape[1], device=x.device)
    block = triton.next_power_of_2(x.shape[0])
    row_major_sums_kernel[(x.shape[1],)](x, out, x.shape[0], x.shape[1], block)
    return out


@triton.jit
def stacked_column_sums_kernel(x_ptr, out_ptr, n_mats, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(0, n_mats):
        acc += tl.load(x_ptr + k * n_rows * n_cols + rows * n_cols + col, mask=rows < n_rows, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def stacked_column_sums(x):
    n_mats, n_rows, n_cols = x.shape
    out = torch.empty(n_cols, device=x.device)
    block = triton.next_power_of_2(n_rows)
    stacked_column_sums_kernel[(n_cols,)](x, out, n_mats, n_rows, n_cols, BLOCK=block)
    return out
