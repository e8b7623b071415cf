"""CUDA graphs in the user's program: graphs made, captures, replays, and the launches made while capturing.

A kernel replayed from a graph never passes through Triton's launch path again, so the recorder sees
it once, while the graph is captured, and never at a replay; timing events recorded into a capture
would be replayed with it, so launches made while capturing are counted and left untimed. Without a
GPU there are no graphs at all (torch's CPU build refuses to make one): a harness that times through
CUDA graphs then takes its fallback or stops. What is counted here, and the source lines that make a
graph, go into the process's record (`tally()`), for the report to say what was and was not timed.

Imports only the standard library; patched into `torch.cuda.graphs` when torch is imported.
"""

from __future__ import annotations

import re
import sys

COUNTS = {"made": 0, "refused": 0, "captures": 0, "replays": 0, "launches_in_capture": 0}
CAPTURING = [0]  # captures under way in this process (a launch now is recorded into a graph)
# A graph made or captured in Python source: torch.cuda.graph(...), CUDAGraph(), make_graphed_callables(
SOURCE = re.compile(r"\btorch\.cuda\.graph\(|\bCUDAGraph\(|\bmake_graphed_callables\(")
MAX_SITES = 5


def install(graphs_module) -> None:
    """Wrap CUDAGraph's construction, capture_begin/capture_end and replay (once per process)."""
    cls = graphs_module.CUDAGraph
    if getattr(cls, "__intelliperf_graphs__", False):
        return
    original_new = cls.__new__

    def __new__(kind, *args, **kwargs):
        try:
            made = original_new(kind, *args, **kwargs)
        except Exception:
            COUNTS["refused"] += 1  # no CUDA (torch's CPU build): "dummy base class CUDAGraph"
            raise
        COUNTS["made"] += 1
        return made

    cls.__new__ = staticmethod(__new__)
    _around(cls, "capture_begin", before=_begin)
    _around(cls, "capture_end", after=_end)
    _around(cls, "replay", before=lambda: COUNTS.__setitem__("replays", COUNTS["replays"] + 1))
    cls.__intelliperf_graphs__ = True


def _begin() -> None:
    COUNTS["captures"] += 1
    CAPTURING[0] += 1


def _end() -> None:
    CAPTURING[0] = max(0, CAPTURING[0] - 1)


def _around(cls, name: str, before=None, after=None) -> None:
    original = getattr(cls, name, None)
    if original is None:
        return

    def method(self, *args, **kwargs):
        if before:
            before()
        try:
            return original(self, *args, **kwargs)
        finally:
            if after:
                after()

    method.__name__ = name
    setattr(cls, name, method)


def launched() -> None:
    """A Triton launch: counted as captured into a graph when a capture is under way."""
    if CAPTURING[0]:
        COUNTS["launches_in_capture"] += 1


def capturing() -> bool:
    return CAPTURING[0] > 0


def sites(files: list[str]) -> list[str]:
    """`file:line` of the first lines in `files` (the main script, the kernels' files) that make a CUDA graph."""
    found: list[str] = []
    for path in dict.fromkeys(f for f in files if f and f.endswith(".py")):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    if SOURCE.search(line) and not line.lstrip().startswith("#"):
                        found.append(f"{path}:{number}")
                        if len(found) >= MAX_SITES:
                            return found
        except OSError:
            continue
    return found


def tally(kernel_files: list[str]) -> dict | None:
    """The process's graph counts and graph-making source lines; None when it has neither."""
    main = sys.argv[0] if sys.argv and sys.argv[0] else ""
    where = sites([main, *kernel_files])
    if not where and not any(COUNTS.values()):
        return None
    return {**COUNTS, "sites": where}
