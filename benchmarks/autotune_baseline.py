"""Baseline: `triton.autotune` over the compile knobs of an example's kernel, timed against the original.

    python benchmarks/autotune_baseline.py [--time-only] EXAMPLE.py KERNEL [EXAMPLE ARGS...]

Runs the example once as written (its main(), or its `if __name__ == "__main__":` block, with its
own reference check) and keeps the first call of
the function that launches KERNEL with its inputs. Then times that call with the kernel as
written and with the kernel wrapped in `triton.autotune` over num_warps (1-16) and, when the
kernel has a loop, num_stages (1-4): the knobs a config can change without changing the grid.
Block sizes are left out because the launcher computes the grid from them. Both are timed with
`triton.testing.do_bench` (L2 flushed between runs, median), and the tuned output must equal
the original's (checked on a call after the tuning one: tuning runs every config into the same
output, which accumulating kernels add up). --time-only: only the kernel as written (how the
benchmark times the hand-written fixes, with the same method). Prints one JSON line.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import re
import sys
from pathlib import Path

WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4)


class _StripKnobs:
    """The autotuned kernel, launched like the original: the launcher's own num_warps/num_stages
    are dropped, as the config's values replace them."""

    def __init__(self, tuned) -> None:
        self.tuned = tuned

    def __getitem__(self, grid):
        launch = self.tuned[grid]
        return lambda *args, **kwargs: launch(
            *args, **{k: v for k, v in kwargs.items() if k not in ("num_warps", "num_stages")}
        )


def main() -> int:
    time_only = sys.argv[1] == "--time-only"
    program, kernel_name, *args = sys.argv[2:] if time_only else sys.argv[1:]
    path = Path(program).resolve()
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path), *args]
    module = importlib.import_module(path.stem)
    import torch
    import triton

    kernel = getattr(module, kernel_name)
    launcher_name = next(
        name
        for name, fn in vars(module).items()
        if inspect.isfunction(fn) and f"{kernel_name}[" in inspect.getsource(fn)
    )
    launcher = getattr(module, launcher_name)
    calls = []

    def spy(*a, **k):
        calls.append((a, k))
        return launcher(*a, **k)

    setattr(module, launcher_name, spy)
    _run_main(module, path)  # as written, with its own check
    setattr(module, launcher_name, launcher)
    a, k = calls[0]
    expected = launcher(*a, **k)
    original_ms = triton.testing.do_bench(lambda: launcher(*a, **k))
    if time_only:
        print(json.dumps({"original_ms": original_ms}))
        return 0
    jitted = [v for v in vars(module).values() if isinstance(v, triton.runtime.JITFunction)]  # helpers too
    loops = any(re.search(r"(?<![\w.])range\(|tl\.range\(", inspect.getsource(f.fn)) for f in jitted)
    configs = [triton.Config({}, num_warps=w, num_stages=s) for w in WARPS for s in (STAGES if loops else (3,))]
    tuned = triton.autotune(configs=configs, key=[])(kernel)
    setattr(module, kernel_name, _StripKnobs(tuned))
    launcher(*a, **k)  # tunes
    got = launcher(*a, **k)
    torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)
    tuned_ms = triton.testing.do_bench(lambda: launcher(*a, **k))
    print(
        json.dumps(
            {
                "original_ms": original_ms,
                "autotuned_ms": tuned_ms,
                "speedup": original_ms / tuned_ms,
                "configs": len(configs),
                "best": str(tuned.best_config),
            }
        )
    )
    return 0


def _run_main(module, path: Path) -> None:
    """The program's entry: its main(), or the body of its `if __name__ == "__main__":` block run in
    the module's namespace (so the spied launcher is the one it calls)."""
    if callable(getattr(module, "main", None)):
        module.main()
        return
    tree = ast.parse(path.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    exec(compile(ast.Module(body=block.body, type_ignores=[]), str(path), "exec"), vars(module))


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
