"""Log-softmax and softmax of each row written in one pass over a whole-row block, plus the row's
range (max - min) as a scalar: nested row reductions in one expression and three outputs. Runs on a
GPU, or on the CPU under TRITON_INTERPRET=1."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def log_softmax_outputs_kernel(
    logits, log_probs, probs, spread, n_classes, stride, BLOCK: tl.constexpr
):
    i = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    z = tl.load(logits + i * stride + c, mask=c < n_classes, other=float("-inf")).to(tl.float32)
    lse = tl.log(tl.sum(tl.exp(z - tl.max(z, 0)), 0)) + tl.max(z, 0)
    tl.store(log_probs + i * stride + c, z - lse, mask=c < n_classes)
    tl.store(probs + i * stride + c, tl.exp(z - lse), mask=c < n_classes)
    finite = tl.where(c < n_classes, z, 0.0)
    tl.store(spread + i, tl.max(finite, axis=0) - tl.min(tl.where(c < n_classes, z, float("inf")), axis=0))


def log_softmax_outputs(x: torch.Tensor):
    rows, cols = x.shape
    log_p, p = torch.empty_like(x), torch.empty_like(x)
    spread = torch.empty(rows, device=x.device, dtype=torch.float32)
    log_softmax_outputs_kernel[(rows,)](x, log_p, p, spread, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
    return log_p, p, spread


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (4, 5000)
    log_p, p, spread = log_softmax_outputs(torch.randn(rows, cols, device=device))
    print(f"checksum {float(log_p.sum() + p.sum() + spread.sum()):.4f}")


if __name__ == "__main__":
    main()
