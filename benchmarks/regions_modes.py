"""Region-timer figures of one program under three Proton modes, each twice: run-to-run spread (GPU).

    python benchmarks/regions_modes.py OUT_DIR PROGRAM.py [ARGS...]

Modes: every warp (intelliperf's mode with `all_warps`), selective sampling of warp 0 (what the
default records on a kernel of 4 warps), and Proton's warp-group granularity. Each runs
`intelliperf regions` (api.regions) twice, in the order all, selective, warp group, then again, so
the spread between runs of one mode shows beside the difference between modes. Prints one JSON line
a run: wall seconds, trace size, the trace's first warp names, the loop figures, problems, or the
pass's notes where it produced no trace.
"""

import json
import re
import sys
import time
from pathlib import Path

from intelliperf import api
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
            region_timers.DEFAULT_MODE = mode
            d = out / f"{name}-{rep}"
            t = time.perf_counter()
            try:
                report = api.regions([sys.executable, *program], out_dir=d, all_warps=True)
            except Exception as exc:
                print(name, rep, "error", exc)
                continue
            wall = time.perf_counter() - t
            r = next((e.regions for x in report.diagnoses for e in x.evidence if e.regions), None)
            trace = d / "proton.chrome_trace"
            tids = (
                sorted(set(re.findall(r'"tid":\s*"([^"]*)"', trace.read_text()[:300000])))[:5]
                if trace.exists()
                else None
            )
            mb = round(trace.stat().st_size / 1e6, 1) if trace.exists() else None
            if trace.exists():
                trace.unlink()
            notes = [n[:300] for n in report.notes if "region timers" in n][-2:]
            print(
                json.dumps(
                    {
                        "mode": name,
                        "rep": rep,
                        "wall": round(wall, 1),
                        "mb": mb,
                        "tids": tids,
                        "warps": r and r.warps_per_cta,
                        "exposed": r and r.exposed_memory_share,
                        "iter": r and r.iteration_cycles,
                        "compute": r and r.compute_share,
                        "problems": r and r.problems,
                        "notes": notes if not r else None,
                    }
                ),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
