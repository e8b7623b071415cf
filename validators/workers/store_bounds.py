"""Out-of-bounds stores under Triton's interpreter, made errors, and stores that race, counted (the replay
workers, both sides).

On a CPU the interpreter runs a kernel on the tensors' own memory: a store past a buffer's end writes
into whatever lies beside it, silently (on a GPU compute-sanitizer's memcheck sees it). Here every
store and atomic of an interpreted launch must land inside the storage of one of the launch's tensor
arguments; one that does not raises `OutOfBounds`, so the trial fails with the reason.

The interpreter also runs a launch's programs one after another, so a read-modify-write without an atomic
(a plain load, an add, a plain store) gets every update there and loses some on a GPU. A launch in which
two programs store different values at one address with plain stores, and that takes no lock (no
compare-and-swap or exchange), races: `take_races` says so after the call, for the trial to compare
with the reference's.

Imports numpy, and Triton's interpreter module when installed.
"""

from __future__ import annotations

import numpy as np


class OutOfBounds(Exception):
    """A store of an interpreted kernel outside every tensor argument's storage."""


# per launch in progress: its storages' [first byte, past the last) ("spans"); its plain stores' addresses,
# programs and values; whether it took a lock
_LAUNCHES: list[dict] = []
_RACES: list[str] = []  # launches since the last `take_races` in which programs' plain stores conflicted
STORES_KEPT = 1 << 24  # plain-store elements a launch's race check keeps at most (memory, not a sample)


def take_races() -> list[str]:
    """The racing launches since the last call (a line each), forgotten once read."""
    found = list(_RACES)
    _RACES.clear()
    return found


def _log_store(builder, ptrs, value, mask) -> None:
    log = _LAUNCHES[-1] if _LAUNCHES else None
    if log is None or log["kept"] > STORES_KEPT:
        return
    addresses = np.atleast_1d(np.asarray(ptrs.data, dtype=np.uint64))
    values = np.broadcast_to(np.asarray(value.data), addresses.shape)
    bits = values.view(f"u{values.itemsize}")  # (Triton's element types are 1, 2, 4 or 8 bytes)
    if mask is not None:
        keep = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        addresses, bits = addresses[keep], bits[keep]
    x, y, z = builder.grid_idx
    log["addresses"].append(addresses.reshape(-1))
    log["values"].append(bits.reshape(-1).astype(np.uint64))
    log["programs"].append(np.full(addresses.size, (x << 42) | (y << 21) | z, dtype=np.uint64))
    log["kept"] += addresses.size


def _conflicts(log: dict) -> int:
    """Addresses two programs stored different values at."""
    if log["locked"] or not log["addresses"]:
        return 0
    addresses = np.concatenate(log["addresses"])
    if addresses.size < 2:
        return 0
    values, programs = np.concatenate(log["values"]), np.concatenate(log["programs"])
    order = np.argsort(addresses, kind="stable")
    addresses, values, programs = addresses[order], values[order], programs[order]
    starts = np.flatnonzero(np.r_[True, addresses[1:] != addresses[:-1]])
    differ = np.minimum.reduceat(values, starts) != np.maximum.reduceat(values, starts)
    shared = np.minimum.reduceat(programs, starts) != np.maximum.reduceat(programs, starts)
    return int((differ & shared).sum())


def _storage_span(value) -> tuple[int, int] | None:
    tensor = value if hasattr(value, "untyped_storage") else getattr(value, "base", None)
    if tensor is None or not hasattr(tensor, "untyped_storage"):
        return None
    storage = tensor.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def _check(ptrs, mask, itemsize: int, what: str) -> None:
    if not _LAUNCHES:
        return
    addresses = np.atleast_1d(np.asarray(ptrs.data, dtype=np.uint64))
    if mask is not None:
        addresses = addresses[np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)]
    if addresses.size == 0:
        return
    inside = np.zeros(addresses.shape, dtype=bool)
    for first, past in _LAUNCHES[-1]["spans"]:
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
        spans = [s for s in map(_storage_span, [*args, *kwargs.values()]) if s is not None]
        _LAUNCHES.append({"spans": spans, "addresses": [], "values": [], "programs": [], "kept": 0, "locked": False})
        try:
            result = call(self, *args, **kwargs)
            found = _conflicts(_LAUNCHES[-1])
            if found:
                name = getattr(getattr(self, "fn", None), "__name__", "a kernel")
                _RACES.append(f"{name}: programs stored different values at {found} addresses with plain stores")
            return result
        finally:
            _LAUNCHES.pop()

    def masked_store(self, ptrs, value, mask, cache_policy):
        _check(ptrs, mask, np.asarray(value.data).itemsize, "a store")
        _log_store(self, ptrs, value, mask)
        return store(self, ptrs, value, mask, cache_policy)

    def atomic_rmw(self, op, ptr, val, mask, sem, scope):
        _check(ptr, mask, np.asarray(val.data).itemsize, "an atomic")
        if _LAUNCHES and "XCHG" in str(op).upper():
            _LAUNCHES[-1]["locked"] = True
        return rmw(self, op, ptr, val, mask, sem, scope)

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        _check(ptr, None, np.asarray(val.data).itemsize, "an atomic compare-and-swap")
        if _LAUNCHES:
            _LAUNCHES[-1]["locked"] = True
        return cas(self, ptr, cmp, val, sem, scope)

    executor.__call__ = guarded_call
    builder.create_masked_store = masked_store
    builder.create_atomic_rmw = atomic_rmw
    builder.create_atomic_cas = atomic_cas
