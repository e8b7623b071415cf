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
from ..settings import CampaignSettings
from . import results, schedule
from .results import CampaignReport, Row
from .suite import Task, find_tasks
from .task import TaskSpec


def run(
    suite: Path,
    settings: CampaignSettings,
    *,
    out_dir: Path,
    only: str | None = None,
    resume: bool = False,
    on_row: Callable[[Row, int, int], None] | None = None,
) -> CampaignReport:
    """Run the suite's tasks not yet in OUT/campaign.json; `on_row(row, done, total)` as each finishes."""
    from ..workload.devices import parse_devices

    s = settings.model_copy(update={"device": _device(settings.device)})
    if s.device == "cpu" and s.devices:
        raise UsageError("--devices names GPUs, and the campaign runs on the CPU", hint="Leave --devices out.")
    if s.devices and s.ray_address:
        raise UsageError("--devices and --ray both say where tasks run", hint="Pass one: Ray places tasks itself.")
    pinned = parse_devices(s.devices)
    tasks = find_tasks(suite, only)
    said = s.model_dump(include={"max_attempts", "time_budget_s", "program_timeout_s", "task_timeout_s"})
    said["workers"] = f"ray {s.ray_address}" if s.ray_address else len(pinned) or 1
    fresh = CampaignReport(
        suite=str(suite), started=results.now(), device=s.device, settings=said, tasks=[t.name for t in tasks]
    )
    output_folder(out_dir)
    report = results.start(out_dir / "campaign.json", resume, fresh)
    done = {r.task for r in report.rows}
    specs = [_spec(t, out_dir, s) for t in tasks if t.name not in done]
    results.save(report, out_dir)

    def arrived(row: Row) -> None:
        report.rows.append(row)
        results.save(report, out_dir)
        if on_row:
            on_row(row, len(report.rows), len(report.tasks))

    if s.ray_address:
        schedule.on_ray(specs, s.ray_address, 0.0 if s.device == "cpu" else 1.0, s.task_timeout_s, arrived)
    else:
        schedule.local(specs, pinned, s.task_timeout_s, arrived)
    results.save(report, out_dir)
    return report


def _spec(task: Task, out_dir: Path, settings: CampaignSettings) -> TaskSpec:
    from ..evaluation.run import case_slug

    return TaskSpec(
        task=task, work=(out_dir / "tasks" / case_slug(task.name.replace("/", "__"))).resolve(), settings=settings
    )


def _device(device: str) -> str:
    """auto: gpu when torch sees one, else cpu (decided here, once, for every task)."""
    if device != "auto":
        return device
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"
