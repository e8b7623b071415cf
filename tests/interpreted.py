"""Two programs' launchers on the same inputs, each in a fresh Python under TRITON_INTERPRET=1.

A test process that has compiled kernels for a GPU target, or run others in the interpreter, keeps
parts of triton.language swapped; a kernel interpreted there afterwards can fail for that reason
alone ("Cannot call @triton.jit'd outside of the scope of a kernel"). A process of its own runs
each comparison as a user's program would run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

RUNNER = r"""
import importlib.util, sys, torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

original, rewritten, launcher, inputs_file = sys.argv[1:5]
inputs = torch.load(inputs_file)
outputs = []
for side, path in enumerate((original, rewritten)):
    fresh = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]  # some kernels write in place
    out = getattr(load(path, f"side_{side}"), launcher)(*fresh)
    outputs.append(out if isinstance(out, tuple) else (out,))
for want, got in zip(*outputs, strict=True):
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
print("same outputs")
"""


def same_outputs(original: Path, rewritten: Path, launcher: str, *inputs) -> None:
    """`launcher(*inputs)` of both programs gives the same outputs (torch.testing.assert_close)."""
    with tempfile.TemporaryDirectory(prefix="intelliperf-test-") as tmp:
        saved = Path(tmp) / "inputs.pt"
        torch.save(list(inputs), saved)
        done = subprocess.run(
            [sys.executable, "-c", RUNNER, str(original), str(rewritten), launcher, str(saved)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "TRITON_INTERPRET": "1"},
        )
    assert done.returncode == 0 and "same outputs" in done.stdout, done.stderr[-3000:]
