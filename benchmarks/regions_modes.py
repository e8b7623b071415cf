"""Region-timer figures of one program under three Proton modes, each twice: run-to-run spread (GPU).

    python benchmarks/regions_modes.py OUT_DIR PROGRAM.py [ARGS...]

Modes: every warp (intelliperf's mode with `all_warps`), selective sampling of warp 0 (what the
default records on a kernel of 4 warps), and Proton's warp-group granularity. Each runs
`intelliperf regions` (api.regions) twice, in the order all, selective, warp group, then again, so
the spread between runs of one mode shows beside the difference between modes. Prints one JSON line
a run (benchmarks/regions_sampling.py's `one`: wall seconds, trace size, its first warp names, the
loop figures, problems, the pass's notes).
"""

import sys
from pathlib import Path

from regions_sampling import one

from intelliperf.profiling import region_timers


def main() -> int:
    out, program = Path(sys.argv[1]), sys.argv[2:]
    base = region_timers.DEFAULT_MODE
    modes = {
        "all": base,
        "selective0": base + ":sampling_strategy=selective:sampling_options=0",
        "warp_group": base + ":granularity=warp_group",
    }
    for rep in (1, 2):
        for name, mode in modes.items():
            region_timers.DEFAULT_MODE = mode  # all_warps below: the mode is used as it is
            folder = out / f"{name}-{rep}"
            one(program, folder, all_warps=True)
            (folder / "proton.chrome_trace").unlink(missing_ok=True)  # 35-140 MB each
    return 0


if __name__ == "__main__":
    sys.exit(main())
