"""Rows of x scaled by w, on a device that faults where the launcher meets a non-finite value (it turns values
into addresses: on a GPU an illegal address, after which every call in the process fails, as a lost CUDA
context does; on the CPU the launcher raises that error itself and keeps failing)."""

import os

import torch
import triton
import triton.language as tl

_LOST = []  # (the device's context, once lost, stays lost)


@triton.jit
def faulting_scale_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    w = tl.load(w_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * w, mask=offs < n)


def faulting_scale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if _LOST or not bool(torch.isfinite(x).all()):
        _LOST.append(True)
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    out = torch.empty_like(x)
    n = x.numel()
    faulting_scale_kernel[(triton.cdiv(n, 256),)](x, w, out, n, BLOCK=256)
    return out


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    torch.manual_seed(0)
    x, w = torch.randn(3000, device=device), torch.rand(3000, device=device)
    assert torch.allclose(faulting_scale(x, w), x * w), "scaled rows differ"
    print("ok")
