"""Per-segment sums of the rows of x (a graph readout: nodes into graphs), segments named by ids in any order;
x may be a strided view; rows of segment `skip` are left out (-1: none). Each program sums a block of rows
with one atomic per row."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def segment_sums_kernel(
    x_ptr, seg_ptr, out_ptr, n, dim, skip, stride_r, stride_c, BLOCK: tl.constexpr, D: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    seg = tl.load(seg_ptr + rows, mask=rows < n, other=0)
    keep = (rows < n) & (seg != skip)
    inside = keep[:, None] & (cols < dim)[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c, mask=inside, other=0.0)
    tl.atomic_add(out_ptr + seg[:, None] * dim + cols[None, :], x, mask=inside)


def segment_sums(x: torch.Tensor, seg: torch.Tensor, num_segments: int, skip: int = -1, block: int = 64):
    n, dim = x.shape
    out = torch.zeros(num_segments, dim, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n, block),)
    stride_r, stride_c = x.stride()
    d = triton.next_power_of_2(dim)
    segment_sums_kernel[grid](x, seg, out, n, dim, skip, stride_r, stride_c, BLOCK=block, D=d)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    torch.manual_seed(0)
    x = torch.randn(n, 40, device=device)
    seg = torch.randint(0, 12, (n,), device=device).sort().values  # (nodes of a graph together, as batched)
    got = segment_sums(x, seg, 12, skip=3)
    kept = seg != 3
    want = torch.zeros(12, 40, device=device).index_add_(0, seg[kept], x[kept])
    assert torch.allclose(got, want, atol=1e-4), "segment sums differ"
    print(f"checksum {float(got.sum()):.4f}")
