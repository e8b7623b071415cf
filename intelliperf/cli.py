"""`intelliperf` on the command line: parse options, call the Python API, print the result.

Heavy imports (torch, triton, pydantic models) happen inside the commands, so `--help` is
instant. Every IntelliPerfError becomes a message and its exit code, never a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from . import config, env, preflight
from .errors import IntelliPerfError, UsageError

app = typer.Typer(
    help="An automated GPU performance engineer for Triton kernels.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # the commands inherit it
)
# Progress and errors in a log or a pipe: whole lines, never hard-wrapped mid-sentence at 80 columns.
err = Console(stderr=True) if Console(stderr=True).is_terminal else Console(stderr=True, soft_wrap=True)
# Piped output (CI logs, files) gets room for the kernel table instead of rich's 80 columns.
out = Console() if Console().is_terminal else Console(width=120)

_COMMAND_SETTINGS = {"allow_interspersed_args": False}
NO_WIN_EXIT = 6  # optimize found the bottleneck but no candidate passed validation within the budget
EVAL_INCOMPLETE_EXIT = 8  # eval spent its token or time budget before every case ran


def _version(value: bool) -> None:
    if value:
        from . import __version__

        out.print(f"intelliperf {__version__}", highlight=False)
        raise typer.Exit()


@dataclass
class _Verbosity:
    quiet: bool = False
    verbose: bool = False
    started: float = 0.0


_verbosity = _Verbosity()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Progress lines with the seconds since the start, and debug messages."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines: results, warnings and errors only."),
) -> None:
    """An automated GPU performance engineer for Triton kernels."""
    import logging
    import time

    if verbose and quiet:
        raise UsageError("--verbose and --quiet contradict each other", hint="Pass one of them.")
    _verbosity.quiet, _verbosity.verbose, _verbosity.started = quiet, verbose, time.monotonic()
    logger = logging.getLogger("intelliperf")
    logger.setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    if verbose and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("intelliperf %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--formula-option expects KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


class Device(str, Enum):
    auto = "auto"  # a GPU when torch sees one, else the interpreter
    cpu = "cpu"
    gpu = "gpu"


class Counters(str, Enum):
    auto = "auto"
    ncu = "ncu"
    rocprofv3 = "rocprofv3"
    off = "off"


class RegionData(str, Enum):
    auto = "auto"
    trace = "trace"
    tree = "tree"


# Options several commands take, declared once (typer's Annotated style).
Command = Annotated[
    list[str] | None, typer.Argument(metavar="-- CMD [ARGS]...", help="The program to run.", show_default=False)
]
FormulaPaths = Annotated[list[Path], typer.Option("--formula-path", help="Load formulas from this file (repeatable).")]
FormulaOptions = Annotated[
    list[str],
    typer.Option(
        "--formula-option", "-O", help="KEY=VALUE option for the formula (`intelliperf formulas` lists them)."
    ),
]
TopN = Annotated[int, typer.Option("--top-n", "-n", help="Look at the N kernels with the most time.")]
Kernel = Annotated[str | None, typer.Option("--kernel", "-k", help="Only kernels whose name matches this regex.")]
DeviceOption = Annotated[
    Device,
    typer.Option(
        "--device",
        envvar=env.DEVICE,
        case_sensitive=False,
        help="Where kernels run: auto (a GPU when torch sees one), cpu (Triton's interpreter) or gpu.",
    ),
]
CountersOption = Annotated[
    Counters,
    typer.Option(
        "--counters",
        case_sensitive=False,
        help="Hardware counters: auto (when a GPU and its profiler are there), ncu, rocprofv3 or off.",
    ),
]
RegionDataOption = Annotated[
    RegionData,
    typer.Option(
        "--region-data",
        case_sensitive=False,
        help="What the region timers read: Proton's trace (per-iteration figures, overlap, timeline), its "
        "per-scope totals (tree: the loop's shares only, seconds faster on large grids), or auto (totals past "
        "1,024 CTAs x recorded warps).",
    ),
]
SamplePrograms = Annotated[
    int,
    typer.Option(
        "--sample-programs",
        help="Programs per launch the address trace runs (for formulas that read it: atomicContention, "
        "memoryAccess; bankConflict and overlap read the static view only).",
    ),
]
ProfileDir = Annotated[
    Path | None,
    typer.Option("--profile-dir", help="Keep the profiler's files here (the .ncu-rep opens in Nsight Compute)."),
]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Stop the profiled command after this many seconds.")]
FullRun = Annotated[
    bool,
    typer.Option(
        "--full-run",
        help="Let the program run to its end under the profilers "
        "(default: stopped once each top kernel had the launches "
        "ncu and the region timers look at).",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write the JSON report here.")]
Markdown = Annotated[Path | None, typer.Option("--markdown", help="Write a Markdown report here.")]
Sarif = Annotated[
    Path | None, typer.Option("--sarif", help="Write the findings as SARIF 2.1.0 here (GitHub code scanning).")
]
MaxAttempts = Annotated[int, typer.Option("--max-attempts", help="Candidates to validate at most (eval: per case).")]
Candidates = Annotated[
    int | None,
    typer.Option("--candidates", help="Candidates per round (best-of-N; default 1, or one per GPU with --devices)."),
]
TimeBudget = Annotated[
    float | None,
    typer.Option("--time-budget", help="Start nothing new (an attempt; eval: a case) after this many seconds."),
]
MaxTokens = Annotated[
    int | None, typer.Option("--max-tokens", help="Start nothing new once the model used this many tokens.")
]
SandboxEnv = Annotated[
    list[str],
    typer.Option(
        "--sandbox-env",
        help="Pass a variable whose value looks like a credential (a token, a URL with a password) "
        "but is configuration the program needs (repeatable; never a name that says secret).",
    ),
]
# The model's options (optimize and eval).
Model = Annotated[str | None, typer.Option("--model", envvar=env.MODEL, help="LLM model (LiteLLM name).")]
ApiBase = Annotated[str | None, typer.Option("--api-base", envvar=env.API_BASE, help="OpenAI-compatible endpoint URL.")]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option("--api-key-env", help="Variable with the API key (default INTELLIPERF_API_KEY, then OPENAI_API_KEY)."),
]
ProgramFile = Annotated[
    Path | None,
    typer.Option("--program", help="A saved (e.g. tuned) DSPy program of the llm rewriter (KernelRewriter.save)."),
]
Reasoning = Annotated[
    bool,
    typer.Option("--reasoning", help="llm: a step-by-step reasoning field before the answer (dspy.ChainOfThought)."),
]


def _llm_options(api_base: str | None, api_key_env: str | None, program: Path | None, reasoning: bool, **more) -> dict:
    """The llm rewriter's options from the model's command-line options."""
    if program is not None and not program.is_file():
        raise UsageError(f"--program {program} is not a file", hint="Save one with KernelRewriter().save(PATH).")
    return {"api_base": api_base, "api_key_env": api_key_env, "program": program, "reasoning": reasoning, **more}


def _progress(stage: str) -> None:
    import time

    from .redact import scrub

    if _verbosity.quiet:
        return
    elapsed = f"[{time.monotonic() - _verbosity.started:6.1f} s] " if _verbosity.verbose else ""
    err.print(Text(scrub(f"intelliperf: {elapsed}{stage}"), style="dim"))


def _check_outputs(files: dict[str, Path | None], folders: dict[str, Path | None]) -> None:
    """Every output location the user named, checked before anything runs (a read-only one used to
    end the run in a traceback, after it)."""
    for option, path in files.items():
        preflight.check_output(option, path)
    for option, path in folders.items():
        preflight.check_output(option, path, folder=True)


REPORT_KINDS = {"--output": "json", "--markdown": "markdown", "--sarif": "sarif"}


def _streams(outputs: dict[str, Path | None]) -> dict[str, Path | None]:
    """The report options that name a stream: stdout (`-`, /dev/stdout; None here), a FIFO or a device.
    The CLI writes each once, at the end: optimize rewrites its report files after every attempt,
    and a FIFO's reader takes one document."""
    streams = {
        option: None if preflight.is_stdout(path) else path
        for option, path in outputs.items()
        if path is not None and preflight.is_stream(path)
    }
    to_stdout = [option for option, path in streams.items() if path is None]
    if len(to_stdout) > 1:
        raise UsageError(
            f"{' and '.join(to_stdout)} name stdout, which takes one report", hint="Send the others to files."
        )
    return streams


@contextmanager
def _stdout_for_report(taken: bool) -> Iterator[None]:
    """With a report on stdout, stdout carries that report only: while the command runs, fd 1 is
    our stderr, so the program's own output goes there."""
    if not taken:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _emit(report, streams: dict[str, Path | None]) -> None:
    from .delivery.report import report_text
    from .files import write_atomic

    for option, path in streams.items():
        text = report_text(report, REPORT_KINDS[option])
        if path is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            write_atomic(path, text)


@dataclass
class _CtrlC:
    """Ctrl-C reaches the program intelliperf runs as well (one process group), and the traceback
    that program prints would pass through on our stderr. From the first Ctrl-C on, fd 2 goes to
    /dev/null; main() then says one line on a copy of it: what was written by then (`note`)."""

    stderr: int | None = None  # the copy of fd 2, once interrupted
    note: Callable[[], str] = lambda: "no report was written"

    def handler(self, signum, frame) -> None:
        if self.stderr is None:  # no flush here: the handler may run inside a write to stderr
            self.stderr = os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        raise KeyboardInterrupt

    def watch(self, *paths: Path | None, say: str = "written so far: {}") -> None:
        """The note names those of `paths` written from now on (a file from an earlier run is not this run's)."""

        def stamp(path: Path) -> tuple[int, int] | None:
            try:
                found = os.stat(path)
            except OSError:
                return None
            return found.st_ino, found.st_mtime_ns

        before = {path: stamp(path) for path in paths if path is not None}

        def note() -> str:
            written = [str(path) for path, was in before.items() if stamp(path) not in (None, was)]
            return say.format(", ".join(written)) if written else "no report was written"

        self.note = note

    def finish(self) -> int:
        line = f"intelliperf: interrupted: {self.note()}\n"
        if self.stderr is None:
            sys.stderr.write(line)
            return 130
        os.write(self.stderr, line.encode())
        os.dup2(self.stderr, 2)
        os.close(self.stderr)
        self.stderr = None
        return 130


_ctrl_c = _CtrlC()


@app.command(context_settings=_COMMAND_SETTINGS)
def diagnose(
    command: Command = None,
    formula: Annotated[
        str, typer.Option("--formula", "-f", help="Formula to apply (`intelliperf formulas`).")
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
) -> None:
    """Profile a program, rank its Triton kernels and diagnose the top ones."""
    from .api import diagnose as run_diagnose
    from .delivery.console import print_report
    from .settings import DiagnoseSettings

    outputs = {"--output": output, "--markdown": markdown, "--sarif": sarif}
    _check_outputs(outputs, {"--profile-dir": profile_dir})
    streams = _streams(outputs)
    output, markdown, sarif = (None if option in streams else path for option, path in outputs.items())
    _ctrl_c.watch(output, markdown, sarif)
    settings = DiagnoseSettings(
        formula=formula,
        formula_paths=formula_path,
        formula_options=_parse_options(formula_option),
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
    with _stdout_for_report(on_stdout):
        report = run_diagnose(command or [], settings, progress=_progress)
    print_report(report, err if on_stdout else out)
    _emit(report, streams)
    for path in (output, markdown, sarif, *streams.values()):
        if path is not None:
            err.print(f"[dim]report written to {path}[/dim]")


@app.command(context_settings=_COMMAND_SETTINGS)
def optimize(
    command: Command = None,
    formula: Annotated[
        str, typer.Option("--formula", "-f", help="Formula whose bottleneck to fix.")
    ] = "atomicContention",
    formula_path: FormulaPaths = [],  # noqa: B006  (typer copies the default)
    formula_option: FormulaOptions = [],  # noqa: B006
    top_n: TopN = 10,
    kernel: Kernel = None,
    device: DeviceOption = Device.auto,
    counters: CountersOption = Counters.auto,
    sample_programs: SamplePrograms = 32,
    profile_dir: ProfileDir = None,
    rewriter: str = typer.Option(
        "auto",
        "--rewriter",
        "-r",
        help="auto, llm, recipes, search, replay or a plug-in's name (auto: llm with "
        "a model, else recipes then search).",
    ),
    max_attempts: MaxAttempts = 6,
    time_budget: TimeBudget = None,
    max_tokens: MaxTokens = None,
    candidates: Candidates = None,
    devices: str | None = typer.Option(
        None,
        "--devices",
        help="Validate a round's candidates in parallel on these GPUs, one worker each: `all` or a list such as 0,1.",
    ),
    model: Model = None,
    api_base: ApiBase = None,
    api_key_env: ApiKeyEnv = None,
    program: ProgramFile = None,
    reasoning: Reasoning = False,
    transcript: Path | None = typer.Option(None, "--transcript", help="Answers to replay (--rewriter replay)."),
    save_transcript: Path | None = typer.Option(
        None, "--save-transcript", help="Where the llm rewriter saves its answers (default OUT_DIR/transcript.json)."
    ),
    project: Path | None = typer.Option(None, "--project", help="Folder copied for each candidate (default: cwd)."),
    in_place: bool = typer.Option(False, "--in-place", help="Apply the validated winner to your files."),
    force: bool = typer.Option(False, "--force", help="With --in-place: apply over uncommitted changes."),
    out_dir: Path = typer.Option(Path("intelliperf-out"), "--out-dir", help="Reports, patches and attempts go here."),
    timeout: Timeout = None,
    full_run: FullRun = False,
    region_data: RegionDataOption = RegionData.auto,
    candidate_timeout: float | None = typer.Option(
        None,
        "--candidate-timeout",
        help="Seconds each candidate's run and replay may take (default: "
        "4x the original's own + 30 s, scaled by the machine's "
        "load; a timeout on a busy machine is retried once).",
    ),
    racecheck_ctas: int | None = typer.Option(
        None,
        "--racecheck-ctas",
        help="CTAs of each launch compute-sanitizer's racecheck instruments, for kernels without inline assembly "
        "or atomics (a shared-memory race is one CTA's; default: one per SM; 0: every CTA).",
    ),
    head_start: bool | None = typer.Option(
        None,
        "--head-start/--no-head-start",
        help="Start each candidate's Pythons (program, replay, sanitizer and timing workers; torch and Triton "
        "imported) before it exists; the program's only for `python script.py` importing torch first "
        "(default: on machines with 4 cores or more).",
    ),
    output: Output = None,
    markdown: Markdown = None,
    sarif: Sarif = None,
    branch: bool = typer.Option(
        False, "--branch", help="Commit the winner on a new branch (your tree and index stay as they are)."
    ),
    branch_name: str | None = typer.Option(
        None, "--branch-name", help="Its name (default intelliperf/FORMULA/KERNEL)."
    ),
    base: str | None = typer.Option(
        None, "--base", help="Branch to build on and open the PR against (default: the current branch)."
    ),
    create_pr: bool = typer.Option(
        False,
        "--create-pr",
        help="Also push the branch and open (or update) a pull request; token from GITHUB_TOKEN or GH_TOKEN.",
    ),
    remote: str = typer.Option("origin", "--remote", help="Git remote to push to."),
    github_repo: str | None = typer.Option(
        None, "--github-repo", help="OWNER/NAME (default $GITHUB_REPOSITORY, else from the remote's URL)."
    ),
    github_api: str | None = typer.Option(
        None, "--github-api", help="REST API base (default $GITHUB_API_URL, else https://api.github.com)."
    ),
    pr_label: list[str] = typer.Option([], "--pr-label", help="Label for the pull request (repeatable)."),
    no_sandbox: bool = typer.Option(
        False,
        "--no-sandbox",
        help="Run candidate code unconfined, with your permissions (said in the report and PR body).",
    ),
    sandbox_read: list[Path] = typer.Option(
        [], "--sandbox-read", help="A hidden folder (under $HOME, say) the program must read (repeatable)."
    ),
    sandbox_env: SandboxEnv = [],  # noqa: B006
    sandbox_network: bool = typer.Option(False, "--sandbox-network", help="Let program runs reach the network."),
) -> None:
    """Find a kernel's bottleneck, rewrite it and keep the first validated, faster candidate."""
    from .api import optimize as run_optimize
    from .delivery.console import print_report
    from .delivery.publish import Publish
    from .settings import OptimizeSettings

    outputs = {"--output": output, "--markdown": markdown, "--sarif": sarif}
    _check_outputs(
        {**outputs, "--save-transcript": save_transcript}, {"--out-dir": out_dir, "--profile-dir": profile_dir}
    )
    streams = _streams(outputs)
    output, markdown, sarif = (None if option in streams else path for option, path in outputs.items())
    if api_base and (rewriter == "llm" or (rewriter == "auto" and model)):  # auto: llm with a model
        preflight.check_model_endpoint(api_base)

    publish = (
        Publish(
            branch=branch_name,
            base=base,
            create_pr=create_pr,
            remote=remote,
            github_repo=github_repo,
            github_api=github_api,
            labels=pr_label,
        )
        if branch or branch_name or create_pr
        else None
    )

    llm_options = _llm_options(
        api_base, api_key_env, program, reasoning, transcript=save_transcript or out_dir / "transcript.json"
    )
    from .validators import SandboxSettings, ValidationSettings

    if candidate_timeout is not None and candidate_timeout <= 0:
        raise UsageError(f"--candidate-timeout must be a positive number of seconds, got {candidate_timeout:g}")
    if racecheck_ctas is not None and racecheck_ctas < 0:
        raise UsageError(f"--racecheck-ctas must be 0 (every CTA) or a positive count, got {racecheck_ctas}")
    validation = ValidationSettings(
        timeout_s=candidate_timeout,
        racecheck_ctas=racecheck_ctas,
        head_start=head_start,
        sandbox=SandboxSettings(enabled=not no_sandbox, read=sandbox_read, env=sandbox_env, network=sandbox_network),
    )
    settings = OptimizeSettings(
        formula=formula,
        formula_paths=formula_path,
        formula_options=_parse_options(formula_option),
        top_n=top_n,
        kernel=kernel,
        device=device.value,
        sample_programs=sample_programs,
        profile_dir=profile_dir,
        counters=counters.value,
        rewriter=rewriter,
        max_attempts=max_attempts,
        time_budget_s=time_budget,
        max_tokens=max_tokens,
        candidates=candidates,
        devices=devices,
        model=model,
        llm_options=llm_options,
        transcript=transcript,
        project=project,
        validation=validation,
        in_place=in_place,
        force=force,
        out_dir=out_dir,
        timeout_s=timeout,
        output=output,
        markdown=markdown,
        sarif=sarif,
        publish=publish,
        stop_early=not full_run,
        region_data=region_data.value,
    )
    _ctrl_c.watch(out_dir / "report.json", say="the attempts so far are in {}")  # -o etc. written with it
    on_stdout = None in streams.values()
    with _stdout_for_report(on_stdout):
        report = run_optimize(command or [], settings, progress=_progress)
    show = err if on_stdout else out
    print_report(report, show)
    _emit(report, streams)
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


@app.command(context_settings=_COMMAND_SETTINGS)
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
    from .api import regions as run_regions
    from .delivery.console import print_report

    _check_outputs({}, {"--out-dir": out_dir})
    _ctrl_c.watch(out_dir / "report.json")
    report = run_regions(
        command or [],
        kernel=kernel,
        device=device.value,
        out_dir=out_dir,
        timeout_s=timeout,
        progress=_progress,
        stop_early=not full_run,
        all_warps=all_warps,
    )
    print_report(report, out)
    drawn = [f for d in report.diagnoses for ev in d.evidence if ev.regions for f in ev.regions.files.values()]
    if drawn:
        err.print(f"[dim]report written to {out_dir}; timeline: {', '.join(drawn)}[/dim]")
    else:
        err.print(f"[dim]report written to {out_dir}; no timeline (region timers run on a GPU only)[/dim]")


@app.command(name="eval")
def evaluate(
    paths: list[Path] | None = typer.Argument(
        None,
        metavar="CASES",
        help="Programs, or folders of programs, with a `Labels:` docstring "
        "line (default: examples/ and benchmarks/corpus/ here).",
    ),
    formula: str | None = typer.Option(None, "--formula", "-f", help="Only the cases of this formula."),
    rewriter: list[str] = typer.Option(
        [],
        "--rewriter",
        "-r",
        help="A row: llm, offline (recipes then search), recipes, search or a "
        "plug-in's name (repeatable; default: llm and offline with --model, "
        "else offline).",
    ),
    model: Model = None,
    api_base: ApiBase = None,
    api_key_env: ApiKeyEnv = None,
    program: ProgramFile = None,
    reasoning: Reasoning = False,
    device: DeviceOption = Device.auto,
    max_attempts: MaxAttempts = 4,
    candidates: Candidates = None,
    max_tokens: MaxTokens = None,
    time_budget: TimeBudget = None,
    sandbox_env: SandboxEnv = [],  # noqa: B006
    out_dir: Path = typer.Option(
        Path("intelliperf-eval"), "--out-dir", help="eval.json, eval.md, eval.png and each case's run go here."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the evaluation in --out-dir (its finished cases are kept)."
    ),
) -> None:
    """Measure how well a rewriter (a model, or the offline ones) optimizes a set of cases."""
    from .evaluation import find_cases, run

    rows = list(dict.fromkeys(rewriter)) or (["llm", "offline"] if model else ["offline"])
    from .rewriters import plugins

    takes = ["llm", "offline", "recipes", "search", *plugins()[0]]
    unknown = [r for r in rows if r not in takes]
    if unknown:
        raise UsageError(f"--rewriter takes {', '.join(takes)}, got {', '.join(map(repr, unknown))}")
    if "llm" in rows and not model:
        raise UsageError(
            "the llm row needs a model", hint="Pass --model NAME (and --api-base URL), or set INTELLIPERF_MODEL."
        )
    if not paths:
        paths = [p for p in (Path("examples"), Path("benchmarks/corpus")) if p.is_dir()]
        if not paths:
            raise UsageError(
                "no cases named, and no examples/ or benchmarks/corpus/ here",
                hint="Name programs or folders: intelliperf eval my_kernels/ (each program's docstring "
                "says `Labels: FORMULA=yes`).",
            )
    _check_outputs({}, {"--out-dir": out_dir})
    if api_base and "llm" in rows:
        preflight.check_model_endpoint(api_base)
    cases = find_cases(paths, formula)
    _ctrl_c.watch(out_dir / "eval.json")
    err.print(f"[dim]{len(cases)} cases x {len(rows)} rows ({', '.join(rows)}) -> {out_dir}[/dim]")
    report = run(
        cases,
        rows,
        out_dir=out_dir,
        resume=resume,
        device=device.value,
        model=model,
        llm_options=_llm_options(api_base, api_key_env, program, reasoning),
        max_attempts=max_attempts,
        max_tokens=max_tokens,
        time_budget_s=time_budget,
        candidates=candidates,
        sandbox_env=sandbox_env,
        progress=_progress,
    )
    out.print((out_dir / "eval.md").read_text(), markup=False, highlight=False, soft_wrap=True)
    err.print(f"[dim]written: {out_dir / 'eval.json'}, {out_dir / 'eval.md'}[/dim]")
    skipped = sum(t.skipped for t in report.totals.values())
    if skipped:
        err.print(
            f"[yellow]{skipped} case run(s) skipped: the budget was spent first; --resume runs them.[/]",
            highlight=False,
        )
        raise typer.Exit(EVAL_INCOMPLETE_EXIT)
    if not any(t.accepted for t in report.totals.values()):
        raise typer.Exit(NO_WIN_EXIT)


class Optimizer(str, Enum):
    bootstrap = "bootstrap"
    mipro = "mipro"


@app.command()
def tune(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="CASES",
            help="The training set: programs, or folders of programs, with a `Labels:` line (as for eval).",
            show_default=False,
        ),
    ] = None,
    saved: Annotated[Path, typer.Option("--out", help="Where the compiled program is saved (for --program).")] = Path(
        "intelliperf-program.json"
    ),
    formula: Annotated[str | None, typer.Option("--formula", "-f", help="Only the cases of this formula.")] = None,
    model: Model = None,
    api_base: ApiBase = None,
    api_key_env: ApiKeyEnv = None,
    program: ProgramFile = None,
    reasoning: Reasoning = False,
    optimizer: Annotated[
        Optimizer,
        typer.Option(
            "--optimizer",
            case_sensitive=False,
            help="bootstrap (dspy.BootstrapFewShot: accepted answers become demonstrations) or mipro "
            "(dspy.MIPROv2, light: also new instructions; many more model calls).",
        ),
    ] = Optimizer.bootstrap,
    demos: Annotated[int, typer.Option("--demos", help="Demonstrations to keep at most.")] = 2,
    rounds: Annotated[
        int, typer.Option("--rounds", help="bootstrap: answers asked per case until one is accepted.")
    ] = 1,
    device: DeviceOption = Device.auto,
    sandbox_env: SandboxEnv = [],  # noqa: B006
    work_dir: Annotated[
        Path, typer.Option("--work-dir", help="Each judged answer's optimize run, and tune.json, go here.")
    ] = Path("intelliperf-tune"),
) -> None:
    """Tune the llm rewriter's DSPy program on labelled cases, with the validators' verdict as the metric."""
    from .evaluation import find_cases
    from .tuning import tune as run_tune

    if not model:
        raise UsageError("tune needs a model", hint="Pass --model NAME (and --api-base URL), or set INTELLIPERF_MODEL.")
    if not paths:
        raise UsageError(
            "no cases named", hint="Name programs or folders: intelliperf tune examples/atomic_contention --model NAME"
        )
    _check_outputs({"--out": saved}, {"--work-dir": work_dir})
    if api_base:
        preflight.check_model_endpoint(api_base)
    cases = find_cases(paths, formula)
    _ctrl_c.watch(saved, work_dir / "tune.json")
    report = run_tune(
        cases,
        model=model,
        llm_options=_llm_options(api_base, api_key_env, program, reasoning),
        optimizer=optimizer.value,
        demos=demos,
        rounds=rounds,
        out=saved,
        work_dir=work_dir,
        device=device.value,
        sandbox_env=sandbox_env,
        progress=_progress,
    )
    accepted = sum(j.score == 1.0 for j in report.judged)
    err.print(
        f"[dim]{len(report.judged)} answers judged on {len(report.cases)} cases, {accepted} accepted; "
        f"{report.demos} demonstrations; written: {saved}, {work_dir / 'tune.json'}[/dim]"
    )
    for name, why in report.skipped.items():
        err.print(f"[yellow]skipped {name}: {why}[/yellow]")
    out.print(f"Tuned program: {saved} (use it with --program {saved})", highlight=False)


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


@app.command()
def formulas(
    formula_path: list[Path] = typer.Option([], "--formula-path", help="Also load formulas from this file."),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, or json for scripts."),
) -> None:
    """List the registered formulas and where each comes from."""
    from rich.table import Column, Table

    from .formulas import default_registry

    registry = default_registry(formula_path)
    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "evidence": list(registry.get(name).evidence),
            "summary": registry.get(name).summary,
            "metric": registry.get(name).metric,
            "options": {key: field.default for key, field in registry.get(name).Options.model_fields.items()},
            "from": registry.source(name),
        }
        for name in registry.names()
    ]
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    else:
        table = Table("evidence", "summary", "options (-O KEY=VALUE)", "from")
        table.columns.insert(0, Column("formula", no_wrap=True))  # a name the user types: never cut at 80 columns
        for row in rows:
            options = ", ".join(f"{key}={value!r}" for key, value in row["options"].items())
            table.add_row(row["name"], ", ".join(row["evidence"]) or "-", row["summary"], options or "-", row["from"])
        out.print(table)
    for name, why in registry.broken.items():
        err.print(f"[yellow]formula plug-in {name!r} failed to load: {why}[/yellow]")


@app.command()
def rewriters(
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, or json for scripts."),
) -> None:
    """List the rewriters --rewriter takes: the built-ins and the installed plug-ins."""
    from rich.table import Column, Table

    from .rewriters import ENTRY_POINT_GROUP, REWRITERS, plugins

    found, broken = plugins()
    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "summary": cls.summary,
            "options": sorted(cls.Options.model_fields),
            "from": "built-in" if name in REWRITERS else f"entry point {name!r} ({ENTRY_POINT_GROUP})",
        }
        for name, cls in {**REWRITERS, **found}.items()
    ]
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    else:
        table = Table(Column("rewriter", no_wrap=True), "summary", "options", "from")
        for row in rows:
            table.add_row(row["name"], row["summary"], ", ".join(row["options"]) or "-", row["from"])
        out.print(table)
        out.print("auto: llm when a model is configured, otherwise recipes then search.", highlight=False)
    for name, why in broken.items():
        err.print(f"[yellow]rewriter plug-in {name!r} failed to load: {escape(why)}[/yellow]")


@app.command()
def schema() -> None:
    """Print the JSON Schema of the report."""
    from .delivery.report import report_schema

    print(json.dumps(report_schema(), indent=2))


# What each option takes, as --help shows it (typer would print the Python type: <str>, <int>, <bool>).
METAVARS = {
    "--formula": "NAME",
    "--formula-path": "FILE",
    "--formula-option": "KEY=VALUE",
    "--top-n": "N",
    "--kernel": "REGEX",
    "--sample-programs": "N",
    "--profile-dir": "DIR",
    "--timeout": "SECONDS",
    "--output": "FILE",
    "--markdown": "FILE",
    "--sarif": "FILE",
    "--rewriter": "NAME",
    "--max-attempts": "N",
    "--time-budget": "SECONDS",
    "--max-tokens": "N",
    "--candidates": "N",
    "--devices": "GPUS",
    "--model": "NAME",
    "--api-base": "URL",
    "--api-key-env": "VARIABLE",
    "--transcript": "FILE",
    "--save-transcript": "FILE",
    "--demos": "N",
    "--rounds": "N",
    "--work-dir": "DIR",
    "--out": "FILE",
    "--program": "FILE",
    "--project": "DIR",
    "--out-dir": "DIR",
    "--candidate-timeout": "SECONDS",
    "--racecheck-ctas": "N",
    "--branch-name": "NAME",
    "--base": "BRANCH",
    "--remote": "NAME",
    "--github-repo": "OWNER/NAME",
    "--github-api": "URL",
    "--pr-label": "LABEL",
    "--sandbox-read": "DIR",
    "--sandbox-env": "VARIABLE",
}


def _options(command) -> set[str]:
    """The names of a command's options (what `[tool.intelliperf]` may set), not its positional arguments."""
    return {p.name for p in command.params if p.param_type_name == "option" and p.name}


# Help panels (a terminal's rich help): the long option names of each group.
PANELS = {
    "Diagnosis": "--formula --formula-path --formula-option --top-n --kernel --device --sample-programs --counters "
    "--profile-dir --timeout --full-run --region-data --all-warps",
    "Rewriting": "--rewriter --model --api-base --api-key-env --program --reasoning --transcript --save-transcript "
    "--optimizer --demos --rounds",
    "Budget": "--max-attempts --candidates --max-tokens --time-budget --candidate-timeout",
    "Validation and sandbox": "--devices --project --racecheck-ctas --head-start --no-sandbox --sandbox-read "
    "--sandbox-env --sandbox-network",
    "Output": "--output --markdown --sarif --format --out-dir --out --work-dir --resume --in-place --force",
    "Branch and pull request": "--branch --branch-name --base --create-pr --remote --github-repo --github-api "
    "--pr-label",
}
PANEL_OF = {name: panel for panel, names in PANELS.items() for name in names.split()}
EXAMPLES = {
    "diagnose": [
        "intelliperf diagnose -- python train.py --steps 3",
        "intelliperf diagnose -f memoryAccess -o - -- python bench.py",
    ],
    "optimize": [
        "intelliperf optimize -f atomicContention -- python train.py",
        "intelliperf optimize -f overlap --model gpt-4.1 --create-pr -- python bench.py",
    ],
    "regions": [
        "intelliperf regions -- python gemm.py",
        "intelliperf regions -k attention --all-warps -- python attn.py",
    ],
    "eval": [
        "intelliperf eval examples/ -r offline",
        "intelliperf eval my_kernels/ --model gpt-4.1 --max-tokens 200000",
    ],
    "tune": [
        "intelliperf tune examples/ --model gpt-4.1 --out tuned.json",
        "intelliperf tune cases/ --model gpt-4.1 --optimizer mipro",
    ],
    "formulas": ["intelliperf formulas", "intelliperf formulas --formula-path my_formula.py --format json"],
    "rewriters": ["intelliperf rewriters", "intelliperf rewriters --format json"],
}


def _command():
    """The click command typer builds from `app`, with readable metavars (flags show none) and
    `-- CMD [ARGS]...` (eval: `[CASES]...`) as the positional usage (typer would print `[-- CMD [ARGS]...]...` and
    the Python types <str>, <int>, <bool>)."""
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        if name in EXAMPLES:  # \b keeps click from rewrapping the lines
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
        for param in command.params:
            if param.param_type_name == "option":
                param.rich_help_panel = PANEL_OF.get(max(param.opts, key=len), "Other")
    for command in [group, *group.commands.values()]:
        command.get_help_option = _quiet_metavar(command.get_help_option)
        for param in command.params:
            if param.param_type_name == "option":  # typer ships its own click: no isinstance on click.Option
                long = max(param.opts, key=len)
                param.metavar = "" if param.is_flag else METAVARS.get(long, param.metavar)
            else:  # the positional list: the program (after --), or eval's cases
                usage = "-- CMD [ARGS]..." if param.name == "command" else f"[{param.metavar}]..."
                param.display_type_rich = lambda ctx: None
                command.collect_usage_pieces = lambda ctx, c=command, u=usage: [c.options_metavar, u]
    return group


def _quiet_metavar(make_option):
    """--help is made per call; it takes no value, so it shows none."""

    def made(ctx):
        option = make_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    return made


def main(argv: list[str] | None = None) -> int:
    import warnings

    # Triton 3.9 warns in every process that TRITON_DEFAULT_FP_FUSION is unset; the default stays as it is.
    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset", category=UserWarning)
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        # Help and usage errors in a log or a pipe: click's plain lines, not rich boxes hard-wrapped at 80 columns.
        typer.core.HAS_RICH = False
    main_thread = threading.current_thread() is threading.main_thread()  # only it may set a signal handler
    previous = signal.signal(signal.SIGINT, _ctrl_c.handler) if main_thread else None
    try:
        code = _run(argv)
        # After a Ctrl-C, whatever ended the run (typer's exit 130, an error the interruption caused)
        # was said on the muted stderr: the one line, and 130.
        return _ctrl_c.finish() if _ctrl_c.stderr is not None else code
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _run(argv: list[str] | None) -> int:
    try:
        group = _command()
        # [tool.intelliperf] in pyproject.toml: defaults under the command line's own flags
        defaults = config.default_map({name: _options(cmd) for name, cmd in group.commands.items()})
        group(args=argv, prog_name="intelliperf", default_map=defaults)  # click/typer handle usage errors (exit 2)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except KeyboardInterrupt:  # one that came before typer's own handling of it
        return _ctrl_c.finish()
    except IntelliPerfError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False)  # [brackets] are text
        if exc.hint:
            err.print(escape(exc.hint), style="dim", highlight=False)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
