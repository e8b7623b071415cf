"""laneUtilization recipes: fit a block that is rounded far above its data, and use the freed lanes.

A kernel runs its lanes as `offs = tl.arange(0, BLOCK)` and masks every access by `offs < n`,
where `n` is a kernel argument or an expression of arguments. When the launcher rounds BLOCK far
above `n` (`BLOCK = triton.next_power_of_2(head_dim)` for a mask on `head_dim // 2`), the lanes
past `n` load, compute and store nothing, in every program.

* `pack_rows` (pack-rows), for `n` at most half of BLOCK, one program per row along a grid axis
  (`row = tl.program_id(AXIS)`): the lanes shrink to BLOCK_FIT = next_power_of_2(n) (capped at
  BLOCK) and each program takes R = BLOCK // BLOCK_FIT consecutive rows, so the block keeps its
  lane count as an [R, BLOCK_FIT] tile. The row index becomes an [R, 1] column, the lane index a
  [1, BLOCK_FIT] row, so every expression broadcasts to what it computed before, per row. Per-row
  reductions (`tl.sum(x, axis=0)`, `tl.max(x)`, ...) reduce along axis 1 with `keep_dims=True`,
  so a per-row result stays an [R, 1] column and `tl.store(ptr + row, v)` stores the R values.
  Every access whose address depends on the row is masked against the row count, the grid's
  extent along that axis (passed to the kernel as a new argument when it is not one already),
  and the grid along the axis becomes `triton.cdiv(extent, R)`. BLOCK_FIT and R are computed by
  the launcher from the same expression at run time, so the kernel is right for every `n`, not
  only the recorded one. The axis packed is the one whose index the fewest loads depend on (data
  that does not depend on it, like RoPE's cos/sin, is then loaded once for the R rows).
* `split_row` (split-row-into-tiles), for an elementwise kernel whose `n` is more than half of
  BLOCK but fills it poorly (DyT's 9216 columns in 16384 lanes): the row is cut into tiles of
  TILE lanes along a new grid axis, `offs = tl.program_id(NEW) * TILE + tl.arange(0, TILE)`, with
  TILE the power of two (256 to 2048) that the recorded `n` fills best; the launcher caps
  num_warps at 4 for the smaller block. Correct for every `n` (the mask is unchanged); only the
  choice of TILE comes from the recording.

Both decline, with one sentence, for: loops or data-dependent branches (the lanes would be reused
for several segments), more than one `tl.arange`, a block already indexed in two dimensions,
BLOCK used for anything but the lane range, an access on the lanes without the `offs < n` bound,
calls they cannot see into, atomics, a launch that does not pass BLOCK (an autotuner chooses it),
a grid they cannot read, and a recorded `n` that leaves no power of two to drop (pack-rows) or no
tile that fills better (split-row).

The recipes are in pack_rows.py and split_row.py, the patterns they share in lane_patterns.py;
this module names the family for the recipes' registry.
"""

from __future__ import annotations

from .lane_patterns import NotPackable
from .pack_rows import pack_rows
from .split_row import split_row

__all__ = ["NotPackable", "pack_rows", "split_row"]
