"""Memory a launcher allocates without writing it, made NaN on the reference's side and unpredictable on a
candidate's (the replay workers).

`torch.empty` hands out whatever the allocator held. A launcher whose kernel leaves part of an output
unwritten at some shape (a block hard-coded at 256 columns, a row of 126,793) returns that memory, and two
runs of the same code then differ on garbage. On the reference's side every floating-point tensor
`torch.empty`, `empty_like`, `empty_strided` and `Tensor.new_empty` return starts as NaN: what the reference
leaves unwritten at an unseen shape shows as NaN from nowhere, and the trial is not compared (its sizes only
hold together as recorded), instead of a mismatch on garbage. Integer tensors of 16 bits or more start as a
sentinel (`INT_POISON`, cut to the width), the integers' NaN: an output the reference leaves partly unwritten
(ids past the ranges a cumulative count covers) holds it, not whatever the allocator held, which differs between
two processes on a GPU and made every candidate, an unchanged one too, a mismatch.

On a candidate's side each such tensor starts, drawn afresh per allocation, as zeros or as stale data (finite
values of a random spread, as memory a program freed holds), never NaN: what the candidate leaves unwritten
differs from the truth (nearly always), and fresh memory looks as it does in the user's program, so a
candidate cannot probe it to tell a validation from the program (integers: zeros or small stale values). Only on
a trial whose truth holds NaN or the sentinel from nowhere (the reference returned memory it never wrote) does
the candidate get them too (`fresh_as`): its unwritten memory then compares as the reference's did.

And as in the program, memory keeps what was left in it: a block of a size a candidate's `torch.empty*` was
handed before (of any dtype, booleans and bytes too) starts with what the last such block holds now, as the
allocator hands back the block a call freed. A launcher that keeps a counter, a mark or its last result in
fresh memory (state the source gate cannot see: no global, no attribute) then meets in the trials what it
meets in the program, and the trials judge the path that state selects (its second call on, the previous
result returned as it is): otherwise the mark would never survive a trial's allocation, and the candidate
could tell the trials from the program by it.

Imports torch.
"""

from __future__ import annotations

import functools
import random
from collections import OrderedDict

from ..compare import INT_POISON

_FILL = {"as": "nan"}  # how fresh memory starts for the next trial: "nan", "mixed" or "zeros" (see `fresh_as`)
# Per (bytes, device): the last block a candidate was handed ("mixed" trials), kept to hand its contents on; a
# block past KEPT_BYTES, or the oldest ones past that total, starts afresh instead (the GPU's room is the trials').
_KEPT: OrderedDict = OrderedDict()
KEPT_BYTES = 256 << 20


def fresh_as(fill: str) -> None:
    """On a candidate's side, for what runs next: `mixed` (zeros or stale values, drawn per allocation), `nan`
    (as the reference had, where its truth holds memory it never wrote) or `zeros` (the no-op-kernels call:
    stale values there could match the truth by chance, zeros never match the nonzero values it looks at,
    and a third of the mixed fills are zeros too, so a candidate cannot tell that call by them)."""
    _FILL["as"] = fill


def poison_empty(candidate: bool = False) -> None:
    """Patch torch's empty allocators as the module docstring says (before any candidate is imported)."""
    import torch

    draw = random.SystemRandom()  # (no state a candidate could read or seed)

    _FILL["as"] = "mixed" if candidate else "nan"

    def fill(tensor) -> None:
        how = _FILL["as"] if candidate else "nan"
        if how == "mixed" and handed_back(tensor):
            return
        floating = tensor.is_floating_point() or tensor.is_complex()
        if not floating and int_poison(tensor.dtype) is None:
            return  # (booleans and bytes as the allocator left them: too few values for a sentinel)
        if how == "nan":
            tensor.fill_(float("nan") if floating else int_poison(tensor.dtype))
        elif how == "zeros" or draw.randrange(3) == 0:
            tensor.zero_()
        else:
            stale = torch.Generator(device=tensor.device).manual_seed(draw.getrandbits(62))  # (not the program's)
            if floating:
                tensor.normal_(0.0, draw.uniform(1.0, 1000.0), generator=stale)
            else:
                tensor.random_(-1000, 1000, generator=stale)

    def poisoned(allocate):
        @functools.wraps(allocate)
        def allocated(*args, **kwargs):
            tensor = allocate(*args, **kwargs)
            if isinstance(tensor, torch.Tensor):
                fill(tensor)
            return tensor

        return allocated

    for name in ("empty", "empty_like", "empty_strided"):
        setattr(torch, name, poisoned(getattr(torch, name)))
    torch.Tensor.new_empty = poisoned(torch.Tensor.new_empty)  # type: ignore[method-assign]


def int_poison(dtype) -> int | None:
    """The sentinel for a signed integer dtype of 16 bits or more (`INT_POISON` cut to its width); None for
    floats, booleans and bytes (too few values to keep one apart)."""
    import torch

    if dtype in (torch.int32, torch.int64):
        return INT_POISON
    return -0x5A5A if dtype == torch.int16 else None


def handed_back(tensor) -> bool:
    """Whether `tensor` now holds what the last block of its size a candidate was handed holds (then it is that
    size's last block); False for a size not handed out before, which starts as fresh memory does."""
    storage = tensor.untyped_storage()
    key = (storage.nbytes(), str(tensor.device))
    last = _KEPT.pop(key, None)
    if last is not None:
        storage.copy_(last.untyped_storage())
    if 0 < key[0] <= KEPT_BYTES:
        _KEPT[key] = tensor
        while sum(size for size, _ in _KEPT) > KEPT_BYTES:
            _KEPT.popitem(last=False)
    return last is not None
