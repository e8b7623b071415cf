"""GPU memory of one worker intelliperf starts beside a candidate's program run: a process
with torch and Triton loaded, a CUDA context and one compiled Triton kernel launched, alone and under
compute-sanitizer; and the peak the capture records for the README's example. The device's used
memory (`nvidia-smi`) is read before the worker starts and while it waits.

    python benchmarks/worker_memory.py     (on the device machine, after gpu_setup.sh)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKER = f"""
import sys
sys.path.insert(0, {str(REPO / "tests" / "programs" / "validation")!r})
import torch
from axpy import axpy
x = torch.randn(1 << 20, device="cuda")
axpy(x, x, 2.0)
torch.cuda.synchronize()
print("ready", flush=True)
sys.stdin.readline()
"""


def used_mib() -> int:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True
    )
    return int(out.stdout.split()[0])


def worker_mib(wrap: list[str]) -> int:
    before = used_mib()
    proc = subprocess.Popen(
        [*wrap, sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    while line and not line.startswith("ready"):  # compute-sanitizer's banner comes first
        line = proc.stdout.readline()
    time.sleep(0.5)
    during = used_mib()
    proc.stdin.close()
    proc.wait()
    assert line.startswith("ready"), line
    return during - before


def main() -> None:
    from intelliperf.validators import Program, capture_reference

    print(f"worker (torch, Triton, one kernel launched): {worker_mib([])} MiB")
    sanitizer = subprocess.run(["which", "compute-sanitizer"], capture_output=True, text=True).stdout.strip()
    for tool in ("memcheck", "racecheck") if sanitizer else ():
        print(f"worker under compute-sanitizer {tool}: {worker_mib([sanitizer, '--tool', tool])} MiB")
    example = REPO / "examples" / "atomic_contention"
    work = Path(tempfile.mkdtemp(prefix="worker-memory-"))
    ref = capture_reference(
        Program(example, [sys.executable, "contended_sum.py"]), "contended_sum_kernel", interpret=False, work_dir=work
    )
    memory = ref.manifest["gpu_memory"]
    print(
        f"contended_sum's capture: peak reserved {memory['peak_reserved'] / 2**20:.0f} MiB "
        f"of {memory['total'] / 2**30:.1f} GiB"
    )


if __name__ == "__main__":
    main()
