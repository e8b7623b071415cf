"""The interpreter trace inside the program run, or after it beside the next passes: an A/B (GPU).

    python benchmarks/trace_later.py PROGRAM.py [PROGRAM.py ...]

Runs `intelliperf diagnose -f diagnoseOnly` on each program twice in this process: as it is (on a GPU
the trace is deferred to profiling/trace_worker.py where the ncu or region-timer pass follows,
api_diagnosis.trace_later) and with the deferral off (the trace taken inside the program's run). Prints the
wall seconds and stages of each, the notes about the trace, and whether the two runs' interpreter-trace
evidence and findings are the same.
"""

from __future__ import annotations

import sys
import time

import intelliperf
from intelliperf.diagnosis import run as api_diagnosis


def diagnose(program: str) -> tuple[float, dict, list]:
    started = time.perf_counter()
    report = intelliperf.diagnose([sys.executable, program], formula="diagnoseOnly", device="gpu")
    wall = time.perf_counter() - started
    stages = {k: round(v, 1) for k, v in report.stages.items()}
    print(f"{program}: {wall:.1f} s, stages {stages}", [n[:160] for n in report.notes if "trace" in n], flush=True)
    evidence = {
        d.kernel: [e.model_dump() for e in d.evidence if e.backend == "interpreter-trace"] for d in report.diagnoses
    }
    findings = [(d.kernel, f.formula, f.present, f.severity) for d in report.diagnoses for f in d.findings]
    return wall, evidence, findings


def main() -> int:
    deferring = api_diagnosis.trace_later
    for program in sys.argv[1:]:
        api_diagnosis.trace_later = deferring
        later = diagnose(program)
        api_diagnosis.trace_later = lambda *args: False
        inline = diagnose(program)
        print(
            f"{program}: after the run {later[0]:.1f} s, inside it {inline[0]:.1f} s; same trace evidence: "
            f"{later[1] == inline[1]}, same findings: {later[2] == inline[2]}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
