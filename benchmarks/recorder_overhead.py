"""How much the launch recorder slows a program that launches a kernel thousands of times.

    python benchmarks/recorder_overhead.py [--launches 10000] [--runs 5] [--out results.json]

Runs benchmarks/launch_loop.py plainly and with the recorder installed (exactly as
`intelliperf diagnose` installs it, without the address trace), alternating, and compares
the median time of the launch loop. Needs a GPU: on CPU the interpreter dominates everything.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from intelliperf.profiling.inside.recorder import ENV_TIME_FRACTION
from intelliperf.workload.runner import TraceSettings, workload_env

HERE = Path(__file__).parent


def loop_time(launches: int, n: int, recorded: bool, time_fraction: str | None = None) -> float:
    cmd = [sys.executable, str(HERE / "launch_loop.py"), "--launches", str(launches), "--n", str(n)]
    with tempfile.TemporaryDirectory() as tmp:
        env = workload_env(Path(tmp), interpret=False, trace=TraceSettings()) if recorded else None
        if time_fraction is not None:
            env[ENV_TIME_FRACTION] = time_fraction
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        if recorded:
            record = json.loads(next(Path(tmp).glob("record-*.json")).read_text())
            assert record["launches"] == launches + 1, record["launches"]
    return json.loads(out.strip().splitlines()[-1])["loop_s"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import torch
    import triton

    rows = []
    # (elements, fraction of launches timed: None is the recorder's default sampling, "1" times all)
    for n, fraction in ((1024, None), (1024, "1"), (1 << 22, None)):
        plain, recorded = [], []
        for _ in range(args.runs):
            plain.append(loop_time(args.launches, n, recorded=False))
            recorded.append(loop_time(args.launches, n, recorded=True, time_fraction=fraction))
        p, r = statistics.median(plain), statistics.median(recorded)
        rows.append(
            {
                "n": n,
                "launches": args.launches,
                "timed": "all" if fraction else "sampled",
                "plain_s": p,
                "recorded_s": r,
                "overhead_us_per_launch": (r - p) / args.launches * 1e6,
                "slowdown": r / p,
            }
        )
    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "runs": args.runs,
        "rows": rows,
    }
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"recorder overhead on {result['device']} (torch {result['torch']}, triton {result['triton']}), "
        f"median of {args.runs} runs"
    )
    print("| elements | launches | launches timed | plain loop | recorded loop | per launch | slowdown |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['n']} | {row['launches']} | {row['timed']} | {row['plain_s'] * 1e3:.1f} ms | "
            f"{row['recorded_s'] * 1e3:.1f} ms | "
            f"+{row['overhead_us_per_launch']:.1f} µs | {row['slowdown']:.2f}x |"
        )


if __name__ == "__main__":
    main()
