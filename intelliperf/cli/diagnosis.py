"""`intelliperf diagnose` and `intelliperf regions`: profile a program and report on its top kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import err, out, progress
from .interrupt import ctrl_c
from .options import (
    Command,
    Counters,
    CountersOption,
    Device,
    DeviceOption,
    FormatOption,
    FormulaOptions,
    FormulaPaths,
    FullRun,
    Kernel,
    Markdown,
    Output,
    OutputFormat,
    ProfileDir,
    RegionData,
    RegionDataOption,
    SamplePrograms,
    Sarif,
    Timeout,
    TopN,
    formula_names,
    parse_options,
)
from .outputs import check_outputs, emit_streams, json_on_stdout, report_streams, stdout_for_report


def diagnose(
    command: Command = None,
    formula: Annotated[
        str,
        typer.Option(
            "--formula", "-f", help="Formula to apply (`intelliperf formulas`).", autocompletion=formula_names
        ),
    ] = "diagnoseOnly",
    formula_path: FormulaPaths = [],  # noqa: B006  (typer copies the default)
    formula_option: FormulaOptions = [],  # noqa: B006
    top_n: TopN = 10,
    kernel: Kernel = None,
    device: DeviceOption = Device.auto,
    sample_programs: SamplePrograms = 32,
    counters: CountersOption = Counters.auto,
    profile_dir: ProfileDir = None,
    timeout: Timeout = None,
    full_run: FullRun = False,
    region_data: RegionDataOption = RegionData.auto,
    output: Output = None,
    markdown: Markdown = None,
    sarif: Sarif = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Profile a program, rank its Triton kernels and diagnose the top ones."""
    from ..api import diagnose as run_diagnose
    from ..delivery.console import print_report
    from ..settings import DiagnoseSettings

    outputs = {"--output": output, "--markdown": markdown, "--sarif": sarif}
    check_outputs(outputs, {"--profile-dir": profile_dir})
    streams = report_streams(outputs)
    output, markdown, sarif = (None if option in streams else path for option, path in outputs.items())
    if output_format is OutputFormat.json:
        streams = json_on_stdout(streams)
    ctrl_c.watch(output, markdown, sarif)
    settings = DiagnoseSettings(
        formula=formula,
        formula_paths=formula_path,
        formula_options=parse_options(formula_option),
        top_n=top_n,
        kernel=kernel,
        device=device.value,
        sample_programs=sample_programs,
        counters=counters.value,
        profile_dir=profile_dir,
        timeout_s=timeout,
        output=output,
        markdown=markdown,
        sarif=sarif,
        stop_early=not full_run,
        region_data=region_data.value,
    )
    on_stdout = None in streams.values()
    with stdout_for_report(on_stdout):
        report = run_diagnose(command or [], settings, progress=progress)
    print_report(report, err if on_stdout else out)
    emit_streams(report, streams)
    for path in (output, markdown, sarif, *streams.values()):
        if path is not None:
            err.print(f"[dim]report written to {path}[/dim]")


def regions(
    command: Command = None,
    kernel: Annotated[
        str | None, typer.Option("--kernel", "-k", help="The top kernel whose name matches this regex.")
    ] = None,
    device: DeviceOption = Device.auto,
    out_dir: Path = typer.Option(
        Path("intelliperf-regions"), "--out-dir", help="Report, timeline (Perfetto JSON) and PNG go here."
    ),
    timeout: Timeout = None,
    full_run: Annotated[
        bool,
        typer.Option(
            "--full-run",
            help="Time every launch to the program's end (default: the first launch, then the program is stopped).",
        ),
    ] = False,
    all_warps: Annotated[
        bool,
        typer.Option(
            "--all-warps",
            help="Record every warp of each CTA (default: the first warp of each warp group; a smaller trace).",
        ),
    ] = False,
) -> None:
    """Time the regions of the top kernel with compiler-inserted timers (Proton) and draw its timeline."""
    from ..api import regions as run_regions
    from ..delivery.console import print_report

    check_outputs({}, {"--out-dir": out_dir})
    ctrl_c.watch(out_dir / "report.json")
    report = run_regions(
        command or [],
        kernel=kernel,
        device=device.value,
        out_dir=out_dir,
        timeout_s=timeout,
        progress=progress,
        stop_early=not full_run,
        all_warps=all_warps,
    )
    print_report(report, out)
    drawn = [f for d in report.diagnoses for ev in d.evidence if ev.regions for f in ev.regions.files.values()]
    if drawn:
        err.print(f"[dim]report written to {out_dir}; timeline: {', '.join(drawn)}[/dim]")
    else:
        err.print(f"[dim]report written to {out_dir}; no timeline (region timers run on a GPU only)[/dim]")
