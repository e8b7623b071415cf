"""The search's candidates on programs written the way public Triton code is: autotuned kernels whose
config lists the search widens (decorators as FlagGems, FLA, vLLM, DeepSeek-V3, the Triton tutorials
and mamba write them), and launchers that check the block sizes they launch with."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from intelliperf.models import ArgInfo, Finding, KernelProfile, LaunchSignature
from intelliperf.rewriters import HardwareFacts, PastAttempt, RewriteRequest
from intelliperf.rewriters.search import SearchRewriter
from intelliperf.rewriters.search_edits import widen_autotune
from intelliperf.rewriters.search_knobs import knobs
from intelliperf.rewriters.source import CodeUnit, check_scope, code_unit, splice
from intelliperf.validators.gate.policy import check

# Each program defines `run()`: it launches its autotuned kernel once, checks the result against
# torch, and returns the kernel (the Autotuner) so the harness can read its configs.
PROGRAMS: dict[str, tuple[str, str]] = {}  # name: (kernel qualname, program)

# Triton's tutorial 03: the configs from a function call, the decorator over three lines.
PROGRAMS["tutorial_matmul"] = (
    "matmul_kernel",
    """
import torch
import triton
import triton.language as tl


def get_autotune_config():
    return [
        triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 2}, num_stages=3,
                      num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 2}, num_stages=4,
                      num_warps=4),
    ]


@triton.autotune(
    configs=get_autotune_config(),
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def run():
    a, b = torch.randn(48, 40), torch.randn(40, 36)
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N))
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1))
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)
    return matmul_kernel
""",
)

# DeepSeek-V3's inference/kernel.py: `from triton import Config`, the list built by a comprehension at
# module level and named in the decorator.
PROGRAMS["deepseek_named_configs"] = (
    "weight_dequant_kernel",
    """
import torch
import triton
import triton.language as tl
from triton import Config

dequant_configs = [
    Config({"BLOCK_SIZE": 32}, num_stages=num_stages, num_warps=num_warps)
    for num_stages in [3, 4] for num_warps in [4, 8]
]


@triton.autotune(configs=dequant_configs, key=["M", "N"])
@triton.jit
def weight_dequant_kernel(x_ptr, s_ptr, y_ptr, M, N, BLOCK_SIZE: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs_n = pid_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + offs_m, mask=offs_m < M)
    tl.store(y_ptr + offs, x * s[:, None], mask=mask)


def run():
    x, s = torch.randn(40, 70), torch.rand(40)
    M, N = x.size()
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE"]), triton.cdiv(N, meta["BLOCK_SIZE"]))
    weight_dequant_kernel[grid](x, s, y, M, N)
    torch.testing.assert_close(y, x * s[:, None])
    return weight_dequant_kernel
""",
)

# Triton's tutorial 06 (fused attention): the configs positional, filtered, built over continuation lines
# with comments between them.
PROGRAMS["attention_positional_filtered"] = (
    "_row_max",
    """
import torch
import triton
import triton.language as tl

configs = [
    triton.Config({"BLOCK_M": BM, "BLOCK_N": BN}, num_stages=s, num_warps=w) \\
    for BM in [16, 32]\\
    for BN in [16, 32]\\
    # for s in [1]\\
    for s in [1, 3]\\
    for w in [4, 8]\\
]


def keep(conf):
    BLOCK_M = conf.kwargs["BLOCK_M"]
    BLOCK_N = conf.kwargs["BLOCK_N"]
    if BLOCK_M * BLOCK_N < 32 * 32 and conf.num_warps == 8:
        return False
    return True


@triton.autotune(list(filter(keep, configs)), key=["N_CTX"])
@triton.jit
def _row_max(X, Out, stride_xm, M, N_CTX,  #
             BLOCK_M: tl.constexpr,  #
             BLOCK_N: tl.constexpr,  #
             ):
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    for start_n in range(0, N_CTX, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        x = tl.load(X + offs_m[:, None] * stride_xm + offs_n[None, :],
                    mask=(offs_m[:, None] < M) & (offs_n[None, :] < N_CTX), other=-float("inf"))
        m_i = tl.maximum(m_i, tl.max(x, 1))
    tl.store(Out + offs_m, m_i, mask=offs_m < M)


def run():
    x = torch.randn(50, 100)
    out = torch.empty(50)
    grid = lambda args: (triton.cdiv(50, args["BLOCK_M"]),)
    _row_max[grid](x, out, x.stride(0), 50, 100)
    torch.testing.assert_close(out, x.max(dim=1).values)
    return _row_max
""",
)

# A public transpose kernel: `from triton import autotune, cdiv, Config, heuristics, jit`; no `triton` name.
PROGRAMS["from_triton_import"] = (
    "_kernel_transpose",
    """
import torch
from triton import autotune, cdiv, Config, heuristics, jit  # @manual
import triton.language as tl


@autotune(
    configs=[
        Config({"BLOCK_M": 32, "BLOCK_N": 32}),
        Config({"BLOCK_M": 16, "BLOCK_N": 64}, num_warps=2, num_stages=1),
    ],
    key=["M", "N"],
)
@jit
def _kernel_transpose(A, B, M, N, stride_am, stride_an, stride_bn, stride_bm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(A + rm[:, None] * stride_am + rn[None, :] * stride_an, mask=mask)
    tl.store(B + rn[None, :] * stride_bn + rm[:, None] * stride_bm, a, mask=mask)


def run():
    a = torch.randn(70, 50)
    b = torch.empty(50, 70)
    M, N = a.shape
    grid = lambda META: (cdiv(M, META["BLOCK_M"]), cdiv(N, META["BLOCK_N"]))
    _kernel_transpose[grid](a, b, M, N, a.stride(0), a.stride(1), b.stride(0), b.stride(1))
    torch.testing.assert_close(b, a.t())
    return _kernel_transpose
""",
)

# `import triton as tr`: neither `triton` nor `Config` is a name of the file.
PROGRAMS["import_triton_as"] = (
    "scale",
    """
import torch
import triton as tr
import triton.language as tl


@tr.autotune(configs=[tr.Config({"BLOCK": 64}, num_warps=2), tr.Config({"BLOCK": 128}, num_warps=16)], key=["n"])
@tr.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 3 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run():
    x = torch.randn(1000)
    y = torch.empty_like(x)
    scale[lambda meta: (tr.cdiv(1000, meta["BLOCK"]),)](x, y, 1000)
    torch.testing.assert_close(y, 3 * x)
    return scale
""",
)

# mamba's layer norm: a warps-only list with comments inside, num_warps up to 32, then @triton.heuristics.
PROGRAMS["mamba_layer_norm"] = (
    "_layer_norm_fwd_1pass_kernel",
    """
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=1),
        triton.Config({}, num_warps=2),  # small rows
        triton.Config({}, num_warps=4),
        # wide rows
        triton.Config({}, num_warps=16),
        triton.Config({}, num_warps=32),
    ],
    key=["N", "HAS_RESIDUAL", "IS_RMS_NORM", "HAS_BIAS"],
)
@triton.heuristics({"HAS_BIAS": lambda args: args["B"] is not None})
@triton.jit
def _layer_norm_fwd_1pass_kernel(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    stride_x_row,
    N,  # number of columns in X
    eps,
    HAS_RESIDUAL: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
):
    row = tl.program_id(0)
    X += row * stride_x_row
    Y += row * stride_x_row
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    if not IS_RMS_NORM:
        mean = tl.sum(x, axis=0) / N
        xbar = tl.where(cols < N, x - mean, 0.0)
        var = tl.sum(xbar * xbar, axis=0) / N
    else:
        xbar = tl.where(cols < N, x, 0.0)
        var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    mask = cols < N
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    if HAS_BIAS:
        b = tl.load(B + cols, mask=mask).to(tl.float32)
    y = xbar * rstd * w + b if HAS_BIAS else xbar * rstd * w
    tl.store(Y + cols, y, mask=mask)


def run():
    x, w, b = torch.randn(6, 100), torch.randn(100), torch.randn(100)
    y = torch.empty_like(x)
    M, N = x.shape
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_N = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    if N > BLOCK_N:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    _layer_norm_fwd_1pass_kernel[(M,)](x, y, w, b, x.stride(0), N, 1e-6, HAS_RESIDUAL=False, IS_RMS_NORM=False,
                                       BLOCK_N=BLOCK_N)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (N,), w, b, 1e-6), atol=1e-4, rtol=1e-4)
    return _layer_norm_fwd_1pass_kernel
""",
)

# flash-linear-attention: @triton.heuristics outermost, a product of configs (whose neighbours are
# partly configs already listed), `**autotune_cache_kwargs`, `@triton.jit(do_not_specialize=...)`.
PROGRAMS["fla_heuristics_first"] = (
    "chunk_sum_kernel",
    """
import torch
import triton
import triton.language as tl

autotune_cache_kwargs = {}  # fla.utils: {"cache_results": True} where the Triton version allows


@triton.heuristics({
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
})
@triton.autotune(
    configs=[
        triton.Config({"BV": BV}, num_warps=num_warps, num_stages=num_stages)
        for BV in [16, 32]
        for num_warps in [2, 4]
        for num_stages in [2, 3]
    ],
    key=["BT"],
    **autotune_cache_kwargs,
)
@triton.jit(do_not_specialize=["T"])
def chunk_sum_kernel(v, o, cu_seqlens, T, V: tl.constexpr, BT: tl.constexpr, BV: tl.constexpr,
                     IS_VARLEN: tl.constexpr):
    i_v = tl.program_id(0)
    o_v = i_v * BV + tl.arange(0, BV)
    b_o = tl.zeros([BV], dtype=tl.float32)
    for i_t in range(0, tl.cdiv(T, BT)):
        o_t = i_t * BT + tl.arange(0, BT)
        b_v = tl.load(v + o_t[:, None] * V + o_v[None, :], mask=(o_t[:, None] < T) & (o_v[None, :] < V), other=0.0)
        b_o += tl.sum(b_v, 0)
    tl.store(o + o_v, b_o, mask=o_v < V)


def run():
    v = torch.randn(50, 64)
    o = torch.empty(64)
    chunk_sum_kernel[lambda meta: (triton.cdiv(64, meta["BV"]),)](v, o, None, 50, V=64, BT=16)
    torch.testing.assert_close(o, v.sum(0), atol=1e-4, rtol=1e-4)
    return chunk_sum_kernel
""",
)

# `key=` before `configs=`, and the configs a conditional expression (a device check), with
# reset_to_zero: an atomic kernel the autotuner re-zeroes between configs.
PROGRAMS["conditional_configs_key_first"] = (
    "atomic_sum",
    """
import torch
import triton
import triton.language as tl

GPU_CONFIGS = [triton.Config({"BLOCK": 256}, num_warps=8, num_stages=2)]
CPU_CONFIGS = [triton.Config({"BLOCK": 64}, num_warps=1, num_stages=1), triton.Config({"BLOCK": 128})]


@triton.autotune(key=["n_elements"], configs=GPU_CONFIGS if torch.cuda.is_available() else CPU_CONFIGS,
                 reset_to_zero=["out_ptr"])
@triton.jit
def atomic_sum(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, 0))


def run():
    x = torch.randn(1000)
    out = torch.zeros(1)
    atomic_sum[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    torch.testing.assert_close(out, x.sum().reshape(1), atol=1e-3, rtol=1e-4)
    return atomic_sum
""",
)

# A config with a pre_hook that zeroes the output (from a public kernel that accumulates with atomics):
# the neighbours must keep it, or the benchmark runs add up.
PROGRAMS["pre_hook_config"] = (
    "col_sum",
    """
import torch
import triton
import triton.language as tl
from triton import autotune, Config


def set_y(nargs):
    nargs["Y"].zero_()


@autotune(
    configs=[
        Config({"BLOCK_K": 16, "BLOCK_N": 16}, num_stages=3, num_warps=4, pre_hook=set_y)
    ],
    key=["K", "N"]
)
@triton.jit
def col_sum(X, Y, K, N, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_k, pid_n = tl.program_id(0), tl.program_id(1)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(X + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    tl.atomic_add(Y + rn, tl.sum(x, 0), mask=rn < N)


def run():
    x = torch.randn(40, 30)
    y = torch.full((30,), 7.0)
    col_sum[lambda m: (triton.cdiv(40, m["BLOCK_K"]), triton.cdiv(30, m["BLOCK_N"]))](x, y, 40, 30)
    torch.testing.assert_close(y, x.sum(0), atol=1e-4, rtol=1e-4)
    return col_sum
""",
)

# The old triton.ops matmul: configs as a sum of two calls, prune_configs_by, an EVEN_K heuristic.
PROGRAMS["ops_matmul_pruned"] = (
    "_gemv",
    """
import torch
import triton
import triton.language as tl


def get_configs_compute_bound():
    return [triton.Config({"BLOCK_M": 32, "BLOCK_K": 32}, num_stages=3, num_warps=4)]


def get_configs_io_bound():
    return [triton.Config({"BLOCK_M": 16, "BLOCK_K": k}, num_stages=2, num_warps=2) for k in (16, 256)]


def early_config_prune(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK_K"] <= named_args["K"]]


@triton.autotune(
    configs=get_configs_compute_bound() + get_configs_io_bound(),
    key=["M", "K"],
    prune_configs_by={"early_config_prune": early_config_prune, "perf_model": None, "top_k": None},
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _gemv(A, X, Y, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        if EVEN_K:
            a = tl.load(A + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
            x = tl.load(X + rk)
        else:
            a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            x = tl.load(X + rk, mask=rk < K, other=0.0)
        acc += tl.sum(a * x[None, :], 1)
    tl.store(Y + rm, acc, mask=rm < M)


def run():
    a, x = torch.randn(50, 96), torch.randn(96)
    y = torch.empty(50)
    _gemv[lambda m: (triton.cdiv(50, m["BLOCK_M"]),)](a, x, y, 50, 96)
    torch.testing.assert_close(y, a @ x, atol=1e-4, rtol=1e-4)
    return _gemv
""",
)

# FlagGems: @libentry() outermost, configs and heuristics from the runtime's tuned-config tables.
PROGRAMS["flaggems_runtime_configs"] = (
    "sum_kernel",
    """
import types

import torch
import triton
import triton.language as tl

_TUNED = {"sum": [triton.Config({"BLOCK_M": 4, "BLOCK_N": 32}, num_warps=4),
                  triton.Config({"BLOCK_M": 8, "BLOCK_N": 64}, num_warps=8, num_stages=2)]}
runtime = types.SimpleNamespace(
    get_tuned_config=lambda op: _TUNED[op],
    get_heuristic_config=lambda op: {"ONE_TILE_PER_CTA": lambda args: args["N"] <= args["BLOCK_N"]},
)


def libentry():
    return lambda fn: fn  # flag_gems.utils.libentry caches launches; the kernel is the same


@libentry()
@triton.autotune(configs=runtime.get_tuned_config("sum"), key=["M", "N"])
@triton.heuristics(runtime.get_heuristic_config("sum"))
@triton.jit
def sum_kernel(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE_PER_CTA: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.sum(tl.load(inp + rows[:, None] * N + cols[None, :],
                              mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0), 1)
    tl.store(out + rows, acc, mask=rows < M)


def run():
    x = torch.randn(30, 100)
    out = torch.empty(30)
    sum_kernel[lambda meta: (triton.cdiv(30, meta["BLOCK_M"]),)](x, out, 30, 100)
    torch.testing.assert_close(out, x.sum(1), atol=1e-4, rtol=1e-4)
    return sum_kernel
""",
)

# A kernel defined in a class body, its configs a class attribute; and a form feed (a page break, as
# Emacs users leave them) before it and a U+2028 in a comment of the list: `ast` counts neither as a
# line break, str.splitlines does.
PROGRAMS["class_body_and_odd_line_breaks"] = (
    "Ops.copy",
    """
import torch
import triton
import triton.language as tl

\x0c
class Ops:
    CONFIGS = [triton.Config({"BLOCK": 32}, num_stages=2), triton.Config({"BLOCK": 64}, num_warps=8)]

    @staticmethod
    @triton.autotune(
        configs=CONFIGS + [  # one more\u2028for small inputs
            triton.Config({"BLOCK": 16}, num_warps=1),
        ],
        key=["n"],
    )
    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run():
    x = torch.randn(300)
    y = torch.empty_like(x)
    Ops.copy[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, y, 300)
    torch.testing.assert_close(y, x)
    return Ops.copy
""",
)

# Runs each program's original and widened module in Triton's interpreter. The autotuner times each
# config by running it once (the interpreter has no timer), so every widened config is built and run.
RUNNER = """
import importlib.util, json, sys, traceback
import triton.runtime.autotuner as autotuner

autotuner.Autotuner.do_bench = property(lambda self: lambda fn, quantiles: (fn(), [1.0, 1.0, 1.0])[1])


def configs(path):
    spec = importlib.util.spec_from_file_location(path.rsplit("/", 1)[-1][:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = module.run()
    while not hasattr(kernel, "configs"):  # under @triton.heuristics
        kernel = kernel.fn
    hook = lambda c: getattr(c.pre_hook, "__name__", None)
    return [[c.kwargs, c.num_warps, c.num_stages, c.num_ctas, c.maxnreg, hook(c)] for c in kernel.configs]


out = {}
for name in sys.argv[1:]:
    try:
        out[name] = {"original": configs(f"{name}_original.py"), "widened": configs(f"{name}_widened.py")}
    except Exception:
        out[name] = {"error": traceback.format_exc()}
print("RESULT " + json.dumps(out))
"""


def _widened(tmp_path: Path, name: str) -> str:
    qualname, program = PROGRAMS[name]
    original = textwrap.dedent(program).lstrip("\n")
    path = tmp_path / f"{name}_original.py"
    path.write_text(original)
    unit = code_unit(path, qualname, tmp_path)
    assert unit is not None
    wider = widen_autotune(unit.source)
    assert wider is not None, name
    ast.parse(wider)
    check(unit.source, wider, qualname.split(".")[-1], kernel=True)  # candidate code may contain it
    changed = splice(original, qualname, wider)
    check_scope(original, changed, {qualname}, kernel=qualname)  # only the kernel (its decorator) changed
    (tmp_path / f"{name}_widened.py").write_text(changed)
    return changed


# Configs written out in the decorator are widened; computed ones are not (copies of computed configs
# would have to read their hooks, which candidate code may not).
WRITTEN_OUT = ["from_triton_import", "import_triton_as", "mamba_layer_norm", "pre_hook_config"]
COMPUTED = [name for name in PROGRAMS if name not in WRITTEN_OUT]


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory) -> dict:
    """Every program with configs written out, original and widened, run in Triton's interpreter (one Python)."""
    tmp = tmp_path_factory.mktemp("widened")
    for name in WRITTEN_OUT:
        _widened(tmp, name)
    (tmp / "runner.py").write_text(RUNNER)
    done = subprocess.run(
        [sys.executable, "runner.py", *WRITTEN_OUT],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.split("RESULT ", 1)[1])


def _key(config: list) -> str:
    return json.dumps(config, sort_keys=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", WRITTEN_OUT)
def test_widened_configs_parse_run_and_only_add_warp_and_stage_neighbours(interpreted, name):
    result = interpreted[name]
    assert "error" not in result, result.get("error")
    original, widened = result["original"], result["widened"]
    assert {_key(c) for c in original} <= {_key(c) for c in widened}, "every original config is kept"
    assert len(widened) > len(original), "the list is wider"
    assert len({_key(c) for c in widened}) == len(widened), "no config is timed twice"
    for kwargs, warps, stages, ctas, maxnreg, hook in widened:
        # a neighbour differs from a config of the original list in num_warps or num_stages only, by one step
        assert any(
            [kwargs, ctas, maxnreg, hook] == [o[0], o[3], o[4], o[5]]
            and (warps, stages) in {(o[1], o[2]), (o[1], o[2] + 1), (o[1], o[2] - 1), (o[1] * 2, o[2])}
            for o in original
        ), (kwargs, warps, stages)
        assert stages >= 1 and (warps <= 16 or any(warps == o[1] for o in original))


def test_widening_keeps_the_configs_text_and_needs_no_triton_name(tmp_path):
    changed = _widened(tmp_path, "mamba_layer_norm")
    assert "# small rows" in changed and "# wide rows" in changed  # the list's own text, comments and all
    changed = _widened(tmp_path, "from_triton_import")
    decorator = changed.split("@jit")[0]
    assert "triton." not in decorator.split("import triton.language as tl")[1]


@pytest.mark.parametrize("name", COMPUTED)
def test_computed_configs_are_not_widened(tmp_path, name):
    qualname, program = PROGRAMS[name]
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(program).lstrip("\n"))
    unit = code_unit(path, qualname, tmp_path)
    assert unit is not None and "autotune(" in unit.source and widen_autotune(unit.source) is None


def test_nothing_to_widen_is_none():
    assert widen_autotune("@triton.autotune(**tuning)\n@triton.jit\ndef k(x):\n    pass\n") is None
    assert widen_autotune("@triton.jit\ndef k(x):\n    pass\n") is None
    assert widen_autotune("@triton.heuristics({'E': lambda a: True})\n@triton.jit\ndef k(x):\n    pass\n") is None


# --- block sizes the launcher checks -------------------------------------------------------------------

KERNEL = """\
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs))
"""


def _unit(qualname: str, source: str) -> CodeUnit:
    return CodeUnit(name=qualname.split(".")[-1], qualname=qualname, file="prog.py", relpath="prog.py", line=1,
                    source=source)  # fmt: skip


def _request(launcher: str, args: list[ArgInfo], kernel: str = KERNEL, qualname: str = "launch") -> RewriteRequest:
    """A search request for `kernel` launched by `launcher` with the recorded `args` (no diagnosis run)."""
    signature = LaunchSignature(grid=[4, 1, 1], num_warps=4, num_stages=3, args=args, launches=1, total_time_s=1e-3)
    profile = KernelProfile(
        id="scale_kernel@prog.py:1", name="scale_kernel", file="prog.py", line=1, launches=1, timed_launches=1,
        total_time_s=1e-3, mean_time_s=1e-3, share=1.0, signatures=[signature],
    )  # fmt: skip
    return RewriteRequest(
        kernel=_unit("scale_kernel", kernel),
        launcher=_unit(qualname, launcher),
        profile=profile,
        finding=Finding(formula="memoryAccess", present=True, severity="high", explanation="test"),
        formula="memoryAccess",
        problem="p",
        techniques=[],
        metric=None,
        hardware=HardwareFacts(device="no GPU (test)"),
    )


def _tensor(name: str, *shape: int) -> ArgInfo:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return ArgInfo(name=name, kind="tensor", dtype="torch.float32", shape=list(shape), strides=strides)


def _block_values(request: RewriteRequest) -> tuple[list[int], list[str]]:
    found, skipped = knobs(request)
    block = next(k for k in found if k.name == "BLOCK")
    return block.values(), skipped


def _args(n: int, block: int, x_shape: tuple[int, ...] | None = None) -> list[ArgInfo]:
    return [
        _tensor("x_ptr", *(x_shape or (n,))),
        _tensor("y_ptr", *(x_shape or (n,))),
        ArgInfo(name="n", kind="scalar", value=n),
        ArgInfo(name="BLOCK", kind="constexpr", value=block),
    ]


def test_a_launcher_without_checks_keeps_every_block_size():
    launcher = (
        "def launch(x, y, BLOCK=256):\n    n = x.numel()\n    scale_kernel[(n // BLOCK,)](x, y, n, BLOCK=BLOCK)\n"
    )
    values, skipped = _block_values(_request(launcher, _args(1024, 256)))
    assert values == [512, 128, 1024, 64]  # x2, /2, x4, /4 as before
    assert not any(s.startswith("BLOCK=") for s in skipped)


def test_a_divisibility_assert_evaluated_with_the_recorded_sizes_refuses_what_breaks_it():
    launcher = textwrap.dedent("""\
        def launch(x, y, BLOCK=256):
            N = x.shape[0]
            assert N % BLOCK == 0, "N must be a multiple of BLOCK"
            scale_kernel[(N // BLOCK,)](x, y, N, BLOCK=BLOCK)
        """)
    values, skipped = _block_values(_request(launcher, _args(768, 256)))  # 768 = 3 * 256
    assert values == [128, 64]  # 512 and 1024 do not divide 768
    assert "BLOCK=512 (`assert N % BLOCK == 0` would fail)" in skipped
    values, _ = _block_values(_request(launcher, _args(4096, 256)))
    assert values == [512, 128, 1024, 64]  # all divide 4096


def test_an_unevaluable_divisibility_check_keeps_the_divisors_of_the_recorded_value():
    launcher = textwrap.dedent("""\
        def launch(x, y, n_cols, BLOCK_K=256):
            if n_cols % BLOCK_K != 0:
                raise ValueError(f"n_cols={n_cols} is not a multiple of {BLOCK_K}")
            scale_kernel[(x.numel() // BLOCK_K,)](x, y, x.numel(), BLOCK=BLOCK_K)
        """)
    values, skipped = _block_values(_request(launcher, _args(4096, 256)))  # n_cols is not passed to the kernel
    assert values == [128, 64]
    assert any(s.startswith("BLOCK=512 (`if n_cols % BLOCK_K != 0: raise` cannot be evaluated") for s in skipped)


def test_bounds_next_power_of_2_and_derived_names():
    covering = textwrap.dedent("""\
        def launch(x, y):
            n_rows, n_cols = x.shape
            BLOCK = triton.next_power_of_2(n_cols)
            scale_kernel[(n_rows,)](x, y, n_cols, BLOCK=BLOCK)
        """)
    values, skipped = _block_values(_request(covering, _args(1000, 1024, (8, 1000))))
    assert values == [2048, 4096]  # one block covers the row: never smaller than 1000
    assert any("BLOCK >= n_cols, as `BLOCK = triton.next_power_of_2(n_cols)` makes it" in s for s in skipped)
    bounded = textwrap.dedent("""\
        def launch(x, y, n):
            BLOCK = 1024
            num_blocks = triton.cdiv(n, BLOCK)
            assert num_blocks <= 8, "at most 8 programs"
            assert BLOCK >= 64 and BLOCK <= 2048
            scale_kernel[(num_blocks,)](x, y, n, BLOCK=BLOCK)
        """)
    values, _ = _block_values(_request(bounded, _args(8192, 1024)))
    assert values == [2048]  # 512 needs 16 programs (num_blocks follows BLOCK); 4096 is over 2048


def test_what_a_recorded_size_could_make_huge_is_not_evaluated():
    launcher = textwrap.dedent("""\
        def launch(x, y, n, BLOCK=256):
            bits = 2 ** n
            table = [0] * n
            assert n % BLOCK == 0
            scale_kernel[(n // BLOCK,)](x, y, n, BLOCK=BLOCK)
        """)
    values, _ = _block_values(_request(launcher, _args(2**40, 256)))  # returns at once: neither line is run
    assert values == [512, 128, 1024, 64]


def test_the_search_on_an_autograd_function_offers_only_blocks_its_forward_accepts():
    launcher = textwrap.dedent("""\
        @staticmethod
        def forward(ctx, x, BLOCK_SIZE):
            assert x.is_contiguous()
            assert x.size(-1) % BLOCK_SIZE == 0, f"last dimension must be divisible by {BLOCK_SIZE}"
            y = torch.empty_like(x)
            s = x.new_empty(*x.size()[:-1], x.size(-1) // BLOCK_SIZE)
            scale_kernel[(x.numel() // BLOCK_SIZE,)](x, y, x.numel(), BLOCK=BLOCK_SIZE)
            ctx.save_for_backward(s)
            return y
        """)
    request = _request(launcher, _args(384, 128, (3, 384)), qualname="Scale.forward")
    titles = [c.title for c in SearchRewriter().next_untried(request, 100)]  # every candidate, then a decline
    blocks = [t for t in titles if t.startswith("BLOCK=") and "," not in t]  # alone, not in pairs
    assert blocks == ["BLOCK=64 (was 128)", "BLOCK=32 (was 128)"], titles  # 256 and 512 do not divide 384
    assert not any("BLOCK=256" in t or "BLOCK=512" in t for t in titles)  # nor in pairs with other knobs
    done = [PastAttempt(number=i, rewriter="search", title=t, outcome="rejected") for i, t in enumerate(titles)]
    declined = SearchRewriter().rewrite(request.model_copy(update={"history": done}))
    assert declined.declined and "BLOCK=256 (`assert x.size(-1) % BLOCK_SIZE == 0` would fail)" in declined.declined


def test_a_static_assert_in_the_kernel_is_a_check_too():
    kernel = KERNEL.replace("    offs =", "    tl.static_assert(BLOCK <= 512)\n    offs =")
    launcher = "def launch(x, y, n):\n    scale_kernel[(n // 256,)](x, y, n, BLOCK=256)\n"
    request = _request(launcher, _args(4096, 256), kernel=kernel)
    values, skipped = _block_values(request)
    assert values == [512, 128, 64] and "BLOCK=1024 (`static_assert(BLOCK <= 512)` would fail)" in skipped


ASSERTING_PROGRAM = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs))  # no mask: the launcher guarantees n % BLOCK == 0


def launch(x, y, BLOCK=256):
    N = x.shape[0]
    assert N % BLOCK == 0, "N must be a multiple of BLOCK"
    scale_kernel[(N // BLOCK,)](x, y, N, BLOCK=BLOCK)


x = torch.randn(768)
y = torch.empty_like(x)
launch(x, y)
torch.testing.assert_close(y, 2 * x)
print("ran")
"""


@pytest.mark.slow
def test_every_candidate_for_an_asserting_launcher_runs(tmp_path):
    """Each search candidate for a launcher that asserts `N % BLOCK == 0`, spliced into the program
    and run in the interpreter: none fails the assert."""
    program = textwrap.dedent(ASSERTING_PROGRAM).lstrip("\n")
    path = tmp_path / "prog.py"
    path.write_text(program)
    kernel, launcher = code_unit(path, "scale_kernel", tmp_path), code_unit(path, "launch", tmp_path)
    assert kernel is not None and launcher is not None
    request = _request(launcher.source, _args(768, 256), kernel=kernel.source)
    candidates = SearchRewriter().next_untried(request, 8)
    assert candidates and not candidates[0].declined
    for i, cand in enumerate(candidates):
        changed = splice(program, "launch", cand.launcher) if cand.launcher else program
        changed = splice(changed, "scale_kernel", cand.kernel) if cand.kernel else changed
        (tmp_path / f"candidate_{i}.py").write_text(changed)
    runner = "import runpy, sys\nfor f in sys.argv[1:]:\n    runpy.run_path(f)\n"
    (tmp_path / "runner.py").write_text(runner)
    done = subprocess.run(
        [sys.executable, "runner.py", *(f"candidate_{i}.py" for i in range(len(candidates)))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert done.returncode == 0, ([c.title for c in candidates], done.stderr[-2000:])
    assert done.stdout.count("ran") == len(candidates)
    assert not any(c.title.startswith(("BLOCK=512", "BLOCK=1024")) for c in candidates)


def test_a_split_count_the_caller_sized_a_tensor_by_is_left_alone():
    """NUM_SPLITS comes from the caller, which sized `y` by it (a partial per split): moved at the launch
    alone, the kernel writes other partials than the caller reads. A block size the caller sized nothing by
    stays a knob, and so does a split count the launcher itself assigns (pinned there, what is sized from it
    follows)."""
    kernel = KERNEL.replace("BLOCK: tl.constexpr", "BLOCK: tl.constexpr, NUM_SPLITS: tl.constexpr")
    launch = "    scale_kernel[(n // BLOCK,)](x, y, n, BLOCK=BLOCK, NUM_SPLITS=NUM_SPLITS)\n"
    args = [*_args(1024, 256, x_shape=(1024,)), ArgInfo(name="NUM_SPLITS", kind="constexpr", value=8)]
    args[1] = _tensor("y_ptr", 8, 128)
    from_caller = "def launch(x, y, BLOCK=256, NUM_SPLITS=8):\n    n = x.numel()\n" + launch
    found, skipped = knobs(_request(from_caller, args, kernel))
    assert "NUM_SPLITS" not in {k.name for k in found} and "BLOCK" in {k.name for k in found}
    why = next(s for s in skipped if s.startswith("NUM_SPLITS"))
    assert "the caller passes it" in why and "`y_ptr` has a dimension of 8" in why
    own = "def launch(x, y, BLOCK=256):\n    n = x.numel()\n    NUM_SPLITS = 8\n" + launch
    found, _ = knobs(_request(own, args, kernel))
    assert {"NUM_SPLITS", "BLOCK"} <= {k.name for k in found}


def test_warps_and_stages_are_left_alone_without_a_gpu_where_the_formulas_evidence_cannot_see_them():
    """atomicContention's trace counts addresses per program and launch: no warps in it, so without a GPU a
    num_warps move is an attempt nothing can judge. laneUtilization's lanes per thread see it; on a GPU
    the measured time judges it for every formula."""
    launch = "    scale_kernel[(n // BLOCK,)](x, y, n, BLOCK=BLOCK)\n"
    base = _request("def launch(x, y, BLOCK=256):\n    n = x.numel()\n" + launch, _args(1024, 256))
    blind = base.model_copy(update={"formula": "atomicContention", "formula_sees_warps": False})
    found, skipped = knobs(blind)
    assert "num_warps" not in {k.name for k in found} and "BLOCK" in {k.name for k in found}
    assert "num_warps and num_stages (atomicContention's evidence without a GPU does not see them)" in skipped
    assert "num_warps" in {k.name for k in knobs(base)[0]}
    on_gpu = blind.model_copy(update={"hardware": HardwareFacts(device="NVIDIA H100")})
    assert "num_warps" in {k.name for k in knobs(on_gpu)[0]}
