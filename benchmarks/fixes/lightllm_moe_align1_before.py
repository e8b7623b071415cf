"""MoE token alignment (moe_align1) from LightLLM: per expert, compact the 0/1 token mask into token indices and weights.

Source: ModelTC/lightllm, lightllm/common/fused_moe/grouped_fused_moe.py (commit b8cfd70c600f0a7015c91643385ef8610b6e231a)
License: Apache-2.0 (Copyright 2023 ModelTC Team, 2023 vLLM Team)
Fix: 743ddc3c3ca9ecaf95d135898fca11913866a135 (#718) stops loading each expert's whole mask row as one next_power_of_2(token_num*topk)-wide block (65536 lanes at 8192 tokens x topk 6: far more live values than registers, so it spills) and instead walks the row in 256/512/2048-wide tiles, carrying the running count across tiles; 10x faster at 8192 tokens.
Bottleneck: registerPressure
Changes: only moe_align1_kernel and its launcher moe_align1 are kept (with FFN_MOE_CHUNK_SIZE); as published the launcher writes into caller-provided tensors and compacts experts_info in place, so main builds fresh inputs (the 0/1 mask that moe_align would write, built with torch) for each call; the driver is new.
"""

import argparse

import torch
import triton
import triton.language as tl


FFN_MOE_CHUNK_SIZE = 8 * 1024


@triton.jit
def moe_align1_kernel(
    experts_info_ptr,  # [expert_num, token_num * topk_num]
    experts_info_stride0,
    experts_info_stride1,
    experts_info_m,
    experts_info_n,
    topk_weights,  # [token_num * topk_num,]
    expert_token_num_ptr,
    experts_topk_weight,  # [expert_num, token_num * topk_num]
    experts_topk_weight_stride0,
    experts_topk_weight_stride1,
    TOKEN_BLOCK_N: tl.constexpr,
):

    expert_id = tl.program_id(axis=0)
    n_range = tl.arange(0, TOKEN_BLOCK_N)

    topk_weights_data = tl.load(topk_weights + n_range, mask=n_range < experts_info_n, other=0)
    expert_data = tl.load(
        experts_info_ptr + expert_id * experts_info_stride0 + n_range, mask=n_range < experts_info_n, other=0
    )
    cumsum_expert_data = tl.cumsum(expert_data)

    tl.store(expert_token_num_ptr + expert_id, tl.max(cumsum_expert_data))
    tl.store(
        experts_info_ptr + expert_id * experts_info_stride0 + cumsum_expert_data - 1,
        n_range,
        mask=(expert_data == 1) & (n_range < experts_info_n),
    )
    tl.store(
        experts_topk_weight + expert_id * experts_topk_weight_stride0 + cumsum_expert_data - 1,
        topk_weights_data,
        mask=(expert_data == 1) & (n_range < experts_info_n),
    )


def moe_align1(
    experts_info: torch.Tensor,
    topk_weights: torch.Tensor,
    experts_weight_info: torch.Tensor,
    exports_token_num: torch.Tensor,
    topk: int,
):
    """
    experts_info is tensor shape [expert_num, token_num * topk],
    topk_weights is tensor shape [token_num, topk]
    experts_weight_info is tensor shape [expert_num, token_num * topk]
    exports_token_num is out tensor, will get expert need handle token num.

    experts_info will change inplace.
    demo:
    topids = [[0, 1], [1, 3]]
    topk_weights = [[0.3, 0.7], [0.2, 0.8]]
    expert_num = 4, token_num = 2, topk = 2
    experts_info = [
        [1, 0, 0, 0],
        [0, 1, 1, 0],
        [0, 0, 0, 1],
        [0, 0, 0, 0]
    ]
    will get:
    experts_info = [
        [0, x, x, x],  # mark x， data will not be used future
        [1, 2, x, x],
        [3, x, x, x],
        [x, x, x, x]
    ]
    experts_weight_info = [
        [0.3,  x, x, x],
        [0.7, 0.2, x, x],
        [0.8, x, x, x],
        [x,  x,  x,  x]
    ]

    exports_token_num = [1, 2, 1, 0]
    """
    expert_num, token_num_mul_topk = experts_info.shape
    topk_num = topk_weights.shape[1]
    assert token_num_mul_topk <= FFN_MOE_CHUNK_SIZE * topk_num, "need split to handle seq len too long"
    assert exports_token_num.shape[0] == expert_num
    assert topk_weights.is_contiguous()
    TOKEN_BLOCK_N = triton.next_power_of_2(token_num_mul_topk)
    grid = (expert_num,)
    moe_align1_kernel[grid](
        experts_info,
        experts_info.stride(0),
        experts_info.stride(1),
        expert_num,
        token_num_mul_topk,
        topk_weights,
        exports_token_num,
        experts_weight_info,
        experts_weight_info.stride(0),
        experts_weight_info.stride(1),
        TOKEN_BLOCK_N=TOKEN_BLOCK_N,
        num_warps=8,
        num_stages=1,
    )


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=8192 if on_gpu else 320)
    parser.add_argument("--experts", type=int, default=160 if on_gpu else 16)
    parser.add_argument("--topk", type=int, default=6 if on_gpu else 2)
    args = parser.parse_args()
    torch.manual_seed(0)
    logits = torch.randn(args.tokens, args.experts, device=device)
    _, topk_ids = torch.topk(logits, args.topk, dim=1)
    mask = torch.zeros((args.experts, args.tokens * args.topk), dtype=torch.int32, device=device)
    mask[topk_ids.reshape(-1), torch.arange(args.tokens * args.topk, device=device)] = 1
    topk_weights = torch.randn((args.tokens, args.topk), dtype=torch.float32, device=device)
    for _ in range(3):
        experts_info = mask.clone()
        experts_weights = torch.zeros(mask.shape, dtype=torch.float32, device=device)
        experts_token_num = torch.zeros((args.experts,), dtype=torch.int32, device=device)
        moe_align1(experts_info, topk_weights, experts_weights, experts_token_num, args.topk)
    counts = mask.sum(dim=1).to(torch.int32)
    torch.testing.assert_close(experts_token_num, counts)
    flat_w = topk_weights.reshape(-1)
    for e in range(args.experts):
        idx = torch.nonzero(mask[e]).flatten().to(torch.int32)
        n = idx.numel()
        torch.testing.assert_close(experts_info[e, :n], idx)
        torch.testing.assert_close(experts_weights[e, :n], flat_w[idx.long()])
    print(f"lightllm moe_align1 OK tokens={args.tokens} experts={args.experts} topk={args.topk}")


if __name__ == "__main__":
    main()
