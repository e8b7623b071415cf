"""Memory a launcher allocates without writing it, made NaN (the replay workers, both sides).

`torch.empty` hands out whatever the allocator held. A launcher whose kernel leaves part of an output
unwritten at some shape (a block hard-coded at 256 columns, a row of 126,793) returns that memory, and two
runs of the same code then differ on garbage. Here every floating-point tensor `torch.empty`,
`empty_like`, `empty_strided` and `Tensor.new_empty` return starts as NaN: what the reference leaves
unwritten at an unseen shape shows as NaN from nowhere, and the trial is not compared (its sizes only hold
together as recorded), instead of a mismatch on garbage.

Imports torch.
"""

from __future__ import annotations

import functools


def poison_empty() -> None:
    """Patch torch's empty allocators as the module docstring says (before any candidate is imported)."""
    import torch

    def poisoned(allocate):
        @functools.wraps(allocate)
        def allocated(*args, **kwargs):
            tensor = allocate(*args, **kwargs)
            if isinstance(tensor, torch.Tensor) and (tensor.is_floating_point() or tensor.is_complex()):
                tensor.fill_(float("nan"))
            return tensor

        return allocated

    for name in ("empty", "empty_like", "empty_strided"):
        setattr(torch, name, poisoned(getattr(torch, name)))
    torch.Tensor.new_empty = poisoned(torch.Tensor.new_empty)  # type: ignore[method-assign]
