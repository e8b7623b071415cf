"""The console summary (rich): top kernels, then each finding with its source lines."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..models import Attempt, Finding, Optimization, Report
from .report import bottleneck_claim, format_time, measure_text, speedup_text, warps_recorded

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "none": "green"}


def print_report(report: Report, console: Console) -> None:
    run = report.run
    console.print(Text(f"{run.device} · {run.mode} · times are {run.time_source}", style="dim"))
    console.print(_kernel_table(report))
    for diagnosis in report.diagnoses:
        for finding in diagnosis.findings:
            if finding.present or len(report.diagnoses) == 1:
                console.print(_finding_panel(diagnosis.kernel, finding))
    for diagnosis in report.diagnoses:
        for ev in diagnosis.evidence:
            if ev.regions is not None:
                console.print(regions_table(ev.regions))
    if report.formula == "regions":
        pass  # `intelliperf regions` asks no formula
    elif report.formula == "diagnoseOnly":
        found = sorted({f.formula for d in report.diagnoses for f in d.findings if f.present})
        if found:
            console.print(f"[bold]Bottlenecks found: {', '.join(found)} (see the kernels' verdicts above).[/bold]")
        else:
            console.print(f"[green]No formula found a bottleneck in the diagnosed kernels: {', '.join(report.top)}.[/]")
    elif report.selected:
        console.print(f"[bold]Bottleneck ({report.formula}) found first in [red]{report.selected}[/red].[/bold]")
    else:
        console.print(f"[green]No {report.formula} bottleneck in the diagnosed kernels: {', '.join(report.top)}.[/]")
    for d in report.diagnoses:
        if d.launch_bound:
            console.print(Text(f"note: {d.kernel} is {d.launch_bound}", style="dim"))
    for note in report.notes:
        console.print(Text(f"note: {note}", style="dim"))
    if report.optimization is not None:
        _print_optimization(report.optimization, console)


def _print_optimization(opt: Optimization, console: Console) -> None:
    table = Table(title=f"Optimization of {opt.kernel} ({', '.join(opt.rewriters)})", title_justify="left")
    for column in ("#", "rewriter", "candidate", "status", "metric", "kernel time", "speedup", "s"):
        table.add_column(column, justify="right" if column in ("#", "s") else "left")
    for a in opt.attempts:
        style = "green" if a.status == "accepted" else "red" if a.status == "invalid" else "yellow"
        table.add_row(
            str(a.number),
            a.rewriter,
            a.title,
            Text(a.status, style=style),
            measure_text(a.before, a.after, "metric"),
            _kernel_time(a),
            speedup_text(a.verdict.speedup if a.verdict else None),
            f"{a.wall_s():.1f}",
        )
    console.print(table)
    for a in opt.attempts:
        if a.status != "accepted" and a.reasons:
            console.print(Text(f"attempt {a.number}: " + a.reasons.splitlines()[0][:240], style="dim"))
    for note in opt.notes:
        console.print(Text(f"note: {note}", style="dim"))
    if opt.winner is not None and opt.speedup is None:
        console.print(
            f"[bold green]Correct fix: attempt {opt.winner}; speed not measured without a GPU.[/] Bottleneck "
            f"{bottleneck_claim(opt)} (modelled). Patch: {opt.patch}" + (" — applied." if opt.applied else "")
        )
    elif opt.winner is not None:
        console.print(
            f"[bold green]Validated win: attempt {opt.winner}, speedup {speedup_text(opt.speedup)}.[/] Bottleneck "
            f"{bottleneck_claim(opt)}. Patch: {opt.patch}" + (" — applied." if opt.applied else "")
        )
    elif opt.status in ("interrupted", "failed"):
        console.print(f"[bold red]Optimization {opt.status}: {opt.error}[/]")
    else:
        console.print(f"[bold yellow]No validated win in {len(opt.attempts)} attempt(s).[/]")


def _kernel_time(a: Attempt) -> Text | str:
    """The kernel's time before -> after where a GPU timed it; the interpreter's wall time says
    nothing about speed, so a CPU run shows none."""
    if a.verdict is None or a.verdict.faster is None:
        return Text("not timed (CPU)" if a.verdict is not None else "", style="dim")
    return measure_text(a.before, a.after, "kernel_time_s")


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
        table.add_row(
            str(rank),
            k.name,
            str(k.launches),
            format_time(k.total_time_s),
            format_time(k.mean_time_s),
            f"{k.share:.1%}",
            f"{Path(k.file).name}:{k.line}" if k.file else "?",
            _verdict(findings),
        )
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


def regions_table(r) -> Table:
    """Per-region cycles of one kernel (region timers)."""
    title = f"Regions of {r.kernel} (cycles per warp, {r.ctas} CTAs x {warps_recorded(r)})"
    if r.iteration_cycles:
        title += (
            f"; loop: {r.iteration_cycles:,.0f} cycles/iteration, {r.exposed_memory_share:.0%} memory, "
            f"{r.compute_share:.0%} compute"
        )
    elif r.loop_cycles_per_warp and r.exposed_memory_share is not None:
        title += (
            f"; loop: {r.loop_cycles_per_warp:,.0f} cycles/warp, {r.exposed_memory_share:.0%} memory, "
            f"{r.compute_share or 0:.0%} compute (Proton's totals)"
        )
    table = Table("region", "kind", "lines", "cycles/warp", "per execution", "of kernel", "of loop", title=title)
    for x in r.regions:
        table.add_row(
            x.name,
            x.kind,
            f"{x.first_line}-{x.last_line}" if x.first_line else "",
            f"{x.cycles_per_warp:,.0f}",
            f"{x.cycles_per_execution:,.0f}" if x.cycles_per_execution is not None else "",
            f"{x.share_of_kernel:.1%}" if x.share_of_kernel is not None else "",
            f"{x.share_of_loop:.1%}" if x.share_of_loop is not None else "",
        )
    return table
