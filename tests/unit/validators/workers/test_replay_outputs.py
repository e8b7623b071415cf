"""The float type a reference's kernel computes in, read from its TTIR (real kernels compiled for sm_90 on the
CPU), and fresh memory handed on from the last block of its size."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from intelliperf.validators.workers import fresh_memory
from intelliperf.validators.workers.replay_outputs import computes_in


@triton.jit
def _scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


@triton.jit
def _scale_in_float32(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def _computes_in(kernel, x, out) -> str | None:
    return computes_in(kernel, (x, out, x.numel()), {"BLOCK": 64}, None)


@pytest.mark.slow  # (compiles kernels)
def test_a_kernel_computes_in_the_narrowest_type_its_pointers_and_casts_name():
    x64, out64 = torch.rand(100, dtype=torch.float64), torch.empty(100, dtype=torch.float64)
    assert _computes_in(_scale, x64, out64) == "float64"
    assert _computes_in(_scale_in_float32, x64, out64) == "float32"  # (rounded down, stored back as float64)
    assert _computes_in(_scale, x64.float(), out64) == "float32"  # (a float32 copy the launcher made)
    assert _computes_in(_scale, x64.half(), out64.half()) == "float16"
    assert computes_in(_scale, (x64, out64), {}, None) is None  # (an argument missing: the compiler refuses)


def test_a_block_of_a_size_handed_out_before_starts_with_what_the_last_one_holds():
    fresh_memory._KEPT.clear()
    try:
        first = torch.empty(64, dtype=torch.int32)
        assert not fresh_memory.handed_back(first)
        first.fill_(7)
        again = torch.empty(32, dtype=torch.float64)  # the same 256 bytes, another dtype
        assert fresh_memory.handed_back(again)
        assert torch.equal(again.view(torch.int32), torch.full((64,), 7, dtype=torch.int32))
        assert not fresh_memory.handed_back(torch.empty(65, dtype=torch.int32))  # another size starts afresh
        huge = torch.empty(0, dtype=torch.uint8)
        assert not fresh_memory.handed_back(huge) and (0, "cpu") not in fresh_memory._KEPT
    finally:
        fresh_memory._KEPT.clear()
