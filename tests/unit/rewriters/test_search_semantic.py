"""The knob search on a vendored AgentKernelArena kernel whose constexprs carry meaning: vLLM's grouped
decode attention, stage 1 (benchmarks/suites/agentkernelarena/vllm/triton_decode_attn_grouped_stage1).
Its launcher copies the caller's `num_kv_splits` into `NUM_KV_SPLITS` (the caller sized `att_out` by
it) and the kernel addresses its paged KV cache modulo `PAGE_SIZE`: neither is a tile to tune."""

from __future__ import annotations

import ast
from pathlib import Path

from intelliperf.models import ArgInfo, Finding, KernelProfile, LaunchSignature
from intelliperf.rewriters import HardwareFacts, RewriteRequest
from intelliperf.rewriters.search_knobs import knobs
from intelliperf.rewriters.source import CodeUnit

SOURCE = (
    Path(__file__).resolve().parents[3]
    / "benchmarks/suites/agentkernelarena/vllm/triton_decode_attn_grouped_stage1/source/_fwd_grouped_kernel_stage1.py"
)
KERNEL, LAUNCHER = "_fwd_grouped_kernel_stage1", "decode_grouped_att_m_fwd"
# The first launch of the task's correctness command, as the recorder wrote it (shape 0: bs 1, 8 heads,
# head_dim 64, 4 KV splits, page size 16).
TENSORS = {"Q": [1, 8, 64], "K_Buffer": [128, 8, 64], "V_Buffer": [128, 8, 64], "Req_to_tokens": [1, 128],
           "B_Seqlen": [1], "Att_Out": [1, 8, 4, 65]}  # fmt: skip
SCALARS = {"sm_scale": 0.125, "stride_req_to_tokens_b": 128, "stride_qbs": 512, "stride_qh": 64,
           "stride_buf_kbs": 512, "stride_buf_kh": 64, "stride_buf_vbs": 512, "stride_buf_vh": 64,
           "stride_mid_ob": 2080, "stride_mid_oh": 260, "stride_mid_os": 65}  # fmt: skip
CONSTEXPRS = {"kv_group_num": 1, "q_head_num": 8, "BLOCK_DMODEL": 64, "BLOCK_DPE": 0, "BLOCK_DV": 64,
              "BLOCK_N": 32, "BLOCK_H": 16, "NUM_KV_SPLITS": 4, "PAGE_SIZE": 16, "logit_cap": 0.0,
              "Lk": 64, "Lv": 64}  # fmt: skip


def _unit(name: str) -> CodeUnit:
    text = SOURCE.read_text()
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    source = "".join(text.splitlines(keepends=True)[first - 1 : fn.end_lineno])
    return CodeUnit(name=name, qualname=name, file=str(SOURCE), relpath=SOURCE.name, line=first, source=source)


def _args() -> list[ArgInfo]:
    out = []
    for name in [a.arg for a in ast.parse(_unit(KERNEL).source).body[0].args.args]:
        if name in TENSORS:
            out.append(ArgInfo(name=name, kind="tensor", dtype="torch.float16", shape=TENSORS[name]))
        elif name in SCALARS:
            out.append(ArgInfo(name=name, kind="scalar", value=SCALARS[name]))
        else:
            out.append(ArgInfo(name=name, kind="constexpr", value=CONSTEXPRS[name]))
    return out


def _request(formula: str) -> RewriteRequest:
    signature = LaunchSignature(grid=[1, 8, 4], num_warps=4, num_stages=2, args=_args(), launches=1, total_time_s=1e-3)
    profile = KernelProfile(
        id=f"{KERNEL}@{SOURCE}:23", name=KERNEL, file=str(SOURCE), line=23, launches=1, timed_launches=1,
        total_time_s=1e-3, mean_time_s=1e-3, share=1.0, signatures=[signature],
    )  # fmt: skip
    return RewriteRequest(
        kernel=_unit(KERNEL),
        launcher=_unit(LAUNCHER),
        profile=profile,
        finding=Finding(formula=formula, present=True, severity="high", explanation="test"),
        formula=formula,
        problem="p",
        techniques=[],
        metric=None,
        hardware=HardwareFacts(device="no GPU (test)"),
    )


def test_the_split_count_and_the_page_size_are_never_moved_the_tiles_are():
    for formula in ("laneUtilization", "atomicContention", "memoryAccess"):
        found, skipped = knobs(_request(formula))
        names = {k.name for k in found}
        assert not names & {"NUM_KV_SPLITS", "PAGE_SIZE"}, (formula, names)
        assert {"BLOCK_N", "BLOCK_H"} <= names  # the launcher's own tile sizes stay knobs
        why = {s.split(" ", 1)[0]: s for s in skipped}
        assert "the caller passes it as `num_kv_splits` (through `NUM_KV_SPLITS`)" in why["NUM_KV_SPLITS"]
        assert "`Att_Out` has a dimension of 4" in why["NUM_KV_SPLITS"]
        assert "the kernel takes `offs_n % PAGE_SIZE`" in why["PAGE_SIZE"], why["PAGE_SIZE"]
