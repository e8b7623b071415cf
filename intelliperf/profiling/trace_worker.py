"""Interpreter traces deferred from a GPU run, traced after it in their own Python.

On a GPU the interpreter trace of a launch runs up to its budget (10 s) inside the program, which
waits for it: 10 of the 14 s the attention tutorial's profile run took on the H100. Where another
pass follows (ncu, region timers), `diagnose` sets $INTELLIPERF_TRACE_LATER: the recorder saves the
traced launch's host copies and grid there (`Recorder.trace_later`) instead, and `LaterTraces` runs
this worker on them while those passes run. It calls the same `trace_launch` on the same copies as
the program would have, and writes what the program would have recorded (traced-PID.json, read by
`aggregate.collect_evidence`). The kernel is found by its qualified name in its module, imported by
name (a package's module) or from its file as the replay does (a script: its definitions only); a
kernel not reachable so (one defined in a function) is traced in the program as before.

    python -m intelliperf.profiling.trace_worker FOLDER [--when-told]

`--when-told`: the worker is started with the program's profile run (`LaterTraces.warm`), imports
torch and Triton beside it, and reads a line from its input before it looks at FOLDER: its start-up
is not in the time the passes after the run wait for it. Imports torch, triton and numpy (as the
replay worker does).
"""

from __future__ import annotations

import importlib
import inspect
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..files import write_json
from ..workload.definitions import load_module, resolve
from ..workload.runner import Running


def main(folder: Path, when_told: bool = False) -> int:
    import torch

    from .trace import merge_traces, trace_launch

    if when_told and sys.stdin.readline().strip() != "go":  # no job: the run saved nothing, or ended
        return 0
    kernels: dict[tuple, dict] = {}
    modules: dict[str, object] = {}
    for path in sorted(folder.glob("trace-*.json")):
        job = json.loads(path.read_text())
        try:
            py_fn = _python_function(job, modules)
            saved = torch.load(job["inputs"], weights_only=False)  # written by the user's own program run
            result = trace_launch(py_fn, saved["bound"], tuple(saved["grid"]), job["sample"], job["budget_s"])
        except Exception as exc:  # the kernel not found again, inputs unreadable: said, as a failed trace is
            result = {"programs_total": 0, "programs_sampled": 0, "sites": []}
            result["notes"] = [f"interpreter trace failed: {exc!r:.300}"]
        key = (job["name"], job["file"], job["line"])
        kernels[key] = merge_traces(kernels.get(key), result)
    record = {"kernels": [{"name": n, "file": f, "line": ln, "trace": t} for (n, f, ln), t in kernels.items()]}
    write_json(folder / f"traced-{os.getpid()}.json", record)
    return 0


def _python_function(job: dict, modules: dict):
    """The kernel's plain Python function: from its module imported by name where it is a module of a
    package or an installed one (its relative imports need that), else from its file imported for its
    definitions only (a script: its work does not run again)."""
    top = job["qualname"].split(".")[0]
    for entry in reversed(job.get("sys_path", [])):  # where the program found its modules, first
        if entry not in sys.path:
            sys.path.insert(0, entry)
    module = modules.get(job["file"])
    if module is None and job.get("module") not in (None, "__main__"):
        try:
            module = importlib.import_module(job["module"])
            if os.path.realpath(getattr(module, "__file__", "") or "") != os.path.realpath(job["file"]):
                module = None  # another file of that name first on this path
        except Exception:  # noqa: BLE001  # not importable by name from here: by its file, below
            module = None
    if module is None:
        module = load_module(job["file"], f"_intelliperf_traced_{len(modules)}", (top,))
    modules[job["file"]] = module
    found = resolve(module, job["qualname"])
    while found is not None and not inspect.isfunction(found):
        found = getattr(found, "fn", None)  # an Autotuner or Heuristics wraps a JITFunction, which wraps it
    if found is None:
        raise LookupError(f"{job['qualname']} is not a @triton.jit function of {job['file']}")
    return found


class LaterTraces:
    """A folder the recorder saves deferred traces into, and the worker that traces them."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="intelliperf-traces-"))
        self.worker: Running | None = None
        self.started = 0.0
        self.output = io.StringIO()

    def warm(self, cwd: str) -> None:
        """Start the worker now, beside the program's run: it imports torch and Triton, then waits to be told."""
        command = [sys.executable, "-m", "intelliperf.profiling.trace_worker", str(self.folder), "--when-told"]
        self.worker = Running(command, cwd=cwd, env=dict(os.environ), echo=self.output, stdin=True)

    def start(self, cwd: str) -> None:
        """The worker on the launches the run saved (none: it is stopped); it runs beside whatever the
        caller does next."""
        if not any(self.folder.glob("trace-*.json")):
            self.discard_worker()
            return
        self.started = time.perf_counter()
        if self.worker is None:
            self.warm(cwd)
        assert self.worker is not None  # started just above
        self.worker.send("go")
        self.worker.close()

    def discard_worker(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def jobs(self) -> int:
        return len(list(self.folder.glob("trace-*.json")))

    def finish(self, timeout_s: float) -> tuple[list[dict], list[str]]:
        """The traced records (as the program's recorder would have written them) and notes; the folder
        is removed."""
        try:
            if self.worker is None:
                return [], []
            done = self.worker.wait(timeout_s)
            records = [json.loads(p.read_text()) for p in sorted(self.folder.glob("traced-*.json"))]
            seconds = time.perf_counter() - self.started
            if done.returncode != 0 or not records:
                why = "timed out" if done.returncode is None else f"exit {done.returncode}"
                tail = " | ".join(done.tail[-3:])[:400]
                return records, [f"interpreter trace: its worker failed ({why}): {tail}"]
            return records, [f"interpreter trace: traced after the run, beside the next passes ({seconds:.1f} s)"]
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def discard(self) -> None:
        self.discard_worker()
        shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), when_told="--when-told" in sys.argv[2:]))
