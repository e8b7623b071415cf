"""The static view on CPU: kernels compiled for NVIDIA (sm_90) and AMD (gfx942), facts per line."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import EXAMPLES, REPO

from intelliperf.profiling.static import compile_args, parse_target, static_view

MEMORY = REPO / "examples" / "memory_access"


def _kernel(path, name):
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"_static_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules.pop("_harness", None)  # each example folder has its own
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.pop("_harness", None)
    return getattr(module, name)


def _tensor(name):
    return {"name": name, "kind": "tensor", "dtype": "float32"}


def _facts(view, target, line=None, kind=None):
    return [
        f
        for f in view["facts"]
        if f["target"] == target and (line is None or f["line"] == line) and (kind is None or f["kind"] == kind)
    ]


def test_the_contended_atomic_is_per_lane_on_both_vendors():
    kernel = _kernel(EXAMPLES / "contended_sum.py", "contended_sum_kernel")
    args = [
        _tensor("x_ptr"),
        _tensor("out_ptr"),
        {"name": "n", "kind": "scalar", "value": 1 << 24},
        {"name": "BLOCK", "kind": "constexpr", "value": 1024},
    ]
    view = static_view(kernel, args, num_warps=4)
    assert view["targets"] == ["cuda:90", "hip:gfx942"] and view["notes"] == []
    nv, amd = _facts(view, "cuda:90", 21, "atomic"), _facts(view, "hip:gfx942", 21, "atomic")
    # 1024 lanes over 128 threads: 8 per-lane atomics per thread on sm_90, 4 per lane of a 64-wide wave.
    assert [(f["instruction"], f["count"]) for f in nv] == [("atom.global.gpu.acq_rel.add.f32", 8)]
    assert [(f["instruction"], f["count"]) for f in amd] == [("global_atomic_add_f32", 4)]
    assert all(f["file"].endswith("contended_sum.py") for f in nv + amd)
    loads = _facts(view, "cuda:90", 19, "load") + _facts(view, "hip:gfx942", 19, "load")
    assert {f["width_bits"] for f in loads} == {128}


def test_the_facts_are_the_models_static_facts():
    """The static view runs in the program and writes its facts as JSON; `models.StaticFact` is their one
    definition: every fact of a real view validates as one, and every kind the instruction scanners name is
    one of its kinds (a new kind in the scanner and not in the model would fail every diagnosis's load)."""
    from typing import get_args

    from intelliperf.models import StaticFact
    from intelliperf.profiling import static

    kernel = _kernel(EXAMPLES / "contended_sum.py", "contended_sum_kernel")
    args = [_tensor("x_ptr"), _tensor("out_ptr"), {"name": "n", "kind": "scalar", "value": 4096}]
    view = static_view(kernel, [*args, {"name": "BLOCK", "kind": "constexpr", "value": 1024}], num_warps=4)
    facts = [StaticFact(**f) for f in view["facts"]]
    assert facts and [f.model_dump() for f in facts] == view["facts"]
    scanned = {kind for kind, _ in static._PTX + static._AMDGCN} | {"shared_load", "shared_store"}
    assert scanned | {"local_load", "local_store"} == set(get_args(StaticFact.model_fields["kind"].annotation))


@pytest.mark.parametrize(
    "example,name,block,store_bits",
    [
        ("naive_transpose", "naive_transpose_kernel", ("BLOCK_N", 256), 32),
        ("tiled_transpose", "tiled_transpose_kernel", ("BLOCK", 64), 128),
    ],
)
def test_transpose_store_widths(example, name, block, store_bits):
    kernel = _kernel(MEMORY / f"{example}.py", name)
    args = [
        _tensor("x_ptr"),
        _tensor("y_ptr"),
        {"name": "m", "kind": "scalar", "value": 4096},
        {"name": "n", "kind": "scalar", "value": 4096},
        {"name": block[0], "kind": "constexpr", "value": block[1]},
    ]
    view = static_view(kernel, args, num_warps=4)
    store_line = next(
        i for i, t in enumerate((MEMORY / f"{example}.py").read_text().splitlines(), 1) if "tl.store(" in t
    )
    for target in ("cuda:90", "hip:gfx942"):
        stores = _facts(view, target, store_line, "store")
        assert stores and {f["width_bits"] for f in stores} == {store_bits}, (target, stores)


def test_recorded_integers_divisible_by_16_are_specialised():
    signature, constexprs, attrs = compile_args(
        ["x", "n", "k", "B"],
        [
            _tensor("x"),
            {"name": "n", "kind": "scalar", "value": 4096},
            {"name": "k", "kind": "scalar", "value": 4097},
            {"name": "B", "kind": "constexpr", "value": 64},
        ],
    )
    assert signature == {"x": "*fp32", "n": "i32", "k": "i32", "B": "constexpr"} and constexprs == {"B": 64}
    assert attrs == {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}


def test_bad_targets_and_arguments_are_explained():
    with pytest.raises(ValueError, match="expected cuda:<sm number>"):
        parse_target("metal:3")
    kernel = _kernel(EXAMPLES / "contended_sum.py", "contended_sum_kernel")
    view = static_view(
        kernel, [_tensor("x_ptr"), {"name": "out_ptr", "kind": "other", "type_name": "Foo"}], targets=("cuda:90",)
    )
    assert view["facts"] == [] and "cannot be compiled from its description" in view["notes"][0]


def test_diagnose_reports_the_static_view_at_the_flagged_line(sum_report):
    diagnosis = sum_report.diagnosis("contended_sum_kernel")
    assert [ev.backend for ev in diagnosis.evidence] == ["interpreter-trace", "static"]
    static = diagnosis.evidence[1]
    assert not static.modelled and {f.target for f in static.facts} == {"cuda:90", "hip:gfx942"}
    finding = diagnosis.findings[0]
    assert finding.evidence_backend == "interpreter-trace+static"
    detail = finding.lines[0].detail
    assert (
        "compiled: cuda:90 8x atom.global.gpu.acq_rel.add.f32 (32-bit); hip:gfx942 4x global_atomic_add_f32" in detail
    )


def test_loads_with_a_default_are_counted_and_helper_loads_land_at_the_call():
    """`tl.load(..., other=0)` lowers to `mov 0; ld.global` in one inline asm whose string LLVM
    escapes (`\\0A\\09ld.global`); read undecoded, `ld` after the tab had no word boundary and every
    such load went uncounted on NVIDIA, which left the attention tutorial's helper loop without
    loads in the cuda view. Pipelined (num_stages=3) the loop's loads become cp.async at the call."""
    kernel = _kernel(REPO / "benchmarks" / "corpus" / "triton_attention_fwd.py", "_attn_fwd")
    args = []
    for p in kernel.params:
        if p.name in ("Q", "K", "V", "Out"):
            args.append({"name": p.name, "kind": "tensor", "dtype": "float16"})
        elif p.name in ("HEAD_DIM", "BLOCK_M", "BLOCK_N"):
            args.append({"name": p.name, "kind": "constexpr", "value": 32 if p.name == "BLOCK_N" else 64})
        elif p.name in ("stride_qk", "stride_kk", "stride_vn", "stride_on"):
            args.append({"name": p.name, "kind": "scalar", "value": 1})
        else:
            args.append({"name": p.name, "kind": "scalar", "value": 0.5 if p.name == "sm_scale" else 4096})
    plain = static_view(kernel, args, targets=("cuda:90",), num_warps=4, num_stages=1)
    assert {f["kind"] for f in _facts(plain, "cuda:90", line=69)} >= {"load", "mma"}  # the helper's call line
    piped = static_view(kernel, args, targets=("cuda:90",), num_warps=4, num_stages=3)
    assert _facts(piped, "cuda:90", line=69, kind="async_copy") and not _facts(piped, "cuda:90", line=69, kind="load")
