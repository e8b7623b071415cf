"""Matrix-vector product (FlagGems via TritonBench): autotuned over 48 configs, a loop with loads\nand no dot.

Source: thunlp/TritonBench, data/TritonBench_G_v1/matrix_vector_multip.py (commit 603e28a)
License: Apache-2.0
Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
Changes: the test function after the separator is replaced by a short driver (CPU sizes
under TRITON_INTERPRET=1); the kernel and its wrapper are as published, except that a CUDA
device guard or check is skipped on the CPU.
"""

import contextlib
import os

import logging

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w)
        for m in [32, 64, 128]
        for n in [1, 2, 4, 8]
        for s in [3, 4]
        for w in [4, 8]
    ],
    key=["M", "N"],
)
@triton.jit
def mv_kernel(
    A,
    B,
    C,
    N,
    M,
    stride_an,
    stride_am,
    stride_bm,
    stride_cn,
    BLOCK_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    pid = tl.program_id(0)
    offset_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)[:, None]
    offset_m = tl.arange(0, BLOCK_M)[None, :]
    n_mask = offset_n < N
    A_ptrs = A + offset_n * stride_an + offset_m * stride_am
    B_ptrs = B + offset_m * stride_bm
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for m in range(0, M, BLOCK_M):
        m_mask = m + offset_m < M
        a = tl.load(A_ptrs, mask=n_mask & m_mask, other=0.0).to(tl.float32)
        b = tl.load(B_ptrs, mask=m_mask, other=0.0).to(tl.float32)
        acc += a * b
        A_ptrs += BLOCK_M * stride_am
        B_ptrs += BLOCK_M * stride_bm

    acc = tl.sum(acc, axis=1)
    C_ptrs = C + offset_n * stride_cn
    tl.store(C_ptrs, acc[:, None], mask=n_mask)


def mv(inp, vec):
    logging.debug("GEMS MV")
    assert inp.shape[1] == vec.shape[0], "incompatible dimensions"
    N, M = inp.shape
    out = torch.empty((N,), device=inp.device, dtype=inp.dtype)
    grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]),)
    with torch.cuda.device(inp.device) if inp.is_cuda else contextlib.nullcontext():
        mv_kernel[grid](
            inp,
            vec,
            out,
            N,
            M,
            inp.stride(0),
            inp.stride(1),
            vec.stride(0),
            out.stride(0),
        )
    return out





if __name__ == "__main__":
    DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    SMALL = DEVICE == "cpu" or os.environ.get("CORPUS_SMALL") == "1"  # the CPU sizes
    N, M = (64, 96) if SMALL else (16384, 4096)
    inp = torch.randn(N, M, device=DEVICE)
    vec = torch.randn(M, device=DEVICE)
    for _ in range(3):
        out = mv(inp, vec)
    torch.testing.assert_close(out, inp @ vec, atol=1e-3, rtol=1e-3)
    print("mv OK")
