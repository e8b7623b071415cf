"""The attention kernel of attention.py with its key/value loop pipelined over three stages: the fix.

    python examples/overlap/attention_pipelined.py [--batch B] [--heads H] [--seq S] [--repeat R]

Identical to attention.py but for num_stages=3 at the launch: the loads of later key/value
blocks are in flight while the current block is multiplied and softmaxed.
"""

import torch
import triton
import triton.language as tl
from _harness import attention_inputs, check_attention


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, stride_bh, stride_s,
                     HEAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1) * stride_bh
    rm = start_m + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + base + rm[:, None] * stride_s + rd[None, :], mask=rm[:, None] < seq, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.float32)
    for start_n in range(0, seq, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + rn[None, :] * stride_s + rd[:, None], mask=rn[None, :] < seq, other=0.0)
        v = tl.load(v_ptr + base + rn[:, None] * stride_s + rd[None, :], mask=rn[:, None] < seq, other=0.0)
        s = tl.dot(q, k) * scale
        s = tl.where(rn[None, :] < seq, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * stride_s + rd[None, :], out.to(tl.float16), mask=rm[:, None] < seq)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    batch, heads, seq, head = q.shape
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 128), batch * heads)
    attention_kernel[grid](q, k, v, out, seq, head ** -0.5, q.stride(1), q.stride(2),
                           HEAD=head, BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3)
    return out


def main() -> None:
    args, q, k, v = attention_inputs(__doc__)
    for _ in range(args.repeat):
        out = attention(q, k, v)
    check_attention("attention_pipelined", out, q, k, v)


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
