"""The launch recorder's tallies: launches and time per kernel and per launch signature, and the
hashable key (and JSON) a launch's arguments give its signature.

Runs inside the user's program with the recorder: the standard library only.
"""

from __future__ import annotations

MAX_SIGNATURES = 32  # distinct signatures kept per kernel; launches of others count as dropped


class Counts:
    """Launches, and the time of those that were timed; totals are scaled up from them."""

    __slots__ = ("launches", "timed", "timed_s")

    def __init__(self):
        self.launches, self.timed, self.timed_s = 0, 0, 0.0

    def total(self) -> float:
        return self.timed_s * self.launches / self.timed if self.timed else 0.0


class SignatureTally(Counts):
    __slots__ = ("grid", "num_warps", "num_stages", "args", "tuning")

    def __init__(self, grid, num_warps, num_stages, args):
        super().__init__()
        self.grid, self.num_warps, self.num_stages, self.args = grid, num_warps, num_stages, args
        self.tuning = 0  # launches by triton.autotune's benchmarking of configs


class KernelTally(Counts):
    __slots__ = ("name", "file", "line", "signatures", "dropped", "traced", "deferred", "static", "sass_lines")

    def __init__(self, name: str, file: str | None, line: int | None) -> None:
        super().__init__()
        self.name, self.file, self.line = name, file, line
        self.signatures: dict[tuple, SignatureTally] = {}
        self.dropped = 0
        self.traced: dict | None = None
        self.deferred = 0  # launches whose inputs were saved for a trace after the run (trace_worker)
        self.static: dict | None = None
        self.sass_lines: list | None = None

    def as_dict(self) -> dict:
        sigs = sorted(self.signatures.values(), key=lambda s: -s.launches)
        return {
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "launches": self.launches,
            "timed_launches": self.timed,
            "total_time_s": self.total(),
            "signatures_dropped": self.dropped,
            "signatures": [
                {
                    "grid": list(s.grid),
                    "num_warps": s.num_warps,
                    "num_stages": s.num_stages,
                    "args": s.args,
                    "launches": s.launches,
                    "tuning_launches": s.tuning,
                    "total_time_s": s.total(),
                }
                for s in sigs
            ],
            "trace": self.traced,
            "static": self.static,
            "sass_lines": self.sass_lines,
        }


def arg_key(value, is_constexpr, tensor_type):
    """A hashable description of one argument. Called for every argument of every launch, so it
    keeps torch's own objects (dtype, Size, device) and turns them into text only once per
    distinct signature (arg_dict)."""
    if is_constexpr:
        return ("constexpr", plain(value))
    if value is None:
        return ("none",)
    if isinstance(value, tensor_type):
        return ("tensor", value.dtype, value.shape, value.stride(), value.device)
    if isinstance(value, (bool, int, float)):
        return ("scalar", value)
    return ("other", type(value).__name__)


def plain(value):
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def arg_dict(name, key) -> dict:
    kind = key[0]
    if kind == "tensor":
        return {
            "name": name,
            "kind": kind,
            "dtype": str(key[1]).replace("torch.", ""),
            "shape": list(key[2]),
            "strides": list(key[3]),
            "device": str(key[4]),
        }
    if kind in ("scalar", "constexpr"):
        return {"name": name, "kind": kind, "value": key[1]}
    if kind == "other":
        return {"name": name, "kind": kind, "type_name": key[1]}
    return {"name": name, "kind": kind}
