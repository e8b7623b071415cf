"""What the sandbox costs per process: a Python process that imports torch and Triton (and, on a
GPU, creates its CUDA context), started plainly and inside intelliperf's bubblewrap sandbox.
Every program run, replay and timing worker of a validation pays this once.

    python benchmarks/sandbox_overhead.py [--repeat 5]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton

from intelliperf.workload import sandbox

REPO = Path(__file__).resolve().parents[1]
PROBE = "import torch, triton; torch.ones(1, device='cuda').sum().item() if torch.cuda.is_available() else None"


def seconds(command: list[str], env: dict, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    box = sandbox.make(enabled=True, hide=(REPO, work))
    plain = seconds([sys.executable, "-c", PROBE], dict(os.environ), args.repeat)
    confined = seconds(
        box.wrap([sys.executable, "-c", PROBE], cwd=work, writable=(work,)),
        box.env(dict(os.environ)) | {"HOME": str(work)},
        args.repeat,
    )
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu (no GPU)"
    result = {
        "device": device,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "bwrap": box.bwrap,
        "repeat": args.repeat,
        "plain_s": plain,
        "sandboxed_s": confined,
        "overhead_s": statistics.median(confined) - statistics.median(plain),
    }
    (Path(os.environ.get("OUT", ".")) / "sandbox_overhead.json").write_text(json.dumps(result, indent=1))
    print(f"{device} · torch {torch.__version__} · triton {triton.__version__} · {args.repeat} starts each")
    print(
        f"process start (import torch+triton{', CUDA context' if torch.cuda.is_available() else ''}): "
        f"plain {statistics.median(plain):.2f} s, sandboxed {statistics.median(confined):.2f} s, "
        f"overhead {result['overhead_s']:+.2f} s (median)"
    )


if __name__ == "__main__":
    main()
