"""x times a sparse weight w (a pruned layer's mask and scales), element by element."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def masked_product_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * w, mask=mask)


def masked_product(x: torch.Tensor, w: torch.Tensor, block: int = 256) -> torch.Tensor:
    out = torch.empty_like(x)
    masked_product_kernel[(triton.cdiv(x.numel(), block),)](x, w, out, x.numel(), BLOCK=block)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    torch.manual_seed(0)
    x = torch.randn(n, device=device)
    w = torch.rand(n, device=device) * (torch.rand(n, device=device) < 0.5)  # half the weights pruned to zero
    got = masked_product(x, w)
    assert torch.equal(got, x * w), "product differs"
    print(f"checksum {float(got.sum()):.4f}")
