"""The task's own verdict: its correctness and performance commands, run as the suite runs them.

Times are read as AgentKernelArena's evaluator reads them (src/performance.py, src/testcases.py):
the first report file found among REPORTS (a list of test cases, or one object), each case's time
from the first device-time key, else an ambiguous one, else `timing_ms.mean` (rocmbench's pytest
helper); without a report, the first time the output prints (`GEAK_RESULT_LATENCY_MS=`,
`Performance: X ms`). A speedup is the peer's too: the mean over matched cases of baseline /
patched time, and none at all when a case is missing or failed (a time <= 0) on either side.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel, Field

from .suite import argv

REPORTS = (
    "build/performance_report.json",
    "performance_report.json",
    "build/perf_report.json",
    "perf_report.json",
    "perf/benchmark_results.json",
)
DEVICE_KEYS = (
    "device_time_ms",
    "gpu_time_ms",
    "kernel_time_ms",
    "cuda_event_time_ms",
    "cuda_graph_time_ms",
    "execution_time_ms",
)
AMBIGUOUS_KEYS = ("execution_time", "time_ms", "time")
PRINTED = (
    (r"GEAK_RESULT_LATENCY_MS=([0-9.]+)", 1.0),
    (r"Performance:\s*([0-9.]+)\s*ms", 1.0),
    (r"Performance:\s*([0-9.]+)\s*s(?:econds?)?\b", 1000.0),
)


class PeerRun(BaseModel):
    ok: bool
    seconds: float
    detail: str = Field("", description="the failing command and its output's tail")
    times_ms: dict[str, float] = Field(default_factory=dict, description="performance: per test case")


def run_commands(commands: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> PeerRun:
    """Each command in turn in `cwd`; the first that fails (exit status, timeout) ends the run."""
    start = time.monotonic()
    for command in commands:
        left = timeout_s - (time.monotonic() - start)
        try:
            done = subprocess.run(
                argv(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=max(1.0, left)
            )
        except subprocess.TimeoutExpired:
            return PeerRun(ok=False, seconds=time.monotonic() - start, detail=f"`{command}`: over {timeout_s:g} s")
        except (OSError, ValueError) as exc:  # no such program; a command shlex cannot split
            return PeerRun(ok=False, seconds=time.monotonic() - start, detail=f"`{command}`: {exc}")
        if done.returncode != 0:
            tail = _tail(done.stdout + done.stderr)
            return PeerRun(
                ok=False, seconds=time.monotonic() - start, detail=f"`{command}`: exit {done.returncode}: {tail}"
            )
        last = done.stdout + done.stderr
    return PeerRun(ok=True, seconds=round(time.monotonic() - start, 2), detail=_tail(last) if commands else "")


# The line that names what went wrong, wherever it is: pytest's `E   NotImplementedError: ...`, a traceback's last line.
ERROR_LINE = re.compile(r"^(E\s+)?([\w.]*(Error|Exception|Interrupt)|Traceback)\b")


def _tail(text: str, lines: int = 4) -> str:
    """The output's last lines; where the error line is above them (pytest's summary follows it), first."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    tail = " / ".join(kept[-lines:])
    cause = next((line for line in reversed(kept) if ERROR_LINE.match(line) and line != "Traceback"), None)
    if cause is None or cause in tail:
        return tail[-600:]
    cause = cause[:300]
    return f"{cause} … {tail[-(596 - len(cause)) :]}"


def timed(commands: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> PeerRun:
    """The performance commands run in `cwd` (stale reports removed first) and their times per case."""
    for rel in REPORTS:
        (cwd / rel).unlink(missing_ok=True)
    run = run_commands(commands, cwd, env, timeout_s)
    if run.ok:
        run.times_ms = read_times(cwd, run.detail)
        if not run.times_ms:
            run.ok, run.detail = False, f"no time found in the reports or the output: {run.detail}"
    return run


def read_times(cwd: Path, output: str) -> dict[str, float]:
    for rel in REPORTS:
        path = cwd / rel
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except ValueError:
                continue
            cases = data if isinstance(data, list) else [data]
            times = {_case_id(c, i): t for i, c in enumerate(cases) if isinstance(c, dict) and (t := _time(c))}
            if times:
                return times
    for pattern, scale in PRINTED:
        found = re.search(pattern, output)
        if found:
            return {"total": float(found.group(1)) * scale}
    return {}


def _case_id(case: dict, index: int) -> str:
    if "test_case_id" in case:
        return str(case["test_case_id"])
    if "params" in case:
        return json.dumps(case["params"], sort_keys=True, default=str)
    return str(index)


def _time(case: dict) -> float | None:
    """The case's time in ms (a failed case keeps its -1); None where it names none."""
    for key in DEVICE_KEYS:
        if isinstance(case.get(key), (int, float)):
            return float(case[key])
    for key in AMBIGUOUS_KEYS:
        value = case.get(key)
        if isinstance(value, (int, float)):
            return float(value) if key == "time_ms" or value < 1000.0 else float(value) * 1000.0
    timing = case.get("timing_ms")
    if isinstance(timing, dict):
        for key in ("mean", "median", "min"):
            if isinstance(timing.get(key), (int, float)):
                return float(timing[key])
    return None


def speedup(base: dict[str, float], patched: dict[str, float]) -> tuple[float | None, str]:
    """The peer's speedup (mean of per-case ratios) and, when there is none, why."""
    if set(base) != set(patched):
        return None, f"test cases differ: baseline {sorted(base)}, patched {sorted(patched)}"
    failed = [k for k in base if base[k] <= 0 or patched[k] <= 0]
    if failed:
        return None, f"failed test case(s) {', '.join(failed[:5])} (time <= 0)"
    ratios = [base[k] / patched[k] for k in base]
    return sum(ratios) / len(ratios), ""


def environment(device: str, device_variable: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a task's commands run in: the torch device in `device_variable` (cpu under the
    interpreter, cuda on a GPU). On the CPU: TRITON_INTERPRET=1 and intelliperf's bootstrap on PYTHONPATH,
    which (with no recording asked for) only lets an `@triton.autotune` kernel run its first config, as in
    intelliperf's own runs: the interpreter has no device clock to pick one by, and Triton's autotuner
    stops with "0 active drivers" where it looks for one."""
    env = {**os.environ, **(extra or {}), device_variable: "cpu" if device == "cpu" else "cuda"}
    if device == "cpu":
        from ..workload.runner import bootstrap_env

        env = bootstrap_env(interpret=True, base=env)
    return env
