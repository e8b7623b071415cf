"""The command-line options several commands share, declared once (typer's Annotated style).

Also the enums their choices come from, and the parsing of `-O KEY=VALUE` and the model's options. An
option that sets a settings field (intelliperf/settings.py) takes its default from the field, and its help
from the field's description where the two say the same.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from .. import env
from ..errors import UsageError
from ..settings import DiagnoseSettings, OptimizeSettings


def defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Each field's default, for the options that set the field (not a factory's: an empty list is the option's
    own, and the validation settings' would import the validators)."""
    return {name: field.default for name, field in model.model_fields.items() if field.default_factory is None}


def described(model: type[BaseModel], name: str, capital: bool = True) -> str:
    """A field's description as an option's help: `Write the JSON report here.` (`capital`: False where it
    begins with a value the option takes)."""
    text = model.model_fields[name].description or ""
    return f"{text[:1].upper() if capital else text[:1]}{text[1:]}."


DIAGNOSE, OPTIMIZE = defaults(DiagnoseSettings), defaults(OptimizeSettings)


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
TopN = Annotated[int, typer.Option("--top-n", "-n", help=described(DiagnoseSettings, "top_n"))]
Kernel = Annotated[str | None, typer.Option("--kernel", "-k", help=described(DiagnoseSettings, "kernel"))]
DeviceOption = Annotated[
    Device,
    typer.Option("--device", envvar=env.DEVICE, case_sensitive=False, help=described(DiagnoseSettings, "device")),
]
CountersOption = Annotated[
    Counters, typer.Option("--counters", case_sensitive=False, help=described(DiagnoseSettings, "counters"))
]
RegionDataOption = Annotated[
    RegionData,
    typer.Option("--region-data", case_sensitive=False, help=described(DiagnoseSettings, "region_data")),
]
SamplePrograms = Annotated[int, typer.Option("--sample-programs", help=described(DiagnoseSettings, "sample_programs"))]
ProfileDir = Annotated[Path | None, typer.Option("--profile-dir", help=described(DiagnoseSettings, "profile_dir"))]
Timeout = Annotated[float | None, typer.Option("--timeout", help=described(DiagnoseSettings, "timeout_s"))]
FullRun = Annotated[
    bool,
    typer.Option(
        "--full-run",
        help="Let the program run to its end under the profilers "
        "(default: stopped once each top kernel had the launches "
        "ncu and the region timers look at).",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help=described(DiagnoseSettings, "output"))]
Markdown = Annotated[Path | None, typer.Option("--markdown", help=described(DiagnoseSettings, "markdown"))]
Sarif = Annotated[Path | None, typer.Option("--sarif", help=described(DiagnoseSettings, "sarif"))]
MaxAttempts = Annotated[int, typer.Option("--max-attempts", help="Candidates to validate at most (eval: per case).")]
Candidates = Annotated[int | None, typer.Option("--candidates", help=described(OptimizeSettings, "candidates"))]
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
