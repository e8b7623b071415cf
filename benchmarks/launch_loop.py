"""Launch one kernel many times and print how long the loop took (JSON on the last line).

python benchmarks/launch_loop.py --launches 10000 --n 1024
"""

import argparse
import json
import os
import time

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=10000)
    parser.add_argument("--n", type=int, default=1024)
    args = parser.parse_args()
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    src = torch.rand(args.n, device=device)
    dst = torch.empty_like(src)
    grid = (triton.cdiv(args.n, 1024),)
    copy_kernel[grid](src, dst, args.n, BLOCK=1024)  # compile outside the timed loop
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.launches):
        copy_kernel[grid](src, dst, args.n, BLOCK=1024)
    if device == "cuda":
        torch.cuda.synchronize()
    loop_s = time.perf_counter() - start
    assert torch.equal(src, dst)
    print(json.dumps({"launches": args.launches, "n": args.n, "loop_s": loop_s}))


if __name__ == "__main__":
    main()
