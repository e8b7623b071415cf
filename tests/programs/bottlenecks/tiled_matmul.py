"""A tiled matmul with a 1-D grid whose program order is row-major or grouped (--order)."""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr, GROUPED: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK)
    num_pid_n = tl.cdiv(N, BLOCK)
    if GROUPED:
        group = pid // (8 * num_pid_n)
        first_m = group * 8
        size_m = tl.minimum(num_pid_m - first_m, 8)
        pid_m = first_m + (pid % (8 * num_pid_n)) % size_m
        pid_n = (pid % (8 * num_pid_n)) // size_m
    else:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K))
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N))
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, grouped):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    block = 128 if a.is_cuda else 32  # 32 float32: one 128-byte line per tile row
    grid = (triton.cdiv(M, block) * triton.cdiv(N, block),)
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK=block, BLOCK_K=64 if a.is_cuda else 16, GROUPED=grouped)
    return c


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--order", choices=("row", "grouped"), default="row")
    parser.add_argument("--m", type=int, default=16384 if torch.cuda.is_available() else 128)
    parser.add_argument("--n", type=int, default=16384 if torch.cuda.is_available() else 4224)
    parser.add_argument("--k", type=int, default=16384 if torch.cuda.is_available() else 16)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.float16 if device == "cuda" else torch.float32
    a = torch.randn(args.m, args.k, device=device, dtype=dtype)
    b = torch.randn(args.k, args.n, device=device, dtype=dtype)
    c = matmul(a, b, args.order == "grouped")
    torch.testing.assert_close(c, (a.float() @ b.float()), atol=1e-1 * args.k**0.5, rtol=1e-2)
    print("ok", c.shape)


if __name__ == "__main__":
    main()
