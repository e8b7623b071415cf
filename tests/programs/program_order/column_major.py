"""fp16 GEMM whose tile comes from the program id in column-major order: the column tile is the
slow index (`pid // tiles_m`), the row tile the remainder written as `pid - tile_n * tiles_m`."""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def gemm_colmajor_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = (M + BLOCK_M - 1) // BLOCK_M
    tile_n = pid // tiles_m
    tile_m = pid - tile_n * tiles_m
    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def gemm_colmajor(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
    strides = a.stride(0), b.stride(0), c.stride(0)
    gemm_colmajor_kernel[grid](a, b, c, M, N, K, *strides, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return c


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=40)
    parser.add_argument("--n", type=int, default=150)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.randn(args.m, args.k, dtype=torch.float16)
    b = torch.randn(args.k, args.n, dtype=torch.float16)
    torch.testing.assert_close(gemm_colmajor(a, b).float(), a.float() @ b.float(), atol=1e-2, rtol=1e-2)
    print("column-major gemm OK")


if __name__ == "__main__":
    main()
