"""Bincount (vLLM's bincount_kernel ported to Triton, from this repo's corpus): skewed token ids counted into bins.

Source: vllm-project/vllm, csrc/bincount.cu (bincount_kernel), ported to Triton in benchmarks/corpus/vllm_bincount.py
License: Apache-2.0
Fix: expert fix (no upstream commit): instead of one tl.atomic_add per element (33.5M atomics for 2^25 Zipf-distributed ids, millions on the hottest bin), each program counts 16 x 1024 elements into a private tl.histogram in registers and flushes one atomic per non-empty bin, so global atomics drop to at most bins per program and the hot bins see one update per program.
Bottleneck: atomicContention
Changes: the kernel is benchmarks/corpus/vllm_bincount.py's (vllm-project/vllm csrc/bincount.cu ported to Triton); its module-level launch is wrapped in the launcher bincount(src, bins), and the driver takes argparse sizes.
"""

import argparse

import torch
import triton
import triton.language as tl


@triton.jit
def bincount_kernel(
    src_ptr,
    out_ptr,
    numel,
    bins,
    BLOCK: tl.constexpr,
    BLOCKS_PER_PROGRAM: tl.constexpr,
    BINS_P2: tl.constexpr,
):
    # Privatized histogram: count this program's BLOCKS_PER_PROGRAM * BLOCK elements in
    # registers, then flush one atomic per non-empty bin instead of one per element.
    start = tl.program_id(0).to(tl.int64) * (BLOCK * BLOCKS_PER_PROGRAM)
    hist = tl.zeros([BINS_P2], dtype=tl.int32)
    for i in range(BLOCKS_PER_PROGRAM):
        offs = start + i * BLOCK + tl.arange(0, BLOCK)
        mask = offs < numel
        b = tl.load(src_ptr + offs, mask=mask, other=0)
        # masked lanes are counted in the spare bin BINS_P2 - 1 (>= bins), never flushed
        b = tl.where(mask, b, BINS_P2 - 1)
        hist += tl.histogram(b, BINS_P2)
    bin_ids = tl.arange(0, BINS_P2)
    tl.atomic_add(out_ptr + bin_ids, hist, mask=(bin_ids < bins) & (hist > 0))


def bincount(src, bins):
    numel = src.numel()
    out = torch.zeros(bins, dtype=torch.int32, device=src.device)
    BLOCK = 1024
    BLOCKS_PER_PROGRAM = 16
    bincount_kernel[(triton.cdiv(numel, BLOCK * BLOCKS_PER_PROGRAM),)](
        src,
        out,
        numel,
        bins,
        BLOCK=BLOCK,
        BLOCKS_PER_PROGRAM=BLOCKS_PER_PROGRAM,
        BINS_P2=triton.next_power_of_2(bins + 1),
    )
    return out


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--numel", type=int, default=(1 << 25) if on_gpu else (1 << 16))
    parser.add_argument("--bins", type=int, default=512 if on_gpu else 64)
    args = parser.parse_args()
    torch.manual_seed(0)
    weights = 1.0 / torch.arange(1, args.bins + 1, dtype=torch.float64)
    src = torch.multinomial(weights, args.numel, replacement=True).to(torch.int32).to(device)
    for _ in range(3):
        out = bincount(src, args.bins)
    ref = torch.bincount(src.long(), minlength=args.bins).to(torch.int32)
    torch.testing.assert_close(out, ref)
    print(f"bincount OK numel={args.numel} bins={args.bins}")


if __name__ == "__main__":
    main()
