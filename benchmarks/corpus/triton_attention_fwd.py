"""Flash-attention forward, the layout of the sixth Triton tutorial: the K/V loop lives in a
@triton.jit helper (`_attn_fwd_inner`) called from the kernel.

Source: triton-lang/triton, python/tutorials/06-fused-attention.py (forward pass, non-causal
stage, block pointers replaced by plain pointer arithmetic as in the tutorial's older versions)
License: MIT (Copyright 2018-2020 Philippe Tillet, Copyright 2020-2022 OpenAI)
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=yes
Changes: this program launches with num_stages=1 (the tutorial autotunes over 2-4), so the
loop's loads are not software-pipelined; the driver is short.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    K_ptrs, V_ptrs, stride_kn, stride_vn,  #
                    qk_scale, N_CTX,  #
                    BLOCK_N: tl.constexpr):
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(K_ptrs + start_n * stride_kn)
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_ptrs + start_n * stride_vn)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, Out,  #
              stride_qz, stride_qh, stride_qm, stride_qk,  #
              stride_kz, stride_kh, stride_kn, stride_kk,  #
              stride_vz, stride_vh, stride_vk, stride_vn,  #
              stride_oz, stride_oh, stride_om, stride_on,  #
              H, N_CTX,  #
              HEAD_DIM: tl.constexpr,  #
              BLOCK_M: tl.constexpr,  #
              BLOCK_N: tl.constexpr,  #
              ):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    Q_ptrs = Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    K_ptrs = K + q_offset + offs_d[:, None] * stride_kk + offs_n[None, :] * stride_kn
    V_ptrs = V + q_offset + offs_n[:, None] * stride_vk + offs_d[None, :] * stride_vn
    O_ptrs = Out + q_offset + offs_m[:, None] * stride_om + offs_d[None, :] * stride_on
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    q = tl.load(Q_ptrs)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vk,  #
                                    qk_scale, N_CTX, BLOCK_N)
    acc = acc / l_i[:, None]
    tl.store(O_ptrs, acc.to(Out.type.element_ty))


def attention(q, k, v, sm_scale):
    HEAD_DIM = q.shape[-1]
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 32
    grid = (triton.cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1], 1)
    _attn_fwd[grid](
        q, k, v, sm_scale, o,  #
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),  #
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),  #
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),  #
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),  #
        q.shape[1], q.shape[2],  #
        HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,  #
        num_warps=4, num_stages=1)
    return o


if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    Z, H, N_CTX, HEAD_DIM = (1, 2, 128, 64) if SMALL else (4, 32, 4096, 64)
    torch.manual_seed(20)
    q, k, v = (torch.randn((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16, device=DEVICE) for _ in range(3))
    sm_scale = 0.5
    for _ in range(3):
        tri_out = attention(q, k, v, sm_scale)
    ref = torch.softmax((q.float() @ k.float().transpose(2, 3)) * sm_scale, dim=-1) @ v.float()
    torch.testing.assert_close(tri_out.float(), ref, atol=2e-2, rtol=0)
    print("attention OK")
