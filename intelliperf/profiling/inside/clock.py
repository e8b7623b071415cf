"""Device events around each launch, at the lowest cost we can get.

On NVIDIA the CUDA driver API is called through ctypes: an event record costs about a
microsecond and lands on the exact stream Triton launched on (the hook's metadata names it).
Elsewhere (ROCm builds of torch) torch's events on the current stream do the same job.
"""

from __future__ import annotations

import ctypes

_NOT_READY = 600  # CUDA_ERROR_NOT_READY


class DriverEvents:
    def __init__(self) -> None:
        lib = ctypes.CDLL("libcuda.so.1")
        p = ctypes.c_void_p
        self._create = _fn(lib, "cuEventCreate", [ctypes.POINTER(p), ctypes.c_uint])
        self._record = _fn(lib, "cuEventRecord", [p, p])
        self._query = _fn(lib, "cuEventQuery", [p])
        self._sync = _fn(lib, "cuEventSynchronize", [p])
        name = "cuEventElapsedTime_v2" if hasattr(lib, "cuEventElapsedTime_v2") else "cuEventElapsedTime"
        self._elapsed = _fn(lib, name, [ctypes.POINTER(ctypes.c_float), p, p])

    def new(self):
        event = ctypes.c_void_p()
        _check(self._create(ctypes.byref(event), 0), "cuEventCreate")
        return event.value

    def record(self, event, stream) -> None:
        _check(self._record(event, stream or None), "cuEventRecord")

    def done(self, event) -> bool:
        status = self._query(event)
        if status not in (0, _NOT_READY):
            _check(status, "cuEventQuery")
        return status == 0

    def wait(self, event) -> None:
        _check(self._sync(event), "cuEventSynchronize")

    def elapsed_s(self, start, end) -> float:
        ms = ctypes.c_float()
        _check(self._elapsed(ctypes.byref(ms), start, end), "cuEventElapsedTime")
        return ms.value / 1e3


class TorchEvents:
    def __init__(self) -> None:
        import torch

        self._cuda = torch.cuda

    def new(self):
        return self._cuda.Event(enable_timing=True)

    def record(self, event, stream) -> None:
        event.record()

    def done(self, event) -> bool:
        return event.query()

    def wait(self, event) -> None:
        event.synchronize()

    def elapsed_s(self, start, end) -> float:
        return start.elapsed_time(end) / 1e3


def device_events():
    try:
        return DriverEvents()
    except (OSError, AttributeError):
        return TorchEvents()


def _fn(lib, name, argtypes):
    fn = getattr(lib, name)
    fn.argtypes, fn.restype = argtypes, ctypes.c_int
    return fn


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with CUDA error {status}")
