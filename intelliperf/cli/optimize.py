"""`intelliperf optimize`: its own options, the OptimizeSettings built from them, and the result shown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..settings import OptimizeSettings, settled
from . import preflight
from .app import NO_WIN_EXIT, err, out, progress
from .interrupt import ctrl_c
from .options import (
    OPTIMIZE,
    ApiBase,
    ApiKeyEnv,
    Candidates,
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
    MaxAttempts,
    MaxTokens,
    Model,
    Output,
    OutputFormat,
    ProfileDir,
    ProgramFile,
    Reasoning,
    RegionData,
    RegionDataOption,
    SamplePrograms,
    SandboxEnv,
    Sarif,
    TimeBudget,
    Timeout,
    TopN,
    described,
    formula_names,
    llm_options,
    parse_options,
)
from .outputs import check_outputs, emit_streams, json_on_stdout, report_streams, stdout_for_report

if TYPE_CHECKING:
    from ..delivery.publish import Publish

# The options only optimize takes.
Formula = Annotated[
    str,
    typer.Option(
        "--formula",
        "-f",
        help="Formula whose bottleneck to fix; auto: ask every formula and fix the bottleneck that weighs most.",
        autocompletion=formula_names,
    ),
]
Rewriter = Annotated[
    str,
    typer.Option(
        "--rewriter",
        "-r",
        help="auto, llm, recipes, search, replay or a plug-in's name (auto: llm with "
        "a model, else recipes then search).",
    ),
]
Devices = Annotated[str | None, typer.Option("--devices", help=described(OptimizeSettings, "devices"))]
Transcript = Annotated[Path | None, typer.Option("--transcript", help=described(OptimizeSettings, "transcript"))]
SaveTranscript = Annotated[
    Path | None,
    typer.Option(
        "--save-transcript", help="Where the llm rewriter saves its answers (default OUT_DIR/transcript.json)."
    ),
]
Project = Annotated[Path | None, typer.Option("--project", help=described(OptimizeSettings, "project"))]
InPlace = Annotated[bool, typer.Option("--in-place", help=described(OptimizeSettings, "in_place"))]
Force = Annotated[bool, typer.Option("--force", help=described(OptimizeSettings, "force"))]
OutDir = Annotated[Path, typer.Option("--out-dir", help=described(OptimizeSettings, "out_dir"))]
CandidateTimeout = Annotated[
    float | None,
    typer.Option(
        "--candidate-timeout",
        help="Seconds each candidate's run and replay may take (default: "
        "4x the original's own + 30 s, scaled by the machine's "
        "load; a timeout on a busy machine is retried once).",
    ),
]
RacecheckCtas = Annotated[
    int | None,
    typer.Option(
        "--racecheck-ctas",
        help="CTAs of each launch compute-sanitizer's racecheck instruments, for kernels without inline assembly "
        "or atomics (a shared-memory race is one CTA's; default: one per SM; 0: every CTA).",
    ),
]
HeadStart = Annotated[
    bool | None,
    typer.Option(
        "--head-start/--no-head-start",
        help="Start each candidate's Pythons (program, replay, sanitizer and timing workers; torch and Triton "
        "imported) before it exists; the program's only for `python script.py` importing torch first "
        "(default: on machines with 4 cores or more).",
    ),
]
# Delivery: a branch with the winner, and a pull request.
Branch = Annotated[
    bool, typer.Option("--branch", help="Commit the winner on a new branch (your tree and index stay as they are).")
]
BranchName = Annotated[str | None, typer.Option("--branch-name", help="Its name (default intelliperf/FORMULA/KERNEL).")]
Base = Annotated[
    str | None,
    typer.Option("--base", help="Branch to build on and open the PR against (default: the current branch)."),
]
CreatePr = Annotated[
    bool,
    typer.Option(
        "--create-pr",
        help="Also push the branch and open (or update) a pull request; token from GITHUB_TOKEN or GH_TOKEN.",
    ),
]
Remote = Annotated[str, typer.Option("--remote", help="Git remote to push to.")]
GithubRepo = Annotated[
    str | None,
    typer.Option("--github-repo", help="OWNER/NAME (default $GITHUB_REPOSITORY, else from the remote's URL)."),
]
GithubApi = Annotated[
    str | None,
    typer.Option("--github-api", help="REST API base (default $GITHUB_API_URL, else https://api.github.com)."),
]
PrLabel = Annotated[list[str], typer.Option("--pr-label", help="Label for the pull request (repeatable).")]
# The sandbox candidate code runs in.
NoSandbox = Annotated[
    bool,
    typer.Option(
        "--no-sandbox", help="Run candidate code unconfined, with your permissions (said in the report and PR body)."
    ),
]
SandboxRead = Annotated[
    list[Path],
    typer.Option("--sandbox-read", help="A hidden folder (under $HOME, say) the program must read (repeatable)."),
]
SandboxNetwork = Annotated[bool, typer.Option("--sandbox-network", help="Let program runs reach the network.")]


def optimize(
    command: Command = None,
    formula: Formula = OPTIMIZE["formula"],
    formula_path: FormulaPaths = [],  # noqa: B006  (typer copies the default)
    formula_option: FormulaOptions = [],  # noqa: B006
    top_n: TopN = OPTIMIZE["top_n"],
    kernel: Kernel = OPTIMIZE["kernel"],
    device: DeviceOption = Device(OPTIMIZE["device"]),
    counters: CountersOption = Counters(OPTIMIZE["counters"]),
    sample_programs: SamplePrograms = OPTIMIZE["sample_programs"],
    profile_dir: ProfileDir = OPTIMIZE["profile_dir"],
    rewriter: Rewriter = OPTIMIZE["rewriter"],
    max_attempts: MaxAttempts = OPTIMIZE["max_attempts"],
    time_budget: TimeBudget = OPTIMIZE["time_budget_s"],
    max_tokens: MaxTokens = OPTIMIZE["max_tokens"],
    candidates: Candidates = OPTIMIZE["candidates"],
    devices: Devices = OPTIMIZE["devices"],
    model: Model = OPTIMIZE["model"],
    api_base: ApiBase = None,
    api_key_env: ApiKeyEnv = None,
    program: ProgramFile = None,
    reasoning: Reasoning = False,
    transcript: Transcript = OPTIMIZE["transcript"],
    save_transcript: SaveTranscript = None,
    project: Project = OPTIMIZE["project"],
    in_place: InPlace = OPTIMIZE["in_place"],
    force: Force = OPTIMIZE["force"],
    out_dir: OutDir = OPTIMIZE["out_dir"],
    timeout: Timeout = OPTIMIZE["timeout_s"],
    full_run: FullRun = not OPTIMIZE["stop_early"],
    region_data: RegionDataOption = RegionData(OPTIMIZE["region_data"]),
    # (the validation's and the branch's defaults, here as in ValidationSettings and Publish, are held to theirs
    # by tests/unit/cli/test_cli.py: reading them would import the validators at every start)
    candidate_timeout: CandidateTimeout = None,
    racecheck_ctas: RacecheckCtas = None,
    head_start: HeadStart = None,
    output: Output = OPTIMIZE["output"],
    markdown: Markdown = OPTIMIZE["markdown"],
    sarif: Sarif = OPTIMIZE["sarif"],
    branch: Branch = False,
    branch_name: BranchName = None,
    base: Base = None,
    create_pr: CreatePr = False,
    remote: Remote = "origin",
    github_repo: GithubRepo = None,
    github_api: GithubApi = None,
    pr_label: PrLabel = [],  # noqa: B006
    no_sandbox: NoSandbox = False,
    sandbox_read: SandboxRead = [],  # noqa: B006
    sandbox_env: SandboxEnv = [],  # noqa: B006
    sandbox_network: SandboxNetwork = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Find a kernel's bottleneck, rewrite it and keep the first validated, faster candidate."""
    given = dict(locals())  # the options by name, for the settings (taken before anything else is bound)
    from ..api import optimize as run_optimize

    outputs = {"--output": output, "--markdown": markdown, "--sarif": sarif}
    check_outputs(
        {**outputs, "--save-transcript": save_transcript}, {"--out-dir": out_dir, "--profile-dir": profile_dir}
    )
    streams = report_streams(outputs)
    if output_format is OutputFormat.json:
        streams = json_on_stdout(streams)
    if api_base and (rewriter == "llm" or (rewriter == "auto" and model)):  # auto: llm with a model
        preflight.check_model_endpoint(api_base)
    settings = optimize_settings(given, streams)
    ctrl_c.watch(out_dir / "report.json", say="the attempts so far are in {}")  # -o etc. written with it
    on_stdout = None in streams.values()
    with stdout_for_report(on_stdout):
        report = run_optimize(command or [], settings, progress=progress)
    _show_result(report, streams, out_dir, on_stdout)


def optimize_settings(given: dict[str, Any], streams: dict[str, Path | None]) -> OptimizeSettings:
    """The run's settings from optimize's options, checked as the API checks them; a report that goes to a
    stream is left to the CLI."""
    output, markdown, sarif = (None if f"--{key}" in streams else given[key] for key in ("output", "markdown", "sarif"))
    publish = _publish(given)
    transcript = given["save_transcript"] or given["out_dir"] / "transcript.json"
    model_access = (given["api_base"], given["api_key_env"], given["program"], given["reasoning"])
    llm = llm_options(*model_access, transcript=transcript)
    fields = {
        "formula": given["formula"],
        "formula_paths": given["formula_path"],
        "formula_options": parse_options(given["formula_option"]),
        "top_n": given["top_n"],
        "kernel": given["kernel"],
        "device": given["device"].value,
        "sample_programs": given["sample_programs"],
        "profile_dir": given["profile_dir"],
        "counters": given["counters"].value,
        "rewriter": given["rewriter"],
        "max_attempts": given["max_attempts"],
        "time_budget_s": given["time_budget"],
        "max_tokens": given["max_tokens"],
        "candidates": given["candidates"],
        "devices": given["devices"],
        "model": given["model"],
        "llm_options": llm,
        "transcript": given["transcript"],
        "project": given["project"],
        "validation": _validation(given),
        "in_place": given["in_place"],
        "force": given["force"],
        "out_dir": given["out_dir"],
        "timeout_s": given["timeout"],
        "output": output,
        "markdown": markdown,
        "sarif": sarif,
        "publish": publish,
        "stop_early": not given["full_run"],
        "region_data": given["region_data"].value,
    }
    return settled(OptimizeSettings, None, fields)


def _publish(given: dict[str, Any]) -> Publish | None:
    """Where the winner goes besides the out-dir: a branch, and a pull request (None: neither was asked for)."""
    from ..delivery.publish import Publish

    if not (given["branch"] or given["branch_name"] or given["create_pr"]):
        return None
    return Publish(
        branch=given["branch_name"],
        base=given["base"],
        create_pr=given["create_pr"],
        remote=given["remote"],
        github_repo=given["github_repo"],
        github_api=given["github_api"],
        labels=given["pr_label"],
    )


def _validation(given: dict[str, Any]) -> dict[str, Any]:
    """How candidates are validated (ValidationSettings' fields): their time limit, racecheck's reach, head
    starts and the sandbox."""
    sandbox = {
        "enabled": not given["no_sandbox"],
        "read": given["sandbox_read"],
        "env": given["sandbox_env"],
        "network": given["sandbox_network"],
    }
    limits = {"timeout_s": given["candidate_timeout"], "racecheck_ctas": given["racecheck_ctas"]}
    return {**limits, "head_start": given["head_start"], "sandbox": sandbox}


def _show_result(report, streams: dict[str, Path | None], out_dir: Path, on_stdout: bool) -> None:
    """The report on the console and its streams, the branch or PR made, and exit code 6 without a winner."""
    from ..delivery.console import print_report

    show = err if on_stdout else out
    print_report(report, show)
    emit_streams(report, streams)
    err.print(f"[dim]reports written to {out_dir / 'report.json'} and {out_dir / 'report.md'}[/dim]")
    if report.delivery:
        d = report.delivery
        show.print(
            f"Branch {d.branch}: commit {d.commit[:12]} on {d.base}"
            + (f"; pull request {d.pr_action}: {d.pr_url}" if d.pr_url else "")
        )
        for note in d.notes:
            err.print(f"[yellow]note: {note}[/yellow]")
    opt = report.optimization
    if opt is not None and opt.winner is None:
        raise typer.Exit(NO_WIN_EXIT)
