"""RoPE embedding forward from Unsloth: rotates Q in place, one program per (token row, head).

Source: unslothai/unsloth, unsloth/kernels/rope_embedding.py (commit 990c7a809c5f6793522d264fd97708b33992ffc7)
License: Apache-2.0 (Copyright 2023-present Daniel Han-Chen & the Unsloth team)
Fix: e29a630cd38ca4cafe3848c5d5f3780c6365d01e (#238, "10% faster RoPE embedding") sizes BLOCK_SIZE to head_dim//2 (the published before used next_power_of_2(head_dim), so half of every program's lanes were masked off) and lets each program rotate a group of 4 heads of one token, loading that token's cos/sin once for all of them.
Bottleneck: laneUtilization
Changes: the launcher rope_embedding_forward is the body of Fast_RoPE_Embedding.forward (a torch.autograd.Function staticmethod) moved to module level, without its ctx assignments; in the after kernel tl.math.min (gone from current Triton) is written tl.minimum; calculate_settings is copied from unsloth/kernels/utils.py; as published the kernel rotates Q in place, so main passes a fresh copy of Q to each call; the driver is new.
"""

import argparse

import torch
import triton
import triton.language as tl


MAX_FUSED_SIZE = 65536
next_power_of_2 = triton.next_power_of_2


def calculate_settings(n):
    BLOCK_SIZE = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds "\
                           f"the maximum CUDA blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if   BLOCK_SIZE >= 32768: num_warps = 32
    elif BLOCK_SIZE >=  8192: num_warps = 16
    elif BLOCK_SIZE >=  2048: num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.heuristics({"BACKWARD_PASS": lambda args: args["BACKWARD_PASS"],})
@triton.jit
def _rope_embedding(
    Q,     Q_row_stride,
    cos, cos_row_stride,
    sin, sin_row_stride,
    seqlen, head_dim,
    BACKWARD_PASS: tl.constexpr,
    BLOCK_SIZE : tl.constexpr,
):
    """
        Calculates the RoPE Embedding quickly
        RoPE is Q * cos + rotate_half(Q) * sin
        See our blog post for more info
    """
    row_position  = tl.program_id(0)
    head_position = tl.program_id(1)
    col_offsets  = tl.arange(0, BLOCK_SIZE)
    half_head_dim = head_dim // 2
    mask = col_offsets < half_head_dim

    sin1 = tl.load(sin + (row_position % seqlen)*sin_row_stride + \
                   half_head_dim*0 + col_offsets, mask = mask, other = 0)
    cos1 = tl.load(cos + (row_position % seqlen)*cos_row_stride + \
                   half_head_dim*0 + col_offsets, mask = mask, other = 0)

    # For Gemma - sometimes RoPE must be done in float32 and not bfloat16
    Q1   = tl.load(Q + row_position*Q_row_stride + head_position*head_dim + \
                   half_head_dim*0 + col_offsets, mask = mask, other = 0).to(sin1.dtype)
    Q2   = tl.load(Q + row_position*Q_row_stride + head_position*head_dim + \
                   half_head_dim*1 + col_offsets, mask = mask, other = 0).to(sin1.dtype)

    if BACKWARD_PASS:
        # See our blog post for more info.
        sin1 = -sin1
    pass

    tl.store(Q + row_position*Q_row_stride + head_position*head_dim + \
             half_head_dim*0 + col_offsets,
             Q1*cos1 - Q2*sin1, mask = mask)
    tl.store(Q + row_position*Q_row_stride + head_position*head_dim + \
             half_head_dim*1 + col_offsets,
             Q2*cos1 + Q1*sin1, mask = mask)


def rope_embedding_forward(Q, cos, sin):
    cos, sin = cos.squeeze(), sin.squeeze()
    batch, seq_len, n_heads, head_dim = Q.shape
    Q = Q.view(batch*seq_len, n_heads*head_dim)
    n_rows, n_cols = Q.shape
    assert(seq_len <= cos.shape[0])

    # [TODO] Changing blocksize to head_dim//2 seems to have
    # some concurrency / un-deterministic issues.
    BLOCK_SIZE, num_warps = calculate_settings(head_dim) # (head_dim//2)
    _rope_embedding[(n_rows, n_heads,)](
          Q,   Q.stride(0),
        cos, cos.stride(0),
        sin, sin.stride(0),
        seq_len, head_dim,
        BACKWARD_PASS = False,
        BLOCK_SIZE = BLOCK_SIZE,
        num_warps  = num_warps,
    )
    return Q.view(batch, seq_len, n_heads, head_dim)


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=4 if on_gpu else 1)
    parser.add_argument("--seq-len", type=int, default=4096 if on_gpu else 16)
    parser.add_argument("--heads", type=int, default=32 if on_gpu else 8)
    parser.add_argument("--head-dim", type=int, default=128 if on_gpu else 64)
    args = parser.parse_args()
    torch.manual_seed(0)
    Q = torch.randn(args.batch, args.seq_len, args.heads, args.head_dim, device=device)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, args.head_dim, 2, device=device).float() / args.head_dim))
    freqs = torch.outer(torch.arange(args.seq_len, device=device).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    for _ in range(3):
        out = rope_embedding_forward(Q.clone(), cos, sin)
    half = args.head_dim // 2
    rotated = torch.cat((-Q[..., half:], Q[..., :half]), dim=-1)
    ref = Q * cos[None, :, None, :] + rotated * sin[None, :, None, :]
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    print(f"unsloth rope forward OK batch={args.batch} seq_len={args.seq_len} heads={args.heads} head_dim={args.head_dim}")


if __name__ == "__main__":
    main()
