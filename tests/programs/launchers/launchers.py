"""One kernel, launched the ways real programs launch kernels: a launcher with keyword-only and
defaulted parameters, one that forwards *args/**kwargs, and a torch.autograd.Function.

    python launchers.py keyword|varargs|autograd [N]

Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(x_ptr, out_ptr, n, alpha, beta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + beta, mask=mask)


def scale_shift(x, alpha=2.0, *, beta=0.5, block=256, out=None):
    out = torch.empty_like(x) if out is None else out
    scale_shift_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), alpha, beta, BLOCK=block)
    return out


def forwarded(x, *args, **kwargs):
    block = kwargs.get("block", 256)
    alpha = args[0] if args else 2.0
    out = torch.empty_like(x)
    scale_shift_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), alpha, kwargs.get("beta", 0.5), BLOCK=block)
    return out


class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        out = torch.empty_like(x)
        block = 256
        scale_shift_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), alpha, 0.5, BLOCK=block)
        ctx.alpha = alpha
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    style = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(n, device=device)
        if style == "keyword":
            got = scale_shift(x, 3.0, beta=0.25)
        elif style == "varargs":
            got = forwarded(x, 3.0, beta=0.25, block=128)
        else:
            got = ScaleShift.apply(x, 3.0)
        torch.testing.assert_close(got, 3.0 * x + (0.5 if style == "autograd" else 0.25))
    print(f"{style} OK")


if __name__ == "__main__":
    main()
