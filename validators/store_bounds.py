"""Out-of-bounds stores under Triton's interpreter, made errors (the replay workers, both sides).

On a CPU the interpreter runs a kernel on the tensors' own memory: a store past a buffer's end writes
into whatever lies beside it, silently (on a GPU compute-sanitizer's memcheck sees it). Here every
store and atomic of an interpreted launch must land inside the storage of one of the launch's tensor
arguments; one that does not raises `OutOfBounds`, so the trial fails with the reason.

Imports numpy, and Triton's interpreter module when installed.
"""

from __future__ import annotations

import numpy as np


class OutOfBounds(Exception):
    """A store of an interpreted kernel outside every tensor argument's storage."""


_SPANS: list[list[tuple[int, int]]] = []  # per launch in progress: the storages' [first byte, past the last)


def _storage_span(value) -> tuple[int, int] | None:
    tensor = value if hasattr(value, "untyped_storage") else getattr(value, "base", None)
    if tensor is None or not hasattr(tensor, "untyped_storage"):
        return None
    storage = tensor.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def _check(ptrs, mask, itemsize: int, what: str) -> None:
    if not _SPANS:
        return
    addresses = np.atleast_1d(np.asarray(ptrs.data, dtype=np.uint64))
    if mask is not None:
        addresses = addresses[np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)]
    if addresses.size == 0:
        return
    inside = np.zeros(addresses.shape, dtype=bool)
    for first, past in _SPANS[-1]:
        inside |= (addresses >= first) & (addresses + itemsize <= past)
    if not inside.all():
        raise OutOfBounds(
            f"{what} at {int((~inside).sum())} addresses outside every tensor argument of the launch: an "
            "out-of-bounds write (a mask or a bound that does not hold at this shape)"
        )


def guard_stores(interpreter) -> None:
    """Patch `triton.runtime.interpreter`: each launch records its arguments' storages, and every masked
    store, atomic read-modify-write and compare-and-swap is checked against them."""
    executor, builder = interpreter.GridExecutor, interpreter.InterpreterBuilder
    call, store = executor.__call__, builder.create_masked_store
    rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas

    def guarded_call(self, *args, **kwargs):
        _SPANS.append([s for s in map(_storage_span, [*args, *kwargs.values()]) if s is not None])
        try:
            return call(self, *args, **kwargs)
        finally:
            _SPANS.pop()

    def masked_store(self, ptrs, value, mask, cache_policy):
        _check(ptrs, mask, np.asarray(value.data).itemsize, "a store")
        return store(self, ptrs, value, mask, cache_policy)

    def atomic_rmw(self, op, ptr, val, mask, sem, scope):
        _check(ptr, mask, np.asarray(val.data).itemsize, "an atomic")
        return rmw(self, op, ptr, val, mask, sem, scope)

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        _check(ptr, None, np.asarray(val.data).itemsize, "an atomic compare-and-swap")
        return cas(self, ptr, cmp, val, sem, scope)

    executor.__call__ = guarded_call
    builder.create_masked_store = masked_store
    builder.create_atomic_rmw = atomic_rmw
    builder.create_atomic_cas = atomic_cas
