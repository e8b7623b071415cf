"""memoryLocality recipe grouped-order on real GEMM kernels: each rewritten kernel is spliced into its
program, passes the source policy and the scope check, compiles for a GPU target, and computes in
the interpreter what the original computed, at sizes where the last group of row tiles is partial."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton
import triton.language as tl
from recipe_request import applied, recipe_request
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from intelliperf.rewriters import RewriteRequest
from intelliperf.rewriters.program_order import NotReorderable, grouped_order
from intelliperf.rewriters.source import code_unit
from intelliperf.validators.policy import check

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "programs" / "program_order"
_modules = itertools.count()


def _request(file: Path, kernel: str, launcher: str, root: Path = REPO) -> RewriteRequest:
    unit = code_unit(file, kernel, root)
    assert unit is not None
    return recipe_request(unit, code_unit(file, launcher, root), "memoryLocality")


def _rewritten(request: RewriteRequest, tmp_path: Path) -> tuple[Path, str]:
    """The program with the recipe's kernel spliced in, checked as the optimize loop checks a candidate."""
    kernel, launcher = grouped_order(request)
    assert launcher is None
    return applied(request, tmp_path, kernel), kernel


# Runs in a process of its own: Triton's interpreter must be on before triton is imported.
RUNNER = r"""
import importlib.util, inspect, json, sys, torch, triton.language as tl
original, rewritten, kernel, launcher, inputs, exact = sys.argv[1:7]

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

before, after = load(original, "before"), load(rewritten, "after")
real, launches = getattr(after, kernel), []

class Capture:
    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            launches.append((args, kwargs))
            return real[grid](*args, **kwargs)
        return launch

setattr(after, kernel, Capture())
torch.manual_seed(0)
values = eval(inputs)
fresh = lambda: [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
expected = getattr(before, launcher)(*fresh())
got = getattr(after, launcher)(*fresh())
torch.testing.assert_close(got, expected, **({"rtol": 0, "atol": 0} if exact == "exact" else {}))

def describe(value):
    if isinstance(value, torch.Tensor):
        return {"tensor": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, tl.dtype):
        return {"dtype": value.name}
    return {"value": value}

args, kwargs = launches[0]
options = {k: kwargs.pop(k) for k in ("num_warps", "num_stages") if k in kwargs}
bound = inspect.signature(real.fn).bind_partial(*args, **kwargs)
print("LAUNCH " + json.dumps({"args": {k: describe(v) for k, v in bound.arguments.items()}, "options": options}))
"""


def run_both(original: Path, rewritten: Path, kernel: str, launcher: str, inputs: str, exact: bool) -> dict:
    """Both programs' launchers on the same inputs (a Python expression, seed 0) in the interpreter,
    their outputs compared; the rewritten kernel's first launch, described for `compiles_for_gpu`."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUNNER,
            str(original),
            str(rewritten),
            kernel,
            launcher,
            inputs,
            "exact" if exact else "",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.split("LAUNCH ", 1)[1])


_POINTEE = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16", "int32": "*i32", "int64": "*i64"}


def compiles_for_gpu(path: Path, name: str, launch: dict) -> None:
    """Triton's real frontend and backend accept the kernel for cuda:90 (no GPU needed)."""
    spec = importlib.util.spec_from_file_location(f"_compiled_{next(_modules)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name)
    signature, constexprs = {}, {}
    for param in fn.params:
        described = launch["args"][param.name]
        if param.is_constexpr:
            value = described.get("value")
            signature[param.name] = "constexpr"
            constexprs[param.name] = tl.dtype(described["dtype"]) if "dtype" in described else value
        elif "tensor" in described:
            signature[param.name] = _POINTEE[described["tensor"]]
        else:
            signature[param.name] = "i32" if isinstance(described["value"], int) else "fp32"
    source = ASTSource(fn, signature, constexprs, {})
    triton.compile(source, target=GPUTarget("cuda", 90, 32), options=launch["options"])


def same_output(original: Path, rewritten: Path, request: RewriteRequest, inputs: str, exact: bool = False) -> None:
    """The launcher of both programs gives the same outputs in the interpreter (`exact`: to the bit), and
    the rewritten kernel compiles for a GPU target at its first launch. A new program order computes the
    same tiles the same way: its tests ask for equality to the bit."""
    assert request.launcher is not None
    launch = run_both(original, rewritten, request.kernel.name, request.launcher.name, inputs, exact=exact)
    compiles_for_gpu(rewritten, request.kernel.name, launch)


def test_grouped_order_on_the_tutorial_gemm(tmp_path):
    """5 x 3 tiles of 128: fewer row tiles than a group, so group_size_m is the remainder."""
    file = REPO / "benchmarks" / "fixes" / "triton_matmul_row_major_before.py"
    request = _request(file, "matmul_kernel", "matmul")
    path, kernel = _rewritten(request, tmp_path)
    assert "num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)" in kernel and "GROUP_M = 8" in kernel
    assert "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)" in kernel
    assert "pid_m = pid // num_pid_n" not in kernel
    inputs = "torch.randn(640, 96, dtype=torch.float16), torch.randn(96, 384, dtype=torch.float16)"
    same_output(file, path, request, inputs, exact=True)


def test_grouped_order_on_a_tuple_split_with_the_program_id_inline(tmp_path):
    """`tm, tn = pid // tl.cdiv(N, BN), pid % tl.cdiv(N, BN)`: the program id and the column tile count
    get names of their own; M comes from the masks (`rm < M`); 11 x 3 tiles, a full and a partial group."""
    file = PROGRAMS / "tuple_split.py"
    request = _request(file, "gemm_kernel", "gemm")
    path, kernel = _rewritten(request, tmp_path)
    assert "pid = tl.program_id(axis=0)" in kernel and "num_pid_n = tl.cdiv(N, BN)" in kernel
    assert "num_pid_m = tl.cdiv(M, BM)" in kernel
    assert "tm = first_pid_m + pid % num_pid_in_group % group_size_m" in kernel.replace("(", "").replace(")", "")
    same_output(file, path, request, "torch.randn(170, 24), torch.randn(24, 40)", exact=True)


def test_grouped_order_on_a_column_major_order(tmp_path):
    """`tile_n = pid // tiles_m`, `tile_m = pid - tile_n * tiles_m`: the column tile is the slow index,
    so the groups are of column tiles, their count from `offs_n < N`; 10 x 3 tiles."""
    file = PROGRAMS / "column_major.py"
    request = _request(file, "gemm_colmajor_kernel", "gemm_colmajor")
    path, kernel = _rewritten(request, tmp_path)
    assert "num_pid_m = tl.cdiv(N, BLOCK_N)" in kernel and "num_pid_in_group = GROUP_M * tiles_m" in kernel
    inputs = "torch.randn(40, 20, dtype=torch.float16), torch.randn(20, 150, dtype=torch.float16)"
    same_output(file, path, request, inputs, exact=True)


def test_new_names_do_not_collide_with_the_kernels(tmp_path):
    acc = "    acc = tl.zeros((BM, BN), dtype=tl.float32)\n"
    file = tmp_path / "collide.py"
    file.write_text((PROGRAMS / "tuple_split.py").read_text().replace(acc, "    group_id = 0\n    pid = 1\n" + acc))
    request = _request(file, "gemm_kernel", "gemm", root=tmp_path)
    kernel, _ = grouped_order(request)
    assert "pid_2 = tl.program_id(axis=0)" in kernel and "group_id_2 = pid_2 // num_pid_in_group" in kernel
    check(request.kernel.source, kernel, request.kernel.name, kernel=True)


@pytest.mark.parametrize(
    "file,kernel,launcher,reason",
    [
        (REPO / "benchmarks/corpus/triton_matmul_autotuned.py", "matmul_kernel", "matmul", "already grouped"),
        (REPO / "benchmarks/fixes/triton_matmul_row_major_after.py", "matmul_kernel", "matmul", "already grouped"),
        (PROGRAMS / "declines.py", "grid_2d_kernel", "grid_2d", "comes from a 2-D grid; swap to a 1-D grid first"),
        (PROGRAMS / "declines.py", "unbounded_kernel", "unbounded", "cannot derive the number of row tiles"),
        (REPO / "tests/programs/row_partials/column_sums.py", "scale_rows_kernel", "scale_rows", "no row-major"),
    ],
)
def test_grouped_order_declines_with_its_reason(file, kernel, launcher, reason):
    request = _request(file, kernel, launcher)
    with pytest.raises(NotReorderable, match=reason) as declined:
        grouped_order(request)
    assert str(declined.value).count(". ") == 0  # one sentence
