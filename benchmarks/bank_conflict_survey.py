"""Which Triton kernels show shared-memory bank conflicts on this GPU? Measure, do not assume.

    python benchmarks/bank_conflict_survey.py [--time]          (each kernel once; --time: do_bench table)
    ncu --clock-control none --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,... \
        python benchmarks/bank_conflict_survey.py

Candidates: tile transposes (tl.trans) per dtype and tile, reductions along the non-contiguous
axis inside a loop versus once, 3-D permutes, tl.gather, fp16 GEMMs with B row- or column-major.
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_tile(x_ptr, y_ptr, m, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + rows[:, None] * n + cols[None, :])
    tl.store(y_ptr + cols[:, None] * m + rows[None, :], tl.trans(tile))


@triton.jit
def colsum_each(x_ptr, y_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BN,), tl.float32)
    for r in range(0, m, BM):
        rows = r + tl.arange(0, BM)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * n + cols[None, :]), axis=0)
    tl.store(y_ptr + cols, acc)


@triton.jit
def colsum_once(x_ptr, y_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for r in range(0, m, BM):
        rows = r + tl.arange(0, BM)
        acc += tl.load(x_ptr + rows[:, None] * n + cols[None, :])
    tl.store(y_ptr + cols, tl.sum(acc, axis=0))


@triton.jit
def rowmax_sub(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # softmax-like: normalise by the column max of a [BLOCK, BLOCK] tile (reduction along rows)
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    for c in range(0, n, BLOCK):
        tile = tl.load(x_ptr + rows[:, None] * n + (c + cols)[None, :])
        tl.store(y_ptr + rows[:, None] * n + (c + cols)[None, :], tile - tl.max(tile, axis=0)[None, :])


@triton.jit
def permute3(x_ptr, y_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    # x: [G, B, M, N] -> y: [G, B, N, M], one (B, M, N) block per program
    base = tl.program_id(0) * B * M * N
    b = tl.arange(0, B)[:, None, None]
    i = tl.arange(0, M)[None, :, None]
    j = tl.arange(0, N)[None, None, :]
    blk = tl.load(x_ptr + base + b * M * N + i * N + j)
    out = tl.permute(blk, (0, 2, 1))
    jj = tl.arange(0, N)[None, :, None]
    ii = tl.arange(0, M)[None, None, :]
    tl.store(y_ptr + base + b * M * N + jj * M + ii, out)


@triton.jit
def gather_rows(x_ptr, idx_ptr, y_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    for c in range(0, n, BN):
        tile = tl.load(x_ptr + rows[:, None] * n + (c + cols)[None, :])
        idx = tl.load(idx_ptr + tl.arange(0, BM))[:, None] + tl.zeros((BM, BN), tl.int32)
        tl.store(y_ptr + rows[:, None] * n + (c + cols)[None, :], tl.gather(tile, idx, 0))


@triton.jit
def matmul(
    a_ptr, b_ptr, c_ptr, M, N, K, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr
):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def cases():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    s = 4096 if dev == "cuda" else 128  # the interpreter: a quick check of the kernels' logic
    x32 = torch.rand(s, s, device=dev)
    out = {}
    for dtype, name in ((torch.float32, "f32"), (torch.float16, "f16"), (torch.int8, "i8"), (torch.float64, "f64")):
        x = x32.to(dtype) if dtype != torch.int8 else (x32 * 100).to(torch.int8)
        for block in (32, 64):
            y = torch.empty_like(x)
            out[f"transpose_{name}_{block}"] = (
                lambda x=x, y=y, block=block: transpose_tile[(s // block, s // block)](x, y, s, s, BLOCK=block),
                lambda x=x, y=y: torch.equal(y, x.T),
                2 * x.numel() * x.element_size(),
            )
    ycol = torch.empty(s, device=dev)
    for name, kern in (("colsum_each", colsum_each), ("colsum_once", colsum_once)):
        out[name] = (
            lambda kern=kern: kern[(s // 64,)](x32, ycol, s, s, BM=64, BN=64),
            lambda: torch.allclose(ycol, x32.sum(0), rtol=1e-4),
            x32.numel() * 4,
        )
    y2 = torch.empty_like(x32)
    out["rowmax_sub"] = (
        lambda: rowmax_sub[(s // 64,)](x32, y2, s, BLOCK=64),
        lambda: torch.allclose(
            y2,
            x32
            - x32.view(s // 64, 64, s // 64, 64).amax(1, keepdim=True).expand(s // 64, 64, s // 64, 64).reshape(s, s),
        ),
        2 * x32.numel() * 4,
    )
    x4 = x32.view(-1, 8, 32, 32)
    y4 = torch.empty_like(x4)
    out["permute3"] = (
        lambda: permute3[(x4.shape[0],)](x4, y4, B=8, M=32, N=32),
        lambda: torch.equal(y4, x4.transpose(2, 3)),
        2 * x32.numel() * 4,
    )
    idx = torch.randperm(64, device=dev, dtype=torch.int32)
    y5 = torch.empty_like(x32)
    out["gather_rows"] = (
        lambda: gather_rows[(s // 64,)](x32, idx, y5, s, BM=64, BN=64),
        lambda: torch.equal(y5.view(s // 64, 64, s), x32.view(s // 64, 64, s)[:, idx.long()]),
        2 * x32.numel() * 4,
    )
    a = torch.randn(s, s, device=dev, dtype=torch.float16)
    b = torch.randn(s, s, device=dev, dtype=torch.float16)
    bt = b.T.contiguous()
    c = torch.empty(s, s, device=dev, dtype=torch.float16)
    ref = a @ b
    for name, bb, sk, sn in (("gemm_b_rowmajor", b, s, 1), ("gemm_b_colmajor", bt, 1, s)):
        for stages in (1, 3):
            out[f"{name}_s{stages}"] = (
                lambda bb=bb, sk=sk, sn=sn, stages=stages: matmul[(s // 128, s // 128)](
                    a, bb, c, s, s, s, sk, sn, BM=128, BN=128, BK=64, STAGES=stages
                ),
                lambda: torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=0.5),
                2 * s**3,
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time", action="store_true")
    args = parser.parse_args()
    for name, (run, check, work) in cases().items():
        run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        ok = check()
        if args.time:
            ms = triton.testing.do_bench(run, warmup=50, rep=200, return_mode="median")
            rate = f"{work / ms / 1e9:.0f} TFLOP/s" if name.startswith("gemm") else f"{work / ms / 1e6:.0f} GB/s"
            print(f"{name:24s} ok={ok} {ms * 1000:8.1f} us  {rate}")
        else:
            print(f"{name:24s} ok={ok}")


if __name__ == "__main__":
    main()
