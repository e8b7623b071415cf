"""Layer-norm forward written in one block per row: the mean, then the variance around it (two
levels of row reductions), the row statistics stored as scalars. Runs on a GPU, or on the CPU under
TRITON_INTERPRET=1."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, mean_ptr, rstd_ptr, row_stride, N, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid * row_stride
    offs = tl.arange(0, BLOCK)
    in_row = (offs < N) & (offs >= 0)
    x = tl.load(x_row + offs, mask=in_row, other=0.0)
    mean = tl.sum(x, axis=0) / N
    centred = tl.where(in_row, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + pid, mean)
    tl.store(rstd_ptr + pid, rstd)
    w = tl.load(w_ptr + offs, mask=in_row, other=1.0)
    b = tl.load(b_ptr + offs, mask=in_row, other=0.0)
    tl.store(out_ptr + pid * row_stride + offs, centred * rstd * w + b, mask=in_row)


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float = 1e-5):
    rows, cols = x.shape
    out = torch.empty_like(x)
    mean = torch.empty(rows, device=x.device, dtype=torch.float32)
    rstd = torch.empty(rows, device=x.device, dtype=torch.float32)
    layer_norm_kernel[(rows,)](x, w, b, out, mean, rstd, x.stride(0), cols, eps, BLOCK=triton.next_power_of_2(cols))
    return out, mean, rstd


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (4, 5000)
    x = torch.randn(rows, cols, device=device)
    out, mean, rstd = layer_norm(x, torch.randn(cols, device=device), torch.randn(cols, device=device))
    print(f"checksum {float(out.sum() + mean.sum() + rstd.sum()):.4f}")


if __name__ == "__main__":
    main()
