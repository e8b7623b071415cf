"""Bincount: every element atomically increments its bin, the bin index loaded from memory and
the bin count the histogram buffer's length. Token ids of text are skewed, so a few bins take
most increments, from every program. Launched at module level, black-formatted.

Source: vllm-project/vllm, csrc/bincount.cu (`bincount_kernel`, itself adapted from
rusty1s/pytorch_bincount), ported to Triton for this corpus: one element per lane,
`atomicAdd(out + src[i], 1)` becomes `tl.atomic_add(out_ptr + b, 1, mask=mask)`.
License: Apache-2.0
Labels: atomicContention=yes memoryAccess=no bankConflict=no overlap=no
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def bincount_kernel(
    src_ptr,
    out_ptr,
    numel,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    b = tl.load(src_ptr + offs, mask=mask, other=0)
    tl.atomic_add(out_ptr + b, 1, mask=mask)


DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
numel, bins = (1 << 16, 64) if SMALL else (1 << 25, 512)
weights = 1.0 / torch.arange(1, bins + 1, dtype=torch.float64)
src = torch.multinomial(weights, numel, replacement=True).to(torch.int32).to(DEVICE)
for _ in range(3):
    out = torch.zeros(bins, dtype=torch.int32, device=DEVICE)
    bincount_kernel[(triton.cdiv(numel, 1024),)](
        src,
        out,
        numel,
        BLOCK=1024,
    )
assert torch.equal(out.cpu(), torch.bincount(src.long().cpu(), minlength=bins).to(torch.int32))
print("bincount OK")
