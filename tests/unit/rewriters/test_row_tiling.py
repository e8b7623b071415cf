"""registerPressure recipe tile-row-loop on real row kernels (tests/programs/row_tiling).

Each kernel is rewritten from a recorded launch of a 8192-lane block, checked against the source
policy, spliced into a copy of its program and run next to the original in the Triton interpreter
at 5000 columns (chunks of 1024 lanes: a partly masked chunk, then masked ones) and at 300 columns
(a launch whose block is smaller than the chunk). Compiled for an H100 (no GPU needed), the
rewritten kernels spill nothing. The declines say, in one sentence, why the recipe does not apply.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from conftest import PROGRAMS, REPO
from interpreted import same_outputs
from recipe_request import recipe_request

from intelliperf.models import ArgInfo, LaunchSignature
from intelliperf.rewriters import RewriteRequest
from intelliperf.rewriters.row_tiling import NotRowTiled, tile_row_loop
from intelliperf.rewriters.source import CodeUnit, check_scope, code_unit, splice
from intelliperf.validators.gate.policy import check

ROWS = PROGRAMS / "row_tiling"
LIGER = REPO / "benchmarks" / "fixes" / "liger_fused_add_rms_norm_backward_before.py"


@dataclass
class RowKernel:
    program: str
    block: str  # the kernel's block-size constexpr
    loops: int  # one per level of dependent reductions, one for the stores
    inputs: dict[str, str]  # the launcher's tensor inputs: name -> dtype
    args: dict[str, object] = field(default_factory=dict)  # the launch's other arguments, for compiling

    @property
    def file(self) -> Path:
        return ROWS / f"{self.program}.py"

    @property
    def kernel(self) -> str:
        return f"{self.program}_kernel"


KERNELS = [
    RowKernel("rms_norm", "BLOCK_SIZE", 2, {"x": "float16", "w": "float16"}, {"stride": 16384, "n_cols": 16000}),
    RowKernel("layer_norm", "BLOCK", 3, {"x": "float32", "w": "float32", "b": "float32"}, {"row_stride": 16384}),
    RowKernel("softmax", "BLOCK_SIZE", 3, {"x": "float32"}),
    RowKernel("log_softmax_outputs", "BLOCK", 3, {"x": "float32"}),
]


def _request(unit: CodeUnit, constexprs: dict, tensors: dict[str, str] | None = None, num_warps=4) -> RewriteRequest:
    args = [ArgInfo(name=n, kind="tensor", dtype=d) for n, d in (tensors or {}).items()]
    args += [ArgInfo(name=n, kind="constexpr", value=v) for n, v in constexprs.items()]
    signature = LaunchSignature(grid=[4], num_warps=num_warps, args=args, launches=1, total_time_s=1e-3)
    return recipe_request(unit, None, "registerPressure", signature)


def _unit(file: Path, name: str) -> CodeUnit:
    unit = code_unit(file, name, REPO)
    assert unit is not None
    return unit


def _rewritten(case: RowKernel, block: int = 8192) -> tuple[CodeUnit, str]:
    unit = _unit(case.file, case.kernel)
    kernel, launcher = tile_row_loop(_request(unit, {case.block: block}))
    assert launcher is None
    return unit, kernel


def _tiled_program(case: RowKernel, tmp_path: Path) -> Path:
    unit, kernel = _rewritten(case)
    original = case.file.read_text()
    text = splice(original, unit.qualname, kernel)
    check_scope(original, text, {unit.qualname}, kernel=unit.name)
    path = tmp_path / case.file.name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", KERNELS, ids=lambda c: c.program)
def test_the_rewritten_kernel_walks_the_row_in_chunks_within_the_policy(case):
    unit, kernel = _rewritten(case)
    check(unit.source, kernel, unit.name, kernel=True)
    assert f"CHUNK: tl.constexpr = min({case.block}, 1024)" in kernel
    assert kernel.count(f"in tl.range(0, {case.block}, CHUNK):") == case.loops
    assert "tl.arange(0, CHUNK)" in kernel and f"tl.arange(0, {case.block})" not in kernel


@pytest.mark.slow
@pytest.mark.parametrize("n_cols", [5000, 300])
@pytest.mark.parametrize("case", KERNELS, ids=lambda c: c.program)
def test_the_rewritten_kernel_computes_what_the_original_did(case, n_cols, tmp_path):
    tiled = _tiled_program(case, tmp_path)
    torch.manual_seed(n_cols)
    inputs = [
        torch.randn(*((4, n_cols) if name == "x" else (n_cols,)), dtype=getattr(torch, dtype))
        for name, dtype in case.inputs.items()
    ]
    same_outputs(case.file, tiled, case.program, *inputs)


# Compiled in a process of its own: kernels run by the interpreter leave parts of triton.language
# patched for the rest of the process, which the compiler cannot use.
COMPILE = """
import importlib.util, json, sys
from intelliperf.profiling.static import compile_launch, resources
used = {}
for label, path, kernel, args in json.loads(sys.argv[1]):
    spec = importlib.util.spec_from_file_location(label.replace("/", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    used[label] = resources(compile_launch(getattr(module, kernel), args, "cuda:90", num_warps=4), "cuda:90")[0]
print(json.dumps(used))
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, dict]:
    """Registers and spilled bytes of each kernel before and after, compiled for an H100 at 16384 lanes."""
    from triton import knobs

    if not Path(knobs.nvidia.cuobjdump.path or "").exists():
        pytest.skip("Triton's CUDA tools are not installed")
    jobs = []
    for case in KERNELS:
        tiled = _tiled_program(case, tmp_path_factory.mktemp(case.program))
        args = [_compile_arg(name, case, 16384) for name in _parameters(case)]
        jobs += [(f"{case.program}/before", str(case.file), case.kernel, args)]
        jobs += [(f"{case.program}/after", str(tiled), case.kernel, args)]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", COMPILE, json.dumps(jobs)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("case", KERNELS, ids=lambda c: c.program)
def test_compiled_for_an_h100_the_rewritten_kernel_spills_nothing(case, compiled):
    before, after = compiled[f"{case.program}/before"], compiled[f"{case.program}/after"]
    assert after["spill_bytes"] == 0, (before, after)
    assert after["registers"] < before["registers"] or before["spill_bytes"] > 0, (before, after)


def _parameters(case: RowKernel) -> list[str]:
    fn = ast.parse(_unit(case.file, case.kernel).source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return [a.arg for a in fn.args.args]


def _compile_arg(name: str, case: RowKernel, block: int) -> dict:
    if name == case.block:
        return {"name": name, "kind": "constexpr", "value": block}
    if name in case.args:
        return {"name": name, "kind": "scalar", "value": case.args[name]}
    if name == "eps":
        return {"name": name, "kind": "scalar", "value": 1e-5}
    if name.startswith(("n", "N")) or "stride" in name:
        return {"name": name, "kind": "scalar", "value": 16000}
    return {"name": name, "kind": "tensor", "dtype": case.inputs.get("x", "float32")}


# --- declines


def _declined(unit: CodeUnit, constexprs: dict, tensors: dict[str, str] | None = None) -> str:
    with pytest.raises(NotRowTiled) as info:
        tile_row_loop(_request(unit, constexprs, tensors))
    return str(info.value)


def test_a_block_small_enough_for_registers_is_left_alone():
    unit = _unit(ROWS / "rms_norm.py", "rms_norm_kernel")
    reason = _declined(unit, {"BLOCK_SIZE": 4096})
    assert reason == (
        "the block is 4096 elements (32 registers a thread per row value at 4 warps), small enough to stay in registers"
    )


def test_a_kernel_without_a_row_reduction_is_left_to_a_smaller_block():
    unit = _unit(ROWS / "scale_rows.py", "scale_rows_kernel")
    reason = _declined(unit, {"BLOCK_SIZE": 16384})
    assert reason.startswith("the kernel reduces nothing over the row")
    assert "a smaller BLOCK_SIZE with more programs fixes it without a loop" in reason


def test_a_2d_block_is_declined():
    unit = _unit(ROWS / "row_sums_2d.py", "row_sums_2d_kernel")
    reason = _declined(unit, {"BLOCK_M": 4, "BLOCK_N": 8192})
    assert reason.startswith("the kernel indexes a block as 2-D or by position (`rows[:, None]`)")


def test_a_persistent_grid_with_a_loop_over_rows_is_declined():
    unit = _unit(LIGER, "_fused_add_rms_norm_backward_kernel")
    reason = _declined(unit, {"BLOCK_SIZE": 16384, "rows_per_program": 16, "casting_mode": 0})
    loop = next(i for i, line in enumerate(LIGER.read_text().splitlines(), 1) if "for row_idx in range(" in line)
    assert reason.startswith(f"line {loop} is a loop (`for row_idx in range(row_start, row_end):`)")
    assert "not a persistent grid's loop over rows" in reason


def _inline(body: str) -> CodeUnit:
    source = "@triton.jit\ndef row_kernel(X, Y, Out, n, BLOCK: tl.constexpr):\n" + textwrap.indent(body, "    ")
    return CodeUnit(name="row_kernel", qualname="row_kernel", file="/k.py", relpath="k.py", line=1, source=source)


HEAD = "row = tl.program_id(0)\ncols = tl.arange(0, BLOCK)\nx = tl.load(X + row * n + cols, mask=cols < n)\n"


@pytest.mark.parametrize(
    "body,tensors,reason",
    [
        (
            HEAD + "tl.store(Out + row, tl.sum(x, axis=0))\n",
            {"X": "int32"},
            "the row is loaded from `X`, whose recorded dtype is int32, and the recipe accumulates its "
            "reductions in floating point",
        ),
        (
            HEAD + "if n > 0:\n    tl.store(Out + row, tl.sum(x, axis=0))\n",
            {},
            "line 6 is an `if`, and the recipe rewrites straight-line kernels only",
        ),
        (
            HEAD + "s = 2.0\ny = x * s\ns = tl.sum(x, axis=0)\ntl.store(Y + row * n + cols, y + s, mask=cols < n)\n",
            {},
            "`s` is reassigned (line 8) between uses that the chunk loops would separate, so line 7 would "
            "read the other value",
        ),
        (
            HEAD + "tl.store(Y + cols, x)\ntl.store(Out + row, tl.sum(tl.load(Y + cols), axis=0))\n",
            {},
            "line 7 loads, for a row reduction, after the row store at line 6, and the chunked reductions "
            "would run before every store",
        ),
        (
            HEAD + "tl.store(Y + cols, tl.cumsum(x, axis=0))\n",
            {},
            "`tl.cumsum` (line 6) is not an elementwise operation or a full-row tl.sum/max/min the recipe "
            "can split into chunks",
        ),
        (
            HEAD + "tl.store(Out + row, tl.max(x, axis=0, keep_dims=True))\n",
            {},
            "`tl.max(x, axis=0, keep_dims=True)` (line 6) has arguments the recipe does not carry over (`keep_dims`)",
        ),
        (
            HEAD + "Y = Y + cols\ntl.store(Y, x / tl.sum(x, axis=0), mask=cols < n)\n",
            {},
            "`Y` holds a scalar and then a block of the row (line 6), which the chunk loops cannot keep apart",
        ),
    ],
    ids=["integer-row", "if", "reassigned", "store-then-load", "scan", "keep-dims", "pointer-becomes-row"],
)
def test_kernels_outside_the_pattern_are_declined_with_the_reason(body, tensors, reason):
    assert _declined(_inline(body), {"BLOCK": 16384}, tensors) == reason
