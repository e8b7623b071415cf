"""memoryAccess recipe `tile-strided-reduction`: reduce or scan a strided axis a tile of columns at a time.

The textbook case walks one column (or any axis whose elements are `stride` apart) with a loop
and reduces or scans along it: `col = tl.program_id(0)`, then `for start in range(0, M, BLOCK)`
loads `X + rows * stride + col` with `rows = start + tl.arange(0, BLOCK)`, accumulates it
(`acc += x`, `acc = tl.maximum(acc, x)`, `total += tl.sum(x)`) and stores `tl.sum(acc)` at
`Out + col`. Every lane of a warp reads another row, one element per 32-byte sector. The recipe
gives each program TILE consecutive columns: the program index becomes the `[1, TILE]` vector
`pid * TILE + tl.arange(0, TILE)`, every `tl.arange` a `[BLOCK, 1]` one, so each load along the
walk is a `[BLOCK, TILE]` block whose rows are contiguous and coalesce. Each column of the tile
computes what its program computed before:

* accumulators the loop carries (`tl.zeros`, `tl.full` or a constant before the loop) widen to
  `[BLOCK, TILE]` (a vector accumulator) or `[1, TILE]` (a scalar one);
* `tl.sum/max/min` reduce along axis 0 with `keep_dims=True`, one result per column;
* `tl.cumsum/cumprod` scan along axis 0, so a chunked scan with a carried running total works;
* loads and stores that use the program index are masked against its extent.

The launcher's grid along that axis becomes `triton.cdiv(extent, TILE)`; the extent is the
kernel argument the launch passes the grid size to, or a new keyword parameter when it passes
none. When a `[BLOCK, TILE]` tile would be too large the launcher passes a smaller BLOCK, which
only changes how many chunks the loop takes.

Declines, each in one sentence: no launcher to rewrite; statements other than assignments,
`tl.store` and top-level `range` loops (branches, early returns, nested loops); operations other
than elementwise ones, `tl.sum/max/min` and `tl.cumsum/cumprod` (atomics, dots, reshapes); 2-D
blocks already; no loop; no `i = tl.program_id(AXIS)` added with stride 1 to an address the loop
walks; loop bounds that depend on the program index; a carried value that is not an accumulator
the recipe can widen; a store that every program of the tile would write; a grid it cannot read;
a block too large for the tile that is not a loop's chunk size the launch passes by keyword.
"""

from __future__ import annotations

from .base import RewriteRequest
from .strided_reduction_edits import kernel_text, launcher_text
from .strided_reduction_shape import NotStridedReduction, read_shape

__all__ = ["NotStridedReduction", "tile_strided_reduction"]


def tile_strided_reduction(request: RewriteRequest) -> tuple[str, str | None]:
    """The kernel and launcher with TILE columns per program (see the module docstring)."""
    if request.launcher is None:
        raise NotStridedReduction(
            "the launch cannot be rewritten (it is outside the project), and the grid must shrink"
        )
    shape, tile, lowered = read_shape(request)
    launcher, extent, new_param = launcher_text(request, shape.fn, shape.axis, tile, lowered)
    return kernel_text(request.kernel.source, shape, tile, extent, new_param), launcher
