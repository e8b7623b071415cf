"""Seeded dropout, the fourth Triton tutorial (module-level launch in the driver).

Source: triton-lang/triton, python/tutorials/04-low-memory-dropout.py
License: MIT (Copyright 2018-2020 Philippe Tillet, Copyright 2020-2022 OpenAI)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: the driver launches at module level, as notebooks and scripts do.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _seeded_dropout(
    x_ptr,
    output_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    # compute memory offsets of elements handled by this instance
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # load data from x
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # randomly prune it
    random = tl.rand(seed, offsets)
    x_keep = random > p
    # write-back
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
N = 65536 if SMALL else 1 << 26
x = torch.randn(N, device=DEVICE)
output = torch.empty_like(x)
for step in range(3):
    _seeded_dropout[(triton.cdiv(N, 1024),)](
        x,
        output,
        N,
        0.5,
        123,
        BLOCK_SIZE=1024,
    )
kept = output != 0
torch.testing.assert_close(output[kept], x[kept] * 2)
print("seeded dropout OK")
