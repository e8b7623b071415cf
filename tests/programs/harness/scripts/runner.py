"""A suite-style harness: `python scripts/runner.py correctness` loads source/ops.py by its path
(importlib.util.spec_from_file_location, module_from_spec, exec_module) and checks it against torch."""

import importlib.util
import os
import sys

import torch

TASK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_FILE = os.path.join(TASK_DIR, "source", "ops.py")


def load_module():
    spec = importlib.util.spec_from_file_location("task_kernels", SOURCE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def correctness() -> None:
    ops = load_module()
    torch.manual_seed(0)
    big = torch.rand(1 << 18)
    torch.testing.assert_close(ops.scale(big), big * 2.0)
    for n in (4096, 3000):
        x = torch.rand(n)
        torch.testing.assert_close(ops.contended_sum(x), x.sum().reshape(1), rtol=1e-4, atol=1e-3)
    print("Correctness: PASS")


if __name__ == "__main__":
    if sys.argv[1:] != ["correctness"]:
        sys.exit("usage: runner.py correctness")
    correctness()
