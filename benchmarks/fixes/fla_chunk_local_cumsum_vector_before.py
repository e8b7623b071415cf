"""Chunk-local cumulative sum of vector gates from flash-linear-attention (used by GLA/KDA chunk kernels).

Source: fla-org/flash-linear-attention, fla/ops/utils/cumsum.py (commit 1c403c3a82896ca0dd2ef8a952a85e3bdbffc941)
License: MIT (Copyright (c) 2023-2025 Songlin Yang)
Fix: 9406930fb3fb18adc1411ef0e78e7b3975e97556 ("[ops] optimize local chunk vector cumsum") computes each [BT, BS] tile's prefix sum with tl.cumsum along the time axis instead of multiplying by a BT x BT lower-triangular ones matrix with an fp32 tl.dot(allow_tf32=False) (BT*BT*BS full-precision FMAs for a scan that needs BT*BS adds).
Bottleneck: other
Changes: only chunk_local_cumsum_vector_kernel and its launcher chunk_local_cumsum_vector are kept; prepare_lens/prepare_chunk_indices are copied from fla/ops/utils/index.py without their @tensor_cache decorator; BS_LIST takes the value it has on GPUs with large shared memory (H100) and autotune_cache_kwargs is empty (no FLA cache); under TRITON_INTERPRET=1 the autotuner keeps its first config (the interpreter cannot time configs); the kernel's tl.make_block_ptr loads/stores (block pointers are removed in current Triton) are written, identically in both versions, as pointer tensors with a (T, S) bounds mask in place of boundary_check; the driver is new.
"""

import argparse
import os

import torch
import triton
import triton.language as tl


BS_LIST = [32, 64]
autotune_cache_kwargs = {}


def prepare_lens(cu_seqlens: torch.LongTensor) -> torch.LongTensor:
    return cu_seqlens[1:] - cu_seqlens[:-1]


def prepare_chunk_indices(
    cu_seqlens: torch.LongTensor,
    chunk_size: int,
) -> torch.LongTensor:
    indices = torch.cat([torch.arange(n) for n in triton.cdiv(prepare_lens(cu_seqlens), chunk_size).tolist()])
    return torch.stack([indices.eq(0).cumsum(0) - 1, indices], 1).to(cu_seqlens)


@triton.heuristics({
    'HAS_SCALE': lambda args: args['scale'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.autotune(
    configs=[
        triton.Config({'BS': BS}, num_warps=num_warps)
        for BS in BS_LIST
        for num_warps in [2, 4, 8]
    ],
    key=['B', 'H', 'S', 'BT', 'IS_VARLEN', 'REVERSE'],
    **autotune_cache_kwargs,
)
@triton.jit(do_not_specialize=['T'])
def chunk_local_cumsum_vector_kernel(
    s,
    o,
    scale,
    cu_seqlens,
    chunk_indices,
    T,
    B: tl.constexpr,
    H: tl.constexpr,
    S: tl.constexpr,
    BT: tl.constexpr,
    BS: tl.constexpr,
    REVERSE: tl.constexpr,
    HAS_SCALE: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    HEAD_FIRST: tl.constexpr,
):
    i_s, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T

    o_i = tl.arange(0, BT)
    if REVERSE:
        m_s = tl.where(o_i[:, None] <= o_i[None, :], 1., 0.)
    else:
        m_s = tl.where(o_i[:, None] >= o_i[None, :], 1., 0.)

    o_t = i_t * BT + tl.arange(0, BT)
    o_s = i_s * BS + tl.arange(0, BS)
    m_ts = (o_t[:, None] < T) & (o_s[None, :] < S)
    if HEAD_FIRST:
        p_s = s + (bos * H + i_h*T)*S + o_t[:, None] * S + o_s[None, :]
        p_o = o + (bos * H + i_h*T)*S + o_t[:, None] * S + o_s[None, :]
    else:
        p_s = s + (bos * H + i_h) * S + o_t[:, None] * (H*S) + o_s[None, :]
        p_o = o + (bos * H + i_h) * S + o_t[:, None] * (H*S) + o_s[None, :]
    # [BT, BS]
    b_s = tl.load(p_s, mask=m_ts, other=0).to(tl.float32)
    b_o = tl.dot(m_s, b_s, allow_tf32=False)
    if HAS_SCALE:
        b_o *= scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=m_ts)


if os.environ.get("TRITON_INTERPRET") == "1":
    # the interpreter cannot time configs: keep the first one
    chunk_local_cumsum_vector_kernel.fn.configs = chunk_local_cumsum_vector_kernel.fn.configs[:1]


def chunk_local_cumsum_vector(
    g: torch.Tensor,
    chunk_size: int,
    reverse: bool = False,
    scale: float = None,
    cu_seqlens: torch.Tensor | None = None,
    head_first: bool = False,
    output_dtype: torch.dtype | None = torch.float,
) -> torch.Tensor:
    if head_first:
        B, H, T, S = g.shape
    else:
        B, T, H, S = g.shape
    BT = chunk_size
    chunk_indices = prepare_chunk_indices(cu_seqlens, chunk_size) if cu_seqlens is not None else None
    NT = triton.cdiv(T, BT) if cu_seqlens is None else len(chunk_indices)
    assert chunk_size == 2**(chunk_size.bit_length()-1), "chunk_size must be a power of 2"

    g_org, g = g, torch.empty_like(g, dtype=output_dtype or g.dtype)
    def grid(meta): return (triton.cdiv(meta['S'], meta['BS']), NT, B * H)
    # keep cummulative normalizer in fp32
    # this kernel is equivalent to
    # g = g.view(B, H, NT, BT, -1).cumsum(-2).view(B, H, T, -1)
    chunk_local_cumsum_vector_kernel[grid](
        s=g_org,
        o=g,
        scale=scale,
        cu_seqlens=cu_seqlens,
        chunk_indices=chunk_indices,
        T=T,
        B=B,
        H=H,
        S=S,
        BT=BT,
        HEAD_FIRST=head_first,
        REVERSE=reverse,
    )
    return g


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8 if on_gpu else 1)
    parser.add_argument("--seq-len", type=int, default=4096 if on_gpu else 128)
    parser.add_argument("--heads", type=int, default=16 if on_gpu else 2)
    parser.add_argument("--dim", type=int, default=128 if on_gpu else 64)
    parser.add_argument("--chunk-size", type=int, default=64)
    args = parser.parse_args()
    torch.manual_seed(0)
    B, T, H, S, BT = args.batch, args.seq_len, args.heads, args.dim, args.chunk_size
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, S, device=device))
    for _ in range(3):
        out = chunk_local_cumsum_vector(g, chunk_size=BT)
    ref = g.view(B, T // BT, BT, H, S).cumsum(2).view(B, T, H, S)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)
    print(f"fla chunk_local_cumsum_vector OK B={B} T={T} H={H} S={S} BT={BT}")


if __name__ == "__main__":
    main()
