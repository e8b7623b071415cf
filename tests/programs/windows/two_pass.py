"""A sum in two launches: the first stores one partial sum per program, the second (a launch of its own,
so every partial is written before it starts) adds them up. The validators' test that an honest
per-program partial buffer is no race. Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def partial_sums_kernel(x_ptr, partial_ptr, out_ptr, n, parts, BLOCK: tl.constexpr, PARTS: tl.constexpr,
                        FINAL: tl.constexpr):  # fmt: skip
    if not FINAL:  # the first launch: one partial sum per program
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    else:  # the second: one program adds the partials up, all of them written before it started
        i = tl.arange(0, PARTS)
        tl.store(out_ptr, tl.sum(tl.load(partial_ptr + i, mask=i < parts, other=0.0), axis=0))


def total(x: torch.Tensor, block: int = 256):
    parts = triton.cdiv(x.numel(), block)
    partial = torch.empty(parts, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    PARTS = triton.next_power_of_2(parts)
    partial_sums_kernel[(parts,)](x, partial, out, x.numel(), parts, BLOCK=block, PARTS=PARTS, FINAL=False)
    partial_sums_kernel[(1,)](x, partial, out, x.numel(), parts, BLOCK=block, PARTS=PARTS, FINAL=True)
    return partial, out


def main() -> None:
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    torch.manual_seed(0)
    partial, out = total(torch.randn(n, device=device))
    print(f"checksum {float(partial.sum() + out.sum()):.4f}")


if __name__ == "__main__":
    main()
