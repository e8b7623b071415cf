"""The console summary (rich): top kernels, then each finding with its source lines."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..models import Finding, Report
from .report import format_time

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "none": "green"}


def print_report(report: Report, console: Console) -> None:
    run = report.run
    console.print(Text(f"{run.device} · {run.mode} · times are {run.time_source}", style="dim"))
    console.print(_kernel_table(report))
    for diagnosis in report.diagnoses:
        for finding in diagnosis.findings:
            if finding.present or len(report.diagnoses) == 1:
                console.print(_finding_panel(diagnosis.kernel, finding))
    if report.selected:
        console.print(f"[bold]Bottleneck ({report.formula}) found first in [red]{report.selected}[/red].[/bold]")
    else:
        console.print(f"[green]No {report.formula} bottleneck in the diagnosed kernels: {', '.join(report.top)}.[/]")
    for note in report.notes:
        console.print(Text(f"note: {note}", style="dim"))


def _kernel_table(report: Report) -> Table:
    table = Table(title=f"Triton kernels by total time ({report.run.launches} launches)", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("kernel", no_wrap=True)  # names are what the user searches for: never cut them
    for column in ("launches", "total", "mean", "share"):
        table.add_column(column, justify="right")
    table.add_column("source", overflow="ellipsis", max_width=32)
    table.add_column("verdict")
    verdicts = {d.kernel: d.findings for d in report.diagnoses}
    for rank, k in enumerate(report.kernels, start=1):
        findings = verdicts.get(k.name)
        table.add_row(str(rank), k.name, str(k.launches), format_time(k.total_time_s), format_time(k.mean_time_s),
                      f"{k.share:.1%}", f"{Path(k.file).name}:{k.line}" if k.file else "?", _verdict(findings))
    return table


def _verdict(findings: list[Finding] | None) -> Text:
    if findings is None:
        return Text("not diagnosed", style="dim")
    present = [f for f in findings if f.present]
    if not present:
        return Text("clean", style="green")
    return Text(", ".join(f"{f.formula} ({f.severity})" for f in present), style=_SEVERITY_STYLE[present[0].severity])


def _finding_panel(kernel: str, finding: Finding) -> Panel:
    parts: list = [Text(finding.explanation)]
    if finding.metric:
        m = finding.metric
        modelled = " — modelled on CPU, not measured" if finding.modelled else ""
        parts.append(Text(f"{m.name} = {m.value:g} {m.unit} ({m.better} is better){modelled}", style="bold"))
    for src in finding.lines:
        parts.append(Text(f"\n{src.file}:{src.line}  {src.detail}", style="bold"))
        if src.context:
            first = src.context[0][0]
            code = "\n".join(text for _, text in src.context)
            parts.append(Syntax(code, "python", line_numbers=True, start_line=first, highlight_lines={src.line}))
    title = f"{finding.formula} · {kernel} · {finding.severity if finding.present else 'not found'}"
    return Panel(Group(*parts), title=title, border_style=_SEVERITY_STYLE[finding.severity])
