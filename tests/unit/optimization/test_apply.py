"""A candidate applied to the project's texts: imports beside the kernel (math, torch, triton, tl only) go to
the top of the file, so a launcher that needs `math` runs; any other import is refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from intelliperf.optimization.apply import apply_candidate
from intelliperf.rewriters import Candidate
from intelliperf.rewriters.source import ScopeError, code_unit
from intelliperf.rewriters.transcript import beside_code

PROGRAM = '''"""Doubles x."""
import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def double(x, block=128):
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


x = torch.arange(1000, dtype=torch.float32)
assert torch.equal(double(x), 2 * x)
print("ok")
'''
CEIL = (
    PROGRAM.split("def double(")[1]
    .split("\n\n\n")[0]
    .replace("triton.cdiv(x.numel(), block)", "math.ceil(x.numel() / block)")
)
LAUNCHER = "def double(" + CEIL + "\n"


def _units(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    return code_unit(tmp_path / "prog.py", "double_kernel", tmp_path), code_unit(
        tmp_path / "prog.py", "double", tmp_path
    )


@pytest.mark.slow
def test_an_import_of_math_beside_the_kernel_goes_to_the_top_and_the_program_runs(tmp_path):
    kernel, launcher = _units(tmp_path)
    module = beside_code(["import math\n"], {"double_kernel", "double"}, PROGRAM)
    assert module == "import math\n"
    text = apply_candidate(
        {"prog.py": PROGRAM}, kernel, launcher, Candidate(rewriter="t", title="t", launcher=LAUNCHER, module=module)
    )["prog.py"]
    assert "import triton.language as tl\nimport math\n" in text
    (tmp_path / "prog.py").write_text(text)
    done = subprocess.run(
        [sys.executable, "prog.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("imported", ["import os", "from math import ceil", "import numpy as np"])
def test_other_imports_beside_the_kernel_are_refused(tmp_path, imported):
    kernel, launcher = _units(tmp_path)
    cand = Candidate(rewriter="t", title="t", launcher=LAUNCHER, module=imported + "\n")
    with pytest.raises(ScopeError, match="beside the kernel"):
        apply_candidate({"prog.py": PROGRAM}, kernel, launcher, cand)
