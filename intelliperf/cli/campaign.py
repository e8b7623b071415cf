"""`intelliperf campaign SUITE`: every task of a suite diagnosed, optimized and judged by its own harness."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..settings import CampaignSettings, settled
from .app import NO_WIN_EXIT, err, out
from .interrupt import ctrl_c
from .options import Device, DeviceOption, MaxAttempts, defaults, described
from .outputs import check_outputs

CAMPAIGN = defaults(CampaignSettings)
Suite = Annotated[
    Path,
    typer.Argument(
        metavar="SUITE",
        help="A folder of tasks, each a folder with a config.yaml naming its source files, target kernels and "
        "correctness and performance commands (AgentKernelArena's layout; docs/cli.md#campaign).",
        show_default=False,
    ),
]
Only = Annotated[
    str | None, typer.Option("--only", metavar="REGEX", help="Only the tasks whose name matches this regex.")
]
OutDir = Annotated[
    Path, typer.Option("--out-dir", help="campaign.json, campaign.md, campaign.png and each task's files go here.")
]
Resume = Annotated[
    bool, typer.Option("--resume", help="Continue the campaign in --out-dir (its finished tasks are kept).")
]
Devices = Annotated[str | None, typer.Option("--devices", help=described(CampaignSettings, "devices"))]
Ray = Annotated[str | None, typer.Option("--ray", metavar="ADDRESS", help=described(CampaignSettings, "ray_address"))]
TaskBudget = Annotated[float | None, typer.Option("--time-budget", help=described(CampaignSettings, "time_budget_s"))]
ProgramTimeout = Annotated[float, typer.Option("--timeout", help=described(CampaignSettings, "program_timeout_s"))]
TaskTimeout = Annotated[
    float, typer.Option("--task-timeout", metavar="SECONDS", help=described(CampaignSettings, "task_timeout_s"))
]
Rounds = Annotated[int, typer.Option("--rounds", help=described(CampaignSettings, "rounds"))]
DeviceVariable = Annotated[
    str, typer.Option("--device-variable", metavar="NAME", help=described(CampaignSettings, "device_variable"))
]


def campaign(
    suite: Suite,
    only: Only = None,
    out_dir: OutDir = Path("intelliperf-campaign"),
    resume: Resume = False,
    device: DeviceOption = Device(CAMPAIGN["device"]),
    devices: Devices = CAMPAIGN["devices"],
    ray: Ray = CAMPAIGN["ray_address"],
    max_attempts: MaxAttempts = CAMPAIGN["max_attempts"],
    time_budget: TaskBudget = CAMPAIGN["time_budget_s"],
    timeout: ProgramTimeout = CAMPAIGN["program_timeout_s"],
    task_timeout: TaskTimeout = CAMPAIGN["task_timeout_s"],
    rounds: Rounds = CAMPAIGN["rounds"],
    device_variable: DeviceVariable = CAMPAIGN["device_variable"],
) -> None:
    """Diagnose, optimize and judge again by their own harness every task of a suite."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..campaign.run import run

    check_outputs({}, {"--out-dir": out_dir})
    where = {"device": device.value, "devices": devices, "ray_address": ray, "device_variable": device_variable}
    budget = {"max_attempts": max_attempts, "time_budget_s": time_budget, "rounds": rounds}
    limits = {"program_timeout_s": timeout, "task_timeout_s": task_timeout}
    settings = settled(CampaignSettings, None, {**where, **budget, **limits})
    ctrl_c.watch(out_dir / "campaign.json", say="finished tasks are kept in {} (--resume continues)")
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    ) as bar:
        shown = bar.add_task("campaign", total=None)

        def on_row(row, done: int, total: int) -> None:
            bar.update(shown, completed=done, total=total, description=f"{row.task}: {row.status}")
            bar.console.print(f"[dim]{row.task}: {row.status} ({row.seconds:g} s) {row.detail[:160]}[/dim]")

        report = run(suite, settings, out_dir=out_dir, only=only, resume=resume, on_row=on_row)
    out.print((out_dir / "campaign.md").read_text(), markup=False, highlight=False, soft_wrap=True)
    err.print(f"[dim]written: {out_dir / 'campaign.json'}, {out_dir / 'campaign.md'}[/dim]")
    if not report.totals.get("won"):
        raise typer.Exit(NO_WIN_EXIT)
