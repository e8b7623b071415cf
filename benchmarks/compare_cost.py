"""Where the parent's seconds go when it judges a candidate (issue 19): the ground truth's files,
loading and comparing the in-program captures, checksumming the ground truth, and one validation
of an unchanged candidate with its stage seconds.

    python benchmarks/compare_cost.py [--interpret]     (GPU: on the device machine, after gpu_setup.sh)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from intelliperf.validators import Program, capture_reference, copy_project, validate
from intelliperf.validators.compare import Tolerances
from intelliperf.validators.correctness import compare_captures, load_capture

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "atomic_contention"


def timed(what: str, fn):
    begin = time.perf_counter()
    value = fn()
    print(f"{what}: {time.perf_counter() - begin:.3f} s")
    return value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--interpret", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compare-cost-"))
    program = Program(EXAMPLE, [sys.executable, "contended_sum.py"])
    ref = timed(
        "capture_reference",
        lambda: capture_reference(program, "contended_sum_kernel", interpret=args.interpret, work_dir=work / "ref"),
    )
    for folder in (ref.truth, ref.inputs):
        files = [p for p in folder.rglob("*") if p.is_file()]
        print(f"{folder.name}: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")
    manifest = load_capture(Path(ref.manifest["dir"]))
    replay = sorted((ref.truth / "replay").glob("*.pt"))
    timed(f"load the {len(replay)} replay outputs of the truth, digests checked", lambda: [ref.load(p) for p in replay])
    timed(
        "compare_captures(reference, reference)", lambda: compare_captures(manifest, manifest, ref.kernel, Tolerances())
    )
    timed("verify (sizes and times of the ground truth)", ref.verify)
    copy = copy_project(EXAMPLE, {}, work / "copy")
    verdict = timed(
        "validate an unchanged candidate", lambda: validate(ref, Program(copy, program.command), work_dir=work / "v")
    )
    print("verdict seconds", verdict.seconds, "correct", verdict.correct, "speedup", verdict.speedup)
    for side in ("replay", "sanitizer/memcheck", "sanitizer/racecheck"):
        summary = work / "v" / side / "replay.json"
        if summary.exists():
            print(side, "worker phases", json.loads(summary.read_text()).get("phases"))
    print("reference side of the replay", ref.replay.get("phases"), f"{ref.replay_s:.2f} s")


if __name__ == "__main__":
    main()
