"""fp32 GEMM whose tile comes from the program id in row-major order, written as one tuple
assignment with the program id and the tile count inline."""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tm, tn = tl.program_id(axis=0) // tl.cdiv(N, BN), tl.program_id(axis=0) % tl.cdiv(N, BN)
    rm = tm * BM + tl.arange(0, BM)
    rn = tn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * sam + (k0 + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))
        b = tl.load(B + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N))
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def gemm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    BM, BN, BK = 16, 16, 16
    gemm_kernel[(triton.cdiv(M, BM) * triton.cdiv(N, BN),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BM, BN, BK
    )
    return c


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=72)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--k", type=int, default=24)
    args = parser.parse_args()
    torch.manual_seed(0)
    a, b = torch.randn(args.m, args.k), torch.randn(args.k, args.n)
    torch.testing.assert_close(gemm(a, b), a @ b)
    print("gemm OK")


if __name__ == "__main__":
    main()
