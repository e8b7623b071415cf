"""Rows of a table gathered by ids, each scaled by its token's weight (an embedding lookup weighted per
token, as a mixture's routed tokens are): out[i] = table[ids[i]] * scale[i]."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scaled_embedding_kernel(ids_ptr, table_ptr, scale_ptr, out_ptr, n, dim, TOKENS: tl.constexpr, D: tl.constexpr):
    toks = tl.program_id(0) * TOKENS + tl.arange(0, TOKENS)
    cols = tl.arange(0, D)
    keep = toks < n
    ids = tl.load(ids_ptr + toks, mask=keep, other=0)
    s = tl.load(scale_ptr + toks, mask=keep, other=0.0)
    inside = keep[:, None] & (cols < dim)[None, :]
    rows = tl.load(table_ptr + ids[:, None] * dim + cols[None, :], mask=inside, other=0.0)
    tl.store(out_ptr + toks[:, None] * dim + cols[None, :], rows * s[:, None], mask=inside)


def scaled_embedding(ids: torch.Tensor, table: torch.Tensor, scale: torch.Tensor, tokens: int = 16) -> torch.Tensor:
    n, dim = ids.numel(), table.shape[-1]
    out = torch.empty(n, dim, device=table.device, dtype=table.dtype)
    grid = (triton.cdiv(n, tokens),)
    scaled_embedding_kernel[grid](ids, table, scale, out, n, dim, TOKENS=tokens, D=triton.next_power_of_2(dim))
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    torch.manual_seed(0)
    table = torch.randn(64, 24, device=device)
    ids = torch.randint(0, 64, (n,), device=device)
    scale = torch.rand(n, device=device)
    got = scaled_embedding(ids, table, scale)
    assert torch.allclose(got, table[ids] * scale[:, None]), "rows differ"
    print(f"checksum {float(got.sum()):.4f}")
