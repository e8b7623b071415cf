"""A recipe's rewritten program against the original: both launchers on the same inputs in the
Triton interpreter (each comparison in a fresh Python), and the rewritten kernel compiled for a GPU
target at its first launch (no GPU needed)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from intelliperf.rewriters import RewriteRequest

_modules = itertools.count()


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
