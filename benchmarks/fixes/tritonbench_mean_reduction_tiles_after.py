"""Row mean (FlagGems style via TritonBench, from this repo's corpus): a loop over column blocks of a [BLOCK_M, BLOCK_N] tile.

Source: thunlp/TritonBench, data/TritonBench_G_v1/mean_reduction.py (commit 603e28a), as in benchmarks/corpus/tritonbench_mean_reduction.py
License: Apache-2.0
Fix: expert fix (no upstream commit): the launcher fixed BLOCK_M = BLOCK_N = 8, so each program step loads a 64-element tile (32 bytes per row) with 128 threads (half the lanes idle) and walks a 512-column row in 64 latency-bound steps; the fix sizes the tile to the data (BLOCK_N = next_power_of_2(N) up to 1024, BLOCK_M so the tile holds about 4096 elements, 8 warps) and reduces each tile per row (tl.sum(axis=1) into a [BLOCK_M] accumulator) so the wide tile does not keep a [BLOCK_M, BLOCK_N] accumulator live.
Bottleneck: laneUtilization
Changes: the kernel and its wrapper are benchmarks/corpus/tritonbench_mean_reduction.py's (thunlp/TritonBench data/TritonBench_G_v1/mean_reduction.py, commit 603e28a) without the CUDA device guard (contextlib); the driver takes argparse sizes.
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def mean_dim_kernel(X, Mean, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Map the program id to the rows of X it should compute.
    pid = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    X = X + pid * N
    Mean = Mean + pid
    row_mask = pid < M

    # Compute mean: each step loads one wide [BLOCK_M, BLOCK_N] tile (contiguous along the
    # row) and reduces it per row at once, so only a [BLOCK_M] accumulator stays live.
    _mean = tl.zeros([BLOCK_M], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        col_mask = cols < N
        mask = row_mask & col_mask

        a = tl.load(X + cols, mask, other=0.0).to(tl.float32)
        _mean += tl.sum(a, axis=1)
    mean = _mean / N
    mean = mean[:, None]
    tl.store(Mean, mean, row_mask)


def dim_compress(inp: torch.Tensor, dims):
    if isinstance(dims, int):
        dims = [dims]
    dim = inp.ndim
    stride = inp.stride()
    batch_dim = [i for i in range(dim) if i not in dims]
    sorted_reduction_dim = sorted(dims, key=lambda x: stride[x], reverse=True)
    order = batch_dim + sorted_reduction_dim
    return inp.permute(order).contiguous()


def mean_dim(x, dim, keepdim=False, *, dtype=None):
  if dtype is None:
    dtype = x.dtype
  
  shape = list(x.shape)
  if isinstance(dim, int):
     dim = [dim]
  dim = [d % x.ndim for d in dim]
  x = dim_compress(x, dim)
  N = 1
  for i in dim:
    N *= shape[i]
    shape[i] = 1
  M = x.numel() // N
  out = torch.empty(shape, dtype=dtype, device=x.device)
  grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]),)

  # a tile of about 4096 elements: the whole row (up to 1024 columns) times enough rows
  BLOCK_N = min(triton.next_power_of_2(N), 1024)
  BLOCK_M = max(1, min(triton.next_power_of_2(M), 4096 // BLOCK_N))
  num_warps = 4 if BLOCK_M * BLOCK_N <= 2048 else 8
  mean_dim_kernel[grid](x, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)
  if not keepdim:
    out = out.squeeze(dim)
  return out


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=65536 if on_gpu else 256)
    parser.add_argument("--cols", type=int, default=512 if on_gpu else 96)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.rows, args.cols, device=device)
    for _ in range(3):
        m = mean_dim(x, 1)
    torch.testing.assert_close(m, x.mean(1), atol=1e-4, rtol=1e-4)
    print(f"mean reduction OK rows={args.rows} cols={args.cols}")


if __name__ == "__main__":
    main()
