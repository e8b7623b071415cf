# Vendored from https://github.com/AMD-AGI/AgentKernelArena (Apache-2.0, see LICENSE in benchmarks/suites/agentkernelarena/),
# tasks/triton2triton/vllm/triton_min_p/source/triton_min_p.py at commit d6f7c8a4f01fb0e57b6ee7a7c0af4d7c9d8a0f2b. Changes for intelliperf: none.
"""Min-p sampling kernel, adapted from vLLM min_p.py."""
import torch
import triton
import triton.language as tl


@triton.jit
def _min_p_kernel(
    logits_ptr,
    logits_stride,
    idx_mapping_ptr,
    min_p_ptr,
    vocab_size,
    BLOCK_SIZE: tl.constexpr,
):
    req_idx = tl.program_id(0)
    req_state_idx = tl.load(idx_mapping_ptr + req_idx)
    min_p = tl.load(min_p_ptr + req_state_idx).to(tl.float32)
    if min_p == 0.0:
        return

    max_val = float("-inf")
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        logits = tl.load(
            logits_ptr + req_idx * logits_stride + block, mask=mask, other=float("-inf")
        )
        max_val = tl.max(tl.maximum(logits, max_val))
    max_val = max_val.to(tl.float32)

    threshold = max_val + tl.log(min_p)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        logits = tl.load(
            logits_ptr + req_idx * logits_stride + block, mask=mask, other=float("-inf")
        )
        logits = tl.where(logits < threshold, float("-inf"), logits)
        tl.store(logits_ptr + req_idx * logits_stride + block, logits, mask=mask)


def apply_min_p(logits, idx_mapping, min_p):
    """Apply min-p filtering to logits in-place."""
    num_reqs, vocab_size = logits.shape
    BLOCK_SIZE = 1024
    _min_p_kernel[(num_reqs,)](
        logits, logits.stride(0), idx_mapping, min_p,
        vocab_size, BLOCK_SIZE=BLOCK_SIZE,
    )
