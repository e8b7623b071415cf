"""Where a campaign's task processes run.

* On this host (`local`): one worker per device (`--devices`: a GPU each, pinned through
  CUDA_VISIBLE_DEVICES; without it one worker seeing what the caller sees), each task a process
  of its own (`python -m intelliperf.campaign.task`), killed after `task_timeout_s`.
* On a Ray cluster (`on_ray`): each task a Ray task asking for one GPU (none on the CPU) that runs
  the same process on whichever node Ray picks; rows come back as they finish (`ray.wait`), and a
  task whose worker is lost (a node gone, a worker killed) is retried once (`max_retries=1`). The
  suite and the out-dir must be at the same paths on every node (a shared filesystem).

Either way a task is one row: a process that crashes or runs out of time is a row with the reason.
Ray is imported here only, and only for `--ray` (the `ray` extra).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import UsageError
from ..workload.devices import pinned_env, spread_over
from .results import Row
from .task import TaskSpec

LOST_RETRIES = 1  # a lost worker's task runs once more


_LIVE: set[subprocess.Popen] = set()  # the task processes running now, each the leader of its process group


def run_process(spec_json: str, task_timeout_s: float, pin: dict[str, str] | None = None) -> str:
    """One task in its own process (and process group); its row as JSON, a failed row when the process
    left none. Out of time, or interrupted (Ray's cancel), the whole group is killed: nothing it started
    outlives it."""
    spec = TaskSpec.model_validate_json(spec_json)
    spec.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="intelliperf-task-") as scratch:
        spec_path, row_path = Path(scratch) / "spec.json", Path(scratch) / "row.json"
        spec_path.write_text(spec_json)
        log = spec.work / "task.log"
        command = [sys.executable, "-m", "intelliperf.campaign.task", str(spec_path), str(row_path)]
        with open(log, "w") as out:
            env = {**os.environ, **(pin or {})}
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        _LIVE.add(proc)
        try:
            code = proc.wait(timeout=task_timeout_s)
            why = f"the task's process exited {code} without a row: {_tail(log)}"
        except subprocess.TimeoutExpired:
            why = f"the task ran over {task_timeout_s:g} s and was stopped (log: {log})"
        except BaseException:
            _kill(proc)
            raise
        finally:
            _kill(proc)  # what it left running (its group) goes with it
            _LIVE.discard(proc)
        if row_path.is_file():
            return row_path.read_text()
    return Row(task=spec.task.name, status="error", detail=why, out_dir=str(spec.work)).model_dump_json()


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def stop_all() -> None:
    """Ctrl-C on this host: every running task's process group killed (they run in sessions of their own)."""
    for proc in list(_LIVE):
        _kill(proc)


def _tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return " / ".join(lines[-3:])[-400:]


def local(specs: list[TaskSpec], devices: list[str], task_timeout_s: float, done: Callable[[Row], None]) -> None:
    """Every task on this host, one worker per device ([]: one worker, no pinning)."""

    def run(spec: TaskSpec, device: str | None) -> Row:
        return Row.model_validate_json(run_process(spec.model_dump_json(), task_timeout_s, pinned_env(device)))

    spread_over(devices or [None], specs, run, lambda spec, row: done(row), interrupted=stop_all)


def on_ray(
    specs: list[TaskSpec], address: str, gpus: float, task_timeout_s: float, done: Callable[[Row], None]
) -> None:
    """Every task as a Ray task; `done` gets each row as it finishes."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, log_to_driver=False)
    remote = ray.remote(num_gpus=gpus, num_cpus=1, max_retries=LOST_RETRIES)(run_process)
    pending = {remote.remote(spec.model_dump_json(), task_timeout_s): spec for spec in specs}
    try:
        for ref, row, why in _as_finished(ray, list(pending)):
            done(row or _lost(pending[ref], why))
    except BaseException:  # Ctrl-C: what is still queued or running on the cluster stops too
        for ref in pending:
            ray.cancel(ref)  # a running one gets KeyboardInterrupt: run_process kills its task's group
        raise


def _as_finished(ray, waiting: list) -> Iterator[tuple[object, Row | None, str]]:
    """Each Ray task's row as it finishes; for one that failed (its worker lost twice, or Ray could not
    run it), None and why."""
    while waiting:
        ready, waiting = ray.wait(waiting, num_returns=1)
        try:
            yield ready[0], Row.model_validate_json(ray.get(ready[0])), ""
        except Exception as exc:
            yield ready[0], None, f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def _lost(spec: TaskSpec, why: str) -> Row:
    return Row(
        task=spec.task.name, status="error", detail=f"Ray: {why} (retried {LOST_RETRIES}x)", out_dir=str(spec.work)
    )


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--ray needs Ray, which is not installed",
            hint="pip install 'intelliperf[ray]' (or leave --ray out to run on this host).",
        ) from None
    return ray
