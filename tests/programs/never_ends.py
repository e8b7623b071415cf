"""A program that never ends: one small kernel launched in a loop until it is stopped."""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def forever_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(x_ptr + offs * 0, tl.load(x_ptr + offs, mask=mask), mask=mask)


x = torch.ones(256, device=DEVICE)
while True:
    forever_kernel[(2,)](x, x.numel(), BLOCK=128)
