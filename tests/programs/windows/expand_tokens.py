"""Each request's id repeated over its tokens (speculative decoding's per-token request ids): request r owns
tokens cu[r-1]..cu[r] of an int64 output allocated empty. Where the cumulative counts end before the output
does, the rest is never written (the program's own counts always cover it)."""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def expand_tokens_kernel(out_ptr, ids_ptr, cu_ptr, MAX_TOKENS: tl.constexpr):
    r = tl.program_id(0)
    start = 0
    if r > 0:
        start = tl.load(cu_ptr + r - 1).to(tl.int32)
    count = tl.load(cu_ptr + r).to(tl.int32) - start
    offs = tl.arange(0, MAX_TOKENS)
    tl.store(out_ptr + start + offs, tl.load(ids_ptr + r), mask=offs < count)


def expand_tokens(ids: torch.Tensor, cu: torch.Tensor, num_tokens: int) -> torch.Tensor:
    out = ids.new_empty(num_tokens)
    expand_tokens_kernel[(ids.shape[0],)](out, ids, cu, MAX_TOKENS=16)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    torch.manual_seed(0)
    counts = torch.randint(1, 9, (24,), device=device)
    cu = counts.cumsum(0)
    ids = torch.randint(0, 50_000, (24,), device=device, dtype=torch.int64)
    got = expand_tokens(ids, cu, int(cu[-1]))
    assert torch.equal(got, ids.repeat_interleave(counts)), "expanded ids differ"
    print(f"tokens {got.numel()} checksum {int(got.sum())}")
