"""The command-line options several commands share, declared once (typer's Annotated style).

Also the enums their choices come from, and the parsing of `-O KEY=VALUE` and the model's options.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from .. import env
from ..errors import UsageError


def parse_options(pairs: list[str]) -> dict:
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


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


class RegionData(str, Enum):
    auto = "auto"
    trace = "trace"
    tree = "tree"


def formula_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """`--formula <TAB>`: the registered formulas (plug-ins and `--formula-path` files given before it
    included), and `auto` where the command takes it."""
    from ..formulas import default_registry

    try:
        registry = default_registry(ctx.params.get("formula_path") or [])
    except UsageError:  # a broken formula file: complete what is registered without it
        registry = default_registry()
    names = registry.names() + (["auto"] if ctx.command.name == "optimize" else [])
    return sorted(n for n in names if n.startswith(incomplete))


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
FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", help="table, or json: the report on stdout for scripts (the table goes to stderr)."),
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


def llm_options(api_base: str | None, api_key_env: str | None, program: Path | None, reasoning: bool, **more) -> dict:
    """The llm rewriter's options from the model's command-line options."""
    if program is not None and not program.is_file():
        raise UsageError(f"--program {program} is not a file", hint="Save one with KernelRewriter().save(PATH).")
    return {"api_base": api_base, "api_key_env": api_key_env, "program": program, "reasoning": reasoning, **more}
