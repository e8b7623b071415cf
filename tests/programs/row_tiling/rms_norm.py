"""RMS-norm forward, one row per program with the whole row in one block (the registerPressure
recipe tile-row-loop's subject). Runs on a GPU, or on the CPU under TRITON_INTERPRET=1."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(X, W, Y, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    """y = x / sqrt(mean(x^2) + eps) * w, one row per program."""
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    # the row, in float32
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(W + cols, mask=mask)
    tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    rms_norm_kernel[(rows,)](x, w, y, x.stride(0), cols, eps, BLOCK_SIZE=triton.next_power_of_2(cols))
    return y


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (4, 5000)
    x = torch.randn(rows, cols, device=device, dtype=torch.float16)
    w = torch.randn(cols, device=device, dtype=torch.float16)
    print(f"checksum {float(rms_norm(x, w).float().sum()):.4f}")


if __name__ == "__main__":
    main()
