"""Per-head RMS norm of Q (tokens, heads, head_dim), one program per (token, head).

The launcher sizes the block from 2 * head_dim by mistake, so half of every program's lanes are
masked off. Each program also stores its head's reciprocal RMS (a per-row scalar result).
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def head_rms_norm_kernel(q_ptr, w_ptr, out_ptr, rstd_ptr, n_heads, head_dim, token_stride, eps, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    head = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    mask = cols < head_dim
    base = token * token_stride + head * head_dim
    q = tl.load(q_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rstd = tl.rsqrt(tl.sum(q * q, axis=0) / head_dim + eps)
    tl.store(out_ptr + base + cols, (q * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + token * n_heads + head, rstd)


def head_rms_norm(q, w, eps=1e-6):
    tokens, n_heads, head_dim = q.shape
    out = torch.empty_like(q)
    rstd = torch.empty(tokens, n_heads, device=q.device, dtype=torch.float32)
    BLOCK = triton.next_power_of_2(2 * head_dim)
    head_rms_norm_kernel[(tokens, n_heads)](q, w, out, rstd, n_heads, head_dim, q.stride(0), eps, BLOCK=BLOCK)
    return out, rstd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=3)
    parser.add_argument("--heads", type=int, default=5)
    parser.add_argument("--head-dim", type=int, default=48)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    q = torch.randn(args.tokens, args.heads, args.head_dim, device=device)
    w = torch.randn(args.head_dim, device=device)
    out, rstd = head_rms_norm(q, w)
    ref_rstd = torch.rsqrt(q.pow(2).mean(-1) + 1e-6)
    torch.testing.assert_close(rstd, ref_rstd)
    torch.testing.assert_close(out, q * ref_rstd[..., None] * w)
    print("head rms norm OK")


if __name__ == "__main__":
    main()
