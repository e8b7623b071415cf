"""Embedding backward from Liger-Kernel: every (token, column block) adds its gradient row into
the weight gradient with `tl.atomic_add`. Frequent tokens (padding, punctuation) are added by
many programs into the same rows: contention between programs, not within one call.

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/experimental/embedding.py (`embedding_backward_kernel`)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Labels: atomicContention=yes memoryAccess=no bankConflict=no overlap=no
Changes: the token ids follow a Zipf-like distribution, as text does; the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def embedding_backward_kernel(
    grad_output_ptr,
    grad_weight_ptr,
    indices_ptr,
    n_elements,
    embedding_dim: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    start_m = pid_m * BLOCK_SIZE_M
    start_n = pid_n * BLOCK_SIZE_N
    offsets_m = start_m + tl.arange(0, BLOCK_SIZE_M)
    mask_m = offsets_m < n_elements
    indices = tl.load(indices_ptr + offsets_m, mask=mask_m, other=0)
    offsets_n = start_n + tl.arange(0, BLOCK_SIZE_N)
    mask_n = offsets_n < embedding_dim

    grad_output = tl.load(
        grad_output_ptr + offsets_m[:, None] * embedding_dim + offsets_n[None, :],
        mask=mask_m[:, None] & mask_n[None, :],
        other=0.0,
    )

    grad_weight_offsets = indices[:, None] * embedding_dim + offsets_n[None, :]

    tl.atomic_add(
        grad_weight_ptr + grad_weight_offsets,
        grad_output,
        mask=mask_m[:, None] & mask_n[None, :],
    )


def embedding_backward(grad_output, indices, num_embeddings):
    embedding_dim = grad_output.shape[-1]
    grad_output = grad_output.contiguous().view(-1, embedding_dim)
    grad_weight = torch.zeros(num_embeddings, embedding_dim, device=grad_output.device, dtype=grad_output.dtype)
    indices = indices.view(-1)
    n_elements = indices.numel()
    BLOCK_SIZE_M = triton.next_power_of_2(min(128, embedding_dim))
    BLOCK_SIZE_N = BLOCK_SIZE_M
    grid = (
        triton.cdiv(n_elements, BLOCK_SIZE_M),
        triton.cdiv(embedding_dim, BLOCK_SIZE_N),
    )
    embedding_backward_kernel[grid](
        grad_output,
        grad_weight,
        indices,
        n_elements,
        embedding_dim=embedding_dim,
        BLOCK_SIZE_M=BLOCK_SIZE_M,
        BLOCK_SIZE_N=BLOCK_SIZE_N,
    )
    return grad_weight


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    tokens, vocab, dim = (2048, 1000, 64) if SMALL else (65536, 32000, 1024)
    torch.manual_seed(0)
    ranks = torch.arange(1, vocab + 1, dtype=torch.float64)
    indices = torch.multinomial(1.0 / ranks, tokens, replacement=True).to(DEVICE)
    grad = torch.randn(tokens, dim, device=DEVICE)
    for _ in range(3):
        gw = embedding_backward(grad, indices, vocab)
    ref = torch.zeros(vocab, dim, device=DEVICE).index_add_(0, indices, grad)
    torch.testing.assert_close(gw, ref, atol=1e-3, rtol=1e-4)
    print("embedding backward OK")
