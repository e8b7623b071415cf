"""L2 norms of the rows of x, any leading dimensions flattened (a batch of tokens' hidden vectors). The rows may
be a slice of a wider tensor (`qkv[:, 128:256]`): the launcher passes the row stride, the kernel reads the
columns at unit stride."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def row_norms_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))


def row_norms(x: torch.Tensor) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty(rows.shape[0], device=x.device, dtype=torch.float32)
    grid = (rows.shape[0],)
    row_norms_kernel[grid](rows, out, rows.shape[1], rows.stride(0), BLOCK=triton.next_power_of_2(rows.shape[1]))
    return out.reshape(x.shape[:-1])


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (120, 48)
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=device)
    got = row_norms(x)
    assert torch.allclose(got, x.norm(dim=-1), rtol=1e-4), "norms differ"
    print(f"checksum {float(got.sum()):.4f}")
