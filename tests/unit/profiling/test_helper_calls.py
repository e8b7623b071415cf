"""Jit helpers under the interpreter: triton.language patched once a launch, not at every helper call, with
the same results (a kernel that calls helpers in a loop, and one launched after another)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import sys, time
    import torch, triton, triton.language as tl
    from triton.runtime import interpreter

    patched = []  # Triton's own patching, done
    real = interpreter._patch_lang
    interpreter._patch_lang = lambda fn: (patched.append(fn.__name__), real(fn))[1]
    if sys.argv[1] == "once":
        from intelliperf.profiling.inside.helper_calls import patch_once_per_launch

        patch_once_per_launch(interpreter)

    @triton.jit
    def scaled(x, s):
        return x * s

    @triton.jit
    def twice(x):
        return scaled(x, 2.0)

    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for _ in range(3):
            acc += twice(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
        tl.store(out_ptr + offs, acc, mask=offs < n)

    x = torch.arange(100, dtype=torch.float32)
    for launch in range(2):
        out = torch.empty_like(x)
        kernel[(4,)](x, out, x.numel(), BLOCK=32)
        torch.testing.assert_close(out, 6 * x)
    print(len(patched))
    """
)


def _patches(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        env={**os.environ, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


@pytest.mark.slow
def test_helpers_patch_the_language_once_a_launch_with_the_same_results():
    # as Triton does it: each launch patches, and so does every helper call (2 a step, 3 steps, 4 programs)
    assert _patches("every") >= 2 * (1 + 2 * 3 * 4)
    # once a launch for each set of language modules a function sees: the kernel's (triton.language) and
    # tl.zeros's (triton.language.core); the second launch again, after the first restored the modules
    assert _patches("once") == 2 * 2
