"""Rows of g added into the rows of a table that ids name (an embedding's backward): each program takes a run
of tokens, one row at a time, with atomics (ids repeat across programs)."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scatter_rows_kernel(ids_ptr, g_ptr, out_ptr, n, D: tl.constexpr, TOKENS: tl.constexpr):
    cols = tl.arange(0, D)
    for t in range(TOKENS):
        tok = tl.program_id(0) * TOKENS + t
        toks = tok + cols * 0
        keep = toks < n
        row = tl.load(ids_ptr + toks, mask=keep, other=0)
        g = tl.load(g_ptr + tok * D + cols, mask=keep, other=0.0)
        tl.atomic_add(out_ptr + row * D + cols, g, mask=keep)


def scatter_rows(ids: torch.Tensor, g: torch.Tensor, rows: int, tokens: int = 8) -> torch.Tensor:
    n, d = g.shape
    out = torch.zeros(rows, d, device=g.device, dtype=g.dtype)
    scatter_rows_kernel[(triton.cdiv(n, tokens),)](ids, g, out, n, D=d, TOKENS=tokens)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    torch.manual_seed(0)
    ids, g = torch.randint(0, 12, (n,), device=device), torch.randn(n, 16, device=device)
    got = scatter_rows(ids, g, 12)
    want = torch.zeros(12, 16, device=device).index_add_(0, ids, g)
    assert torch.allclose(got, want, atol=1e-4), "scatter differs"
    print(f"checksum {float(got.sum()):.4f}")
