#!/usr/bin/env python3
# Vendored from https://github.com/AMD-AGI/AgentKernelArena (Apache-2.0, see LICENSE in benchmarks/suites/agentkernelarena/),
# tasks/triton2triton/geak_eval/L1/refk_identity/kernel.py at commit d6f7c8a4f01fb0e57b6ee7a7c0af4d7c9d8a0f2b. Changes for intelliperf: device from AKA_DEVICE (5 hard-coded device string(s)); torch.cuda.synchronize a no-op with AKA_DEVICE=cpu.
"""
Identity Kernel — Triton implementation extracted via torch.compile(backend='inductor').

Copies an input tensor to an output tensor element-wise.
Triton kernel generated from PyTorch's `output.copy_(input)` on float16 1-D tensors.
"""

# intelliperf (vendoring): the torch device comes from AKA_DEVICE (default cuda, as published); with
# AKA_DEVICE=cpu (Triton's interpreter) torch.cuda.synchronize waits for nothing instead of raising.
import os as _aka_os

AKA_DEVICE = _aka_os.environ.get("AKA_DEVICE", "cuda")
if AKA_DEVICE == "cpu":
    import torch as _aka_torch

    _aka_torch.cuda.synchronize = lambda device=None: None


import torch
import triton
import triton.language as tl


# ============================================================================
# TRITON KERNEL — extracted from torch.compile inductor output
# ============================================================================


@triton.autotune(
    configs=[
        triton.Config({"XBLOCK": 128}, num_warps=2),
        triton.Config({"XBLOCK": 256}, num_warps=4),
        triton.Config({"XBLOCK": 512}, num_warps=4),
        triton.Config({"XBLOCK": 1024}, num_warps=8),
    ],
    key=["xnumel"],
)
@triton.jit
def _identity_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask).to(tl.float32)
    tl.store(out_ptr0 + xindex, tmp0, xmask)


# ============================================================================
# PYTHON WRAPPER
# ============================================================================


def identity_triton(input_tensor: torch.Tensor, output_tensor: torch.Tensor) -> torch.Tensor:
    xnumel = input_tensor.numel()
    grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
    _identity_kernel[grid](input_tensor, output_tensor, xnumel)
    return output_tensor


# ============================================================================
# REFERENCE IMPLEMENTATION (pure PyTorch)
# ============================================================================


def identity_pytorch(input_tensor: torch.Tensor, output_tensor: torch.Tensor) -> torch.Tensor:
    output_tensor[...] = input_tensor
    return output_tensor


# ============================================================================
# ENTRY POINTS (for GEAK harness)
# ============================================================================


def triton_op(size, seed):
    gen = torch.Generator(device=AKA_DEVICE)
    gen.manual_seed(seed)
    data = torch.empty(size, device=AKA_DEVICE, dtype=torch.float16)
    data.uniform_(0, 1, generator=gen)
    output = torch.empty_like(data)
    return identity_triton(data, output)


def torch_op(size, seed):
    gen = torch.Generator(device=AKA_DEVICE)
    gen.manual_seed(seed)
    data = torch.empty(size, device=AKA_DEVICE, dtype=torch.float16)
    data.uniform_(0, 1, generator=gen)
    output = torch.empty_like(data)
    return identity_pytorch(data, output)


# ============================================================================
# SYNTHETIC INPUT BUILDER
# ============================================================================


def get_inputs(size, seed=42, device=AKA_DEVICE):
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    data = torch.empty(size, device=device, dtype=torch.float16)
    data.uniform_(0, 1, generator=gen)
    output = torch.empty_like(data)
    return data, output


# ============================================================================
# CONFIG SPACE — shapes exercised by test_kernel_harness.py
# ============================================================================


EVAL_CONFIGS = [
    # tests from task.yml
    {"size": 127, "seed": 4242},
    {"size": 128, "seed": 5236},
    {"size": 129, "seed": 1001},
    {"size": 256, "seed": 5531},
    {"size": 512, "seed": 9173},
    # benchmarks from task.yml
    {"size": 1024, "seed": 54352},
    {"size": 2048, "seed": 93246},
    {"size": 4096, "seed": 6256},
    {"size": 8192, "seed": 8841},
    {"size": 16384, "seed": 6252},
    {"size": 32768, "seed": 52624},
    {"size": 65536, "seed": 125432},
]

PROFILE_CONFIGS = [
    {"size": 1024, "seed": 54352},
    {"size": 8192, "seed": 8841},
    {"size": 65536, "seed": 125432},
]
