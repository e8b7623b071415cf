"""The campaign: every task of a suite through `campaign.task`, on this host or on Ray, into one table.

OUT/campaign.json is rewritten as each row arrives; with `resume` the rows already there are kept
and their tasks skipped (an interrupted campaign loses only the tasks that were running). Each
task's own files (copies, optimize's report and attempts, its log) are under OUT/tasks/NAME/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from ..files import output_folder
from . import results, schedule
from .results import CampaignReport, Row
from .suite import Task, find_tasks
from .task import TaskSpec


def run(
    suite: Path,
    *,
    out_dir: Path,
    only: str | None = None,
    resume: bool = False,
    device: str = "auto",
    devices: str | None = None,
    ray_address: str | None = None,
    max_attempts: int = 4,
    time_budget_s: float | None = None,
    program_timeout_s: float = 300.0,
    task_timeout_s: float = 1800.0,
    device_variable: str = "AKA_DEVICE",
    rounds: int = 2,
    on_row: Callable[[Row, int, int], None] | None = None,
) -> CampaignReport:
    """Run the suite's tasks not yet in OUT/campaign.json; `on_row(row, done, total)` as each finishes."""
    from ..workload.devices import parse_devices

    device = _device(device)
    if device == "cpu" and devices:
        raise UsageError("--devices names GPUs, and the campaign runs on the CPU", hint="Leave --devices out.")
    if devices and ray_address:
        raise UsageError("--devices and --ray both say where tasks run", hint="Pass one: Ray places tasks itself.")
    pinned = parse_devices(devices)
    tasks = find_tasks(suite, only)
    settings = {
        "max_attempts": max_attempts,
        "time_budget_s": time_budget_s,
        "program_timeout_s": program_timeout_s,
        "task_timeout_s": task_timeout_s,
        "workers": f"ray {ray_address}" if ray_address else len(pinned) or 1,
    }
    fresh = CampaignReport(
        suite=str(suite), started=results.now(), device=device, settings=settings, tasks=[t.name for t in tasks]
    )
    output_folder(out_dir)
    report = results.start(out_dir / "campaign.json", resume, fresh)
    done = {r.task for r in report.rows}
    todo = [t for t in tasks if t.name not in done]
    specs = [
        _spec(t, out_dir, device, device_variable, max_attempts, time_budget_s, program_timeout_s, rounds) for t in todo
    ]
    results.save(report, out_dir)

    def arrived(row: Row) -> None:
        report.rows.append(row)
        results.save(report, out_dir)
        if on_row:
            on_row(row, len(report.rows), len(report.tasks))

    if ray_address:
        schedule.on_ray(specs, ray_address, 0.0 if device == "cpu" else 1.0, task_timeout_s, arrived)
    else:
        schedule.local(specs, pinned, task_timeout_s, arrived)
    results.save(report, out_dir)
    return report


def _spec(
    task: Task,
    out_dir: Path,
    device: str,
    device_variable: str,
    max_attempts: int,
    time_budget_s: float | None,
    program_timeout_s: float,
    rounds: int,
) -> TaskSpec:
    from ..evaluation.run import case_slug

    return TaskSpec(
        task=task,
        work=(out_dir / "tasks" / case_slug(task.name.replace("/", "__"))).resolve(),
        device=device,
        device_variable=device_variable,
        max_attempts=max_attempts,
        time_budget_s=time_budget_s,
        program_timeout_s=program_timeout_s,
        rounds=rounds,
    )


def _device(device: str) -> str:
    """auto: gpu when torch sees one, else cpu (decided here, once, for every task)."""
    if device != "auto":
        return device
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"
