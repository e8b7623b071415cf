"""`intelliperf diagnose` and `intelliperf regions`: profile a program and report on its top kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..settings import DiagnoseSettings, RegionsSettings, settled
from .app import err, out, progress
from .interrupt import ctrl_c
from .options import (
    DIAGNOSE,
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
    defaults,
    described,
    formula_names,
    parse_options,
)
from .outputs import check_outputs, emit_streams, json_on_stdout, report_streams, stdout_for_report

REGIONS = defaults(RegionsSettings)


def diagnose(
    command: Command = None,
    formula: Annotated[
        str,
        typer.Option(
            "--formula", "-f", help="Formula to apply (`intelliperf formulas`).", autocompletion=formula_names
        ),
    ] = DIAGNOSE["formula"],
    formula_path: FormulaPaths = [],  # noqa: B006  (typer copies the default)
    formula_option: FormulaOptions = [],  # noqa: B006
    top_n: TopN = DIAGNOSE["top_n"],
    kernel: Kernel = DIAGNOSE["kernel"],
    device: DeviceOption = Device(DIAGNOSE["device"]),
    sample_programs: SamplePrograms = DIAGNOSE["sample_programs"],
    counters: CountersOption = Counters(DIAGNOSE["counters"]),
    profile_dir: ProfileDir = DIAGNOSE["profile_dir"],
    timeout: Timeout = DIAGNOSE["timeout_s"],
    full_run: FullRun = not DIAGNOSE["stop_early"],
    region_data: RegionDataOption = RegionData(DIAGNOSE["region_data"]),
    output: Output = DIAGNOSE["output"],
    markdown: Markdown = DIAGNOSE["markdown"],
    sarif: Sarif = DIAGNOSE["sarif"],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Profile a program, rank its Triton kernels and diagnose the top ones."""
    from ..api import diagnose as run_diagnose
    from ..delivery.console import print_report

    outputs = {"--output": output, "--markdown": markdown, "--sarif": sarif}
    check_outputs(outputs, {"--profile-dir": profile_dir})
    streams = report_streams(outputs)
    output, markdown, sarif = (None if option in streams else path for option, path in outputs.items())
    if output_format is OutputFormat.json:
        streams = json_on_stdout(streams)
    ctrl_c.watch(output, markdown, sarif)
    fields = {
        "formula": formula,
        "formula_paths": formula_path,
        "formula_options": parse_options(formula_option),
        "top_n": top_n,
        "kernel": kernel,
        "device": device.value,
        "sample_programs": sample_programs,
        "counters": counters.value,
        "profile_dir": profile_dir,
        "timeout_s": timeout,
        "output": output,
        "markdown": markdown,
        "sarif": sarif,
        "stop_early": not full_run,
        "region_data": region_data.value,
    }
    settings = settled(DiagnoseSettings, None, fields)
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
    kernel: Annotated[str | None, typer.Option("--kernel", "-k", help=described(RegionsSettings, "kernel"))] = REGIONS[
        "kernel"
    ],
    device: DeviceOption = Device(REGIONS["device"]),
    out_dir: Annotated[Path, typer.Option("--out-dir", help=described(RegionsSettings, "out_dir"))] = REGIONS[
        "out_dir"
    ],
    timeout: Timeout = REGIONS["timeout_s"],
    full_run: Annotated[
        bool,
        typer.Option(
            "--full-run",
            help="Time every launch to the program's end (default: the first launch, then the program is stopped).",
        ),
    ] = not REGIONS["stop_early"],
    all_warps: Annotated[
        bool,
        typer.Option(
            "--all-warps",
            help="Record every warp of each CTA (default: the first warp of each warp group; a smaller trace).",
        ),
    ] = REGIONS["all_warps"],
) -> None:
    """Time the regions of the top kernel with compiler-inserted timers (Proton) and draw its timeline."""
    from ..api import regions as run_regions
    from ..delivery.console import print_report

    check_outputs({}, {"--out-dir": out_dir})
    ctrl_c.watch(out_dir / "report.json")
    fields = {"kernel": kernel, "device": device.value, "out_dir": out_dir, "timeout_s": timeout}
    settings = settled(RegionsSettings, None, {**fields, "stop_early": not full_run, "all_warps": all_warps})
    report = run_regions(command or [], settings, progress=progress)
    print_report(report, out)
    drawn = [f for d in report.diagnoses for ev in d.evidence if ev.regions for f in ev.regions.files.values()]
    if drawn:
        err.print(f"[dim]report written to {out_dir}; timeline: {', '.join(drawn)}[/dim]")
    else:
        err.print(f"[dim]report written to {out_dir}; no timeline (region timers run on a GPU only)[/dim]")
