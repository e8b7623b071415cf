"""Tile kernels the grouped-order recipe must decline, each with a launcher (never run)."""

import torch
import triton
import triton.language as tl


@triton.jit
def grid_2d_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :], mask=rm[:, None] < M)
        b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def grid_2d(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device)
    grid_2d_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, 16, 16, 16)
    return c


@triton.jit
def unbounded_kernel(A, B, C, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = N // BN
    pid_m = pid // n_tiles
    pid_n = pid % n_tiles
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :])
        acc += tl.dot(a, tl.load(B + (k0 + rk)[:, None] * N + rn[None, :]))
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


def unbounded(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device)
    unbounded_kernel[(M // 16 * (N // 16),)](a, b, c, N, K, 16, 16, 16)
    return c
