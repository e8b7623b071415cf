"""Fused softmax, the second Triton tutorial: one row per loop trip, rows spread over programs.

Source: triton-lang/triton, python/tutorials/02-fused-softmax.py
License: MIT (Copyright 2018-2020 Philippe Tillet, Copyright 2020-2022 OpenAI)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: the launch is the plain `kernel[grid](...)` form (the tutorial pre-compiles with
`warmup` and sizes the grid from occupancy); the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # The stride represents how much we need to increase the pointer to advance 1 row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def softmax(x, num_programs):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 2
    y = torch.empty_like(x)
    softmax_kernel[(num_programs, 1, 1)](
        y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, num_stages, num_warps=num_warps,
    )
    return y


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    rows, cols = (256, 781) if SMALL else (16384, 4096)
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=DEVICE)
    programs = 32 if SMALL else 132 * 4
    for _ in range(3):
        y_triton = softmax(x, programs)
    torch.testing.assert_close(y_triton, torch.softmax(x, axis=1))
    print("fused softmax OK")
