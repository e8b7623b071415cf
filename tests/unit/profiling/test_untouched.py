"""The watch on what the checks inside a candidate's process read results through
(profiling/inside/untouched.py): every name a candidate could replace is named, whatever it is."""

from __future__ import annotations

import subprocess
import sys

import numpy  # noqa: F401  (watched where imported)
import pytest
import torch
import triton  # noqa: F401

from intelliperf.profiling.inside.untouched import Watch, replaced_message


def _owners() -> list[tuple[str, object]]:
    """(label, the module or class whose dictionary the watch snapshots)."""
    owners: list[tuple[str, object]] = [(name, sys.modules[name]) for name in ("torch", "builtins", "triton")]
    owners += [("torch.Tensor", torch.Tensor)] + [
        (f"{cls.__module__}.{cls.__qualname__}", cls) for cls in torch.Tensor.__mro__[1:-1]
    ]
    return owners


def test_every_replaced_name_of_torch_tensor_triton_and_builtins_is_named():
    watch = Watch()
    assert watch.replaced() == []
    sentinel, put = object(), setattr  # (bound: builtins.setattr is among the names replaced)
    tried, wrong = 0, []
    for label, owner in _owners():
        for name, value in [(n, v) for n, v in vars(owner).items() if not n.startswith("_")]:
            try:
                put(owner, name, sentinel)
            except (AttributeError, TypeError):  # read-only slots: nothing a candidate could replace either
                continue
            found = watch.replaced()
            put(owner, name, value)
            tried += 1
            if found != [f"{label}.{name}"]:
                wrong.append((label, name, found))
    assert not wrong and tried > 1000 and watch.replaced() == [], (wrong[:5], tried)


def test_private_state_torch_changes_as_it_runs_is_not_watched():
    watch = Watch()
    saved = torch.cuda._initialized
    torch.cuda._initialized = not saved  # what a program's first CUDA call does
    try:
        assert watch.replaced() == []
    finally:
        torch.cuda._initialized = saved


def test_a_deleted_name_is_named_and_additions_are_not():
    watch = Watch()
    torch.Tensor.intelliperf_added = 1  # a program may add attributes of its own
    try:
        assert watch.replaced() == []
    finally:
        del torch.Tensor.intelliperf_added
    detach = torch.Tensor.detach
    del torch.Tensor.detach
    try:
        assert watch.replaced() == ["torch.Tensor.detach"]
    finally:
        torch.Tensor.detach = detach
    assert "torch.Tensor.detach" in replaced_message(["torch.Tensor.detach"])


@pytest.mark.slow
def test_a_program_that_patches_nothing_changes_nothing_under_the_interpreter(tmp_path):
    program = tmp_path / "p.py"
    program.write_text(
        "import torch, triton, triton.language as tl\n"
        "from intelliperf.profiling.inside.untouched import Watch\n"
        "watch = Watch()\n"
        "@triton.jit\n"
        "def k(x, y, n, BLOCK: tl.constexpr):\n"
        "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.atomic_add(y + o * 0, tl.load(x + o, mask=o < n), mask=o < n)\n"
        "x, y = torch.randn(1000), torch.zeros(1000)\n"
        "k[(16,)](x, y, 1000, BLOCK=64)\n"
        "torch.save({'y': y.detach().to('cpu', copy=True)}, 'y.pt')\n"
        "print(watch.replaced())\n"
    )
    done = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path,
        env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
