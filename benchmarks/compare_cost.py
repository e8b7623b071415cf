"""Where an attempt's seconds go when intelliperf judges a candidate: the ground truth's
files, loading and comparing the in-program captures, checking the ground truth, one validation of an
unchanged candidate with its stage seconds and its workers' phases, the timing's parts (waiting for
the workers to be ready, the pairs, the copy bandwidth), and what the candidate's program run is
made of (Python, torch and Triton start-up; the recorder, the address trace, the static view).

    python benchmarks/compare_cost.py [--interpret] [--turns] [--program FILE --kernel NAME] [--racecheck-every-cta]
    (GPU: on the device machine, after gpu_setup.sh; the program defaults to the README's example)

--turns validates as for inputs over AHEAD_INPUTS_BYTES (1 GiB): nothing of the replay beside the program
run, and the replay, the sanitizers and the timing one after another. --racecheck-every-cta: the second
validation with racecheck on every CTA of each launch (the first has the default, one CTA per SM where a
race could only be the compiler's).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from intelliperf.validators import (
    Program,
    ValidationSettings,
    capture_reference,
    copy_project,
    correctness,
    performance,
    validate,
)
from intelliperf.validators.compare import Tolerances
from intelliperf.validators.correctness import compare_captures, load_capture
from intelliperf.workload.runner import TraceSettings, run_workload

validate_module = importlib.import_module("intelliperf.validators.validate")  # the package's `validate` is the function
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "atomic_contention" / "contended_sum.py"


def timed(what: str, fn):
    begin = time.perf_counter()
    value = fn()
    print(f"{what}: {time.perf_counter() - begin:.3f} s")
    return value


def clocked(module, name: str, seconds: dict) -> None:
    """`module.name` wrapped: its seconds added to `seconds[name]`."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds[name] = round(seconds.get(name, 0.0) + time.perf_counter() - begin, 3)

    setattr(module, name, wrapper)


def program_parts(program: Program, kernel: str, interpret: bool, work: Path) -> None:
    """The program's run alone, then with each part of a candidate run's recording added."""
    probe = "import torch, triton; torch.cuda.init() if torch.cuda.is_available() else None"
    timed("python -c 'import torch, triton; torch.cuda.init()'", lambda: subprocess.run([sys.executable, "-c", probe]))
    env = {**os.environ, "TRITON_CACHE_DIR": str(work / "plain-cache")}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    for cache in ("cold", "warm"):
        timed(
            f"plain run, Triton cache {cache}",
            lambda: subprocess.run(program.command, cwd=program.root, env=env, stdout=subprocess.DEVNULL),
        )
    variants = {
        "recorder only": TraceSettings(),
        "recorder + address trace": TraceSettings(pattern=kernel),
        "recorder + trace + static view": TraceSettings(pattern=kernel, static_targets=("cuda:90", "hip:gfx942")),
    }
    for i, (what, trace) in enumerate(variants.items()):
        timed(
            what + " (Triton cache warm)",
            lambda trace=trace, i=i: run_workload(
                program.command, work / f"rec-{i}", interpret=interpret, trace=trace, cwd=str(program.root)
            ),
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--interpret", action="store_true")
    parser.add_argument("--turns", action="store_true", help="as for inputs over 1 GiB")
    parser.add_argument("--program", type=Path, default=EXAMPLE, help="a program run as `python FILE` in its folder")
    parser.add_argument("--kernel", default="contended_sum_kernel")
    parser.add_argument("--racecheck-every-cta", action="store_true", help="the second validation's racecheck")
    args = parser.parse_args()
    if args.turns:
        importlib.import_module("intelliperf.validators.runs.beside").AHEAD_INPUTS_BYTES = 0
    work = Path(tempfile.mkdtemp(prefix="compare-cost-"))
    project = args.program.resolve().parent
    program = Program(project, [sys.executable, args.program.name])
    ref = timed(
        "capture_reference",
        lambda: capture_reference(program, args.kernel, interpret=args.interpret, work_dir=work / "ref"),
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
    program_parts(program, args.kernel, args.interpret, work)
    parts: dict[str, float] = {}
    clocked(importlib.import_module("intelliperf.validators.runs.timing"), "interleaved", parts)
    clocked(performance, "device_bandwidth", parts)
    clocked(performance._Side, "readline", parts)  # the first two calls wait for "ready"
    compare: dict[str, float] = {}  # the captures' comparison: the truth's files (digests), the candidate's, values
    for name in ("compare_captures", "load_capture"):
        clocked(validate_module, name, compare)
    clocked(importlib.import_module("intelliperf.validators.replay_checks"), "loaded_outside", compare)
    for name in ("load", "verify", "check_stability"):
        clocked(validate_module.ReferenceRun, name, compare)
    clocked(correctness, "load_tensors", compare)
    clocked(correctness, "compare_buffer", compare)
    copy = copy_project(project, {}, work / "copy")
    verdict = timed(
        "validate an unchanged candidate", lambda: validate(ref, Program(copy, program.command), work_dir=work / "v")
    )
    print("verdict seconds", verdict.seconds, "correct", verdict.correct, "speedup", verdict.speedup)
    print("verdict notes", verdict.notes)
    for problem in verdict.problems:
        print("problem:", problem.message[:500])
    print("timing parts (readline: waiting for every answer, ready lines included)", parts)
    print("compare parts (load: the truth's files with digests; load_tensors: the candidate's)", compare)
    settings = ValidationSettings(racecheck_ctas=0 if args.racecheck_every_cta else None)
    copy2 = copy_project(project, {}, work / "copy2")
    again = validate(ref, Program(copy2, program.command), work_dir=work / "v2", settings=settings)
    every = " (racecheck on every CTA)" if args.racecheck_every_cta else ""
    print(f"a second validation{every}", again.seconds, "correct", again.correct, "notes", again.notes)
    for side in ("replay", "sanitizer/memcheck", "sanitizer/racecheck", "timing-reference", "timing-candidate"):
        summary = work / "v" / side / "replay.json"
        if summary.exists():
            print(side, "worker phases", json.loads(summary.read_text()).get("phases"))
    print("reference side of the replay", ref.replay.get("phases"), f"{ref.replay_s:.2f} s")


if __name__ == "__main__":
    main()
