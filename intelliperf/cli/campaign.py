"""`intelliperf campaign SUITE`: every task of a suite diagnosed, optimized and judged by its own harness."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import NO_WIN_EXIT, err, out
from .interrupt import ctrl_c
from .options import Device, DeviceOption, MaxAttempts
from .outputs import check_outputs

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
Devices = Annotated[
    str | None,
    typer.Option("--devices", help="Run tasks side by side on these GPUs of this host, one each: `all` or 0,1."),
]
Ray = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="Run each task as a Ray task asking for one GPU, on the cluster at ADDRESS (`auto`, ray://HOST:PORT, "
        "or `local` to start one here); needs the ray extra.",
    ),
]
TaskBudget = Annotated[
    float | None, typer.Option("--time-budget", help="Per task: start no optimize attempt after this many seconds.")
]
ProgramTimeout = Annotated[float, typer.Option("--timeout", help="Seconds each of a task's program runs may take.")]
TaskTimeout = Annotated[
    float,
    typer.Option(
        "--task-timeout", metavar="SECONDS", help="Seconds a whole task may take; then it is stopped (a failed row)."
    ),
]
Rounds = Annotated[
    int, typer.Option("--rounds", help="GPU: runs of the task's performance command per side, taking turns.")
]
DeviceVariable = Annotated[
    str,
    typer.Option(
        "--device-variable",
        metavar="NAME",
        help="The variable that tells a task's programs the torch device (cpu or cuda).",
    ),
]


def campaign(
    suite: Suite,
    only: Only = None,
    out_dir: OutDir = Path("intelliperf-campaign"),
    resume: Resume = False,
    device: DeviceOption = Device.auto,
    devices: Devices = None,
    ray: Ray = None,
    max_attempts: MaxAttempts = 4,
    time_budget: TaskBudget = None,
    timeout: ProgramTimeout = 300.0,
    task_timeout: TaskTimeout = 1800.0,
    rounds: Rounds = 2,
    device_variable: DeviceVariable = "AKA_DEVICE",
) -> None:
    """Diagnose, optimize and judge again by their own harness every task of a suite."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..campaign.run import run

    check_outputs({}, {"--out-dir": out_dir})
    ctrl_c.watch(out_dir / "campaign.json", say="finished tasks are kept in {} (--resume continues)")
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    ) as bar:
        shown = bar.add_task("campaign", total=None)

        def on_row(row, done: int, total: int) -> None:
            bar.update(shown, completed=done, total=total, description=f"{row.task}: {row.status}")
            bar.console.print(f"[dim]{row.task}: {row.status} ({row.seconds:g} s) {row.detail[:160]}[/dim]")

        report = run(
            suite,
            out_dir=out_dir,
            only=only,
            resume=resume,
            device=device.value,
            devices=devices,
            ray_address=ray,
            max_attempts=max_attempts,
            time_budget_s=time_budget,
            program_timeout_s=timeout,
            task_timeout_s=task_timeout,
            device_variable=device_variable,
            rounds=rounds,
            on_row=on_row,
        )
    out.print((out_dir / "campaign.md").read_text(), markup=False, highlight=False, soft_wrap=True)
    err.print(f"[dim]written: {out_dir / 'campaign.json'}, {out_dir / 'campaign.md'}[/dim]")
    if not report.totals.get("won"):
        raise typer.Exit(NO_WIN_EXIT)
