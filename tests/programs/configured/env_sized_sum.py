"""A contended sum sized the way real programs often are: by an environment variable, and by a
config file in the user's home folder that overrides it.

    SUM_N=40000 python env_sized_sum.py
"""

import json
import os
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def env_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + tl.zeros([BLOCK], dtype=tl.int32), x, mask=mask)


def env_sum(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    env_sum_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


def size() -> int:
    config = Path.home() / ".config" / "env_sized_sum.json"
    if config.exists():
        return json.loads(config.read_text())["n"]
    return int(os.environ.get("SUM_N", "4096"))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"
    torch.manual_seed(0)
    x = torch.rand(size(), device=device)
    got = env_sum(x)
    torch.testing.assert_close(got.double()[0], x.double().sum(), rtol=1e-4, atol=1e-3)
    print(f"n={x.numel()} OK")
