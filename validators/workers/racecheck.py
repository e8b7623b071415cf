"""compute-sanitizer's racecheck on the first CTAs of each launch, where a race can only be the compiler's.

racecheck looks for hazards on shared memory, which belongs to one CTA: a CTA's race shows in that CTA
alone. A kernel written in `tl.*` without atomics or inline assembly gets its shared-memory accesses and
their barriers from Triton's compiler, the same code in every CTA; a missing barrier there (a compiler or
pipelining bug) shows in the first CTAs as in all. racecheck's cost grows with the CTAs it instruments
(a 4096^3 GEMM's 1,024 CTAs: 33 s on the H100), so in the racecheck worker such a kernel runs on its first
CTAs only, one per SM by default. A kernel with inline assembly (its own shared-memory accesses, possibly
only in some CTAs) or with atomics (a CTA may wait for another's flag; one not launched would never set it)
runs on its full grid.

What this does not change: the sanitizers run in the candidate's own processes, so they catch its
mistakes, not its intent (a candidate can tell it runs under compute-sanitizer and launch something else
there); the outputs of every dispatch, compared by the parent, are what a wrong answer cannot get past.

Imports only triton (and torch for the SM count), inside the worker.
"""

from __future__ import annotations

import functools
import math

CAPPED: dict[str, list[int]] = {}  # kernel name -> [CTAs of its largest launch, CTAs run of it]
FULL: dict[str, str] = {}  # kernel name -> why it ran on its full grid


def capped(grid: tuple[int, ...], limit: int) -> tuple[int, ...]:
    """The first CTAs of `grid` (x, then y, then z), at most `limit` of them."""
    out, room = [], limit
    for size in grid:
        take = min(size, room)  # an empty launch stays empty
        out.append(take)
        room = max(1, room // max(1, take))
    return tuple(out)


def why_full_grid(ttir: str) -> str | None:
    """Why a compiled kernel (its Triton IR) must run on every CTA under racecheck, or None."""
    if "tt.elementwise_inline_asm" in ttir:
        return "inline assembly"
    if "tt.atomic_" in ttir:
        return "atomics"
    return None


def cap_grids(limit: int | None) -> None:
    """Every later Triton launch in this process on its first `limit` CTAs (None: one per SM of the device),
    unless `why_full_grid`; what was capped is kept in CAPPED and FULL for `notes`."""
    from triton.runtime.jit import JITFunction

    run = JITFunction.run

    def run_capped(self, *args, grid, warmup, **kwargs):
        if warmup:
            return run(self, *args, grid=grid, warmup=True, **kwargs)
        compiled = run(self, *args, grid=grid, warmup=True, **kwargs)  # compiles it; the launch hits the cache
        name = getattr(self, "__name__", "kernel")
        ttir = compiled.asm.get("ttir") if compiled is not None else None
        why = "its Triton IR not at hand" if ttir is None else why_full_grid(ttir)
        if why:
            FULL[name] = why
            return run(self, *args, grid=grid, warmup=False, **kwargs)

        def first_ctas(bound_args):
            full = tuple(grid(bound_args) if callable(grid) else grid)
            small = capped(full, limit or _sm_count())
            seen = CAPPED.setdefault(name, [0, 0])
            seen[0], seen[1] = max(seen[0], math.prod(full)), max(seen[1], math.prod(small))
            return small

        return run(self, *args, grid=first_ctas, warmup=False, **kwargs)

    JITFunction.run = run_capped


def notes() -> list[str]:
    """What racecheck instrumented, per kernel, for the verdict's check."""
    said = [
        f"racecheck ran {name} on its first {ran:,} of {full:,} CTAs (no inline assembly or atomics: a race "
        f"would be the compiler's, the same in every CTA)"
        for name, (full, ran) in sorted(CAPPED.items())
        if ran < full
    ]
    return said + [f"racecheck ran {name} on every CTA ({why})" for name, why in sorted(FULL.items())]


@functools.cache
def _sm_count() -> int:
    """The device's SMs, asked at the first launch: the worker may not make its CUDA context before its job
    comes (INTELLIPERF_CUDA_LATE, no room beside the program run)."""
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
