"""`intelliperf eval` and `intelliperf tune`: measure the rewriters on labelled cases, and tune the llm one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..settings import OptimizeSettings, TuneOptimizer, TuneSettings, settled
from . import preflight
from .app import EVAL_INCOMPLETE_EXIT, NO_WIN_EXIT, err, out, progress
from .interrupt import ctrl_c
from .options import (
    OPTIMIZE,
    ApiBase,
    ApiKeyEnv,
    Candidates,
    Device,
    DeviceOption,
    MaxAttempts,
    MaxTokens,
    Model,
    ProgramFile,
    Reasoning,
    SandboxEnv,
    TimeBudget,
    defaults,
    described,
    llm_options,
)
from .outputs import check_outputs


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
    device: DeviceOption = Device(OPTIMIZE["device"]),
    max_attempts: MaxAttempts = 4,  # (eval's own: per case)
    candidates: Candidates = OPTIMIZE["candidates"],
    max_tokens: MaxTokens = OPTIMIZE["max_tokens"],
    time_budget: TimeBudget = OPTIMIZE["time_budget_s"],
    sandbox_env: SandboxEnv = [],  # noqa: B006
    out_dir: Path = typer.Option(
        Path("intelliperf-eval"), "--out-dir", help="eval.json, eval.md, eval.png and each case's run go here."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the evaluation in --out-dir (its finished cases are kept)."
    ),
) -> None:
    """Measure how well a rewriter (a model, or the offline ones) optimizes a set of cases."""
    from ..evaluation.run import find_cases, run

    rows = _eval_rows(rewriter, model)
    paths = paths or _default_cases()
    check_outputs({}, {"--out-dir": out_dir})
    budget = {"max_attempts": max_attempts, "candidates": candidates, "max_tokens": max_tokens}
    fields = {
        **budget,
        "time_budget_s": time_budget,
        "device": device.value,
        "model": model,
        "llm_options": llm_options(api_base, api_key_env, program, reasoning),
        "validation": {"sandbox": {"env": sandbox_env}},
    }
    settings = settled(OptimizeSettings, None, fields)  # each case's, checked as optimize checks them
    if api_base and "llm" in rows:
        preflight.check_model_endpoint(api_base)
    cases = find_cases(paths, formula)
    ctrl_c.watch(out_dir / "eval.json")
    err.print(f"[dim]{len(cases)} cases x {len(rows)} rows ({', '.join(rows)}) -> {out_dir}[/dim]")
    report = run(cases, rows, settings, out_dir=out_dir, resume=resume, progress=progress)
    _show_eval(report, out_dir)


def _eval_rows(rewriter: list[str], model: str | None) -> list[str]:
    """The table's rows (--rewriter, once each; default llm and offline with a model, else offline), checked."""
    rows = list(dict.fromkeys(rewriter)) or (["llm", "offline"] if model else ["offline"])
    from ..rewriters import rewriter_registry

    registry = rewriter_registry()
    takes = ["llm", "offline", "recipes", "search", *(n for n in registry.names() if not registry.built_in(n))]
    unknown = [r for r in rows if r not in takes]
    if unknown:
        raise UsageError(f"--rewriter takes {', '.join(takes)}, got {', '.join(map(repr, unknown))}")
    if "llm" in rows and not model:
        raise UsageError(
            "the llm row needs a model", hint="Pass --model NAME (and --api-base URL), or set INTELLIPERF_MODEL."
        )
    return rows


def _default_cases() -> list[Path]:
    """The cases when none are named: examples/ and benchmarks/corpus/ in the current folder."""
    paths = [p for p in (Path("examples"), Path("benchmarks/corpus")) if p.is_dir()]
    if not paths:
        raise UsageError(
            "no cases named, and no examples/ or benchmarks/corpus/ here",
            hint="Name programs or folders: intelliperf eval my_kernels/ (each program's docstring "
            "says `Labels: FORMULA=yes`).",
        )
    return paths


def _show_eval(report, out_dir: Path) -> None:
    """The eval table, where it was written, and the exit code: 8 with case runs left, 6 with no win."""
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


TUNE = defaults(TuneSettings)


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
        TuneOptimizer,
        typer.Option("--optimizer", case_sensitive=False, help=described(TuneSettings, "optimizer", capital=False)),
    ] = TUNE["optimizer"],
    demos: Annotated[int, typer.Option("--demos", help=described(TuneSettings, "demos"))] = TUNE["demos"],
    rounds: Annotated[int, typer.Option("--rounds", help=described(TuneSettings, "rounds", capital=False))] = TUNE[
        "rounds"
    ],
    device: DeviceOption = Device(OPTIMIZE["device"]),
    sandbox_env: SandboxEnv = [],  # noqa: B006
    work_dir: Annotated[
        Path, typer.Option("--work-dir", help="Each judged answer's optimize run, and tune.json, go here.")
    ] = Path("intelliperf-tune"),
) -> None:
    """Tune the llm rewriter's DSPy program on labelled cases, with the validators' verdict as the metric."""
    from ..evaluation.run import find_cases
    from ..evaluation.tuning import tune as run_tune

    if not model:
        raise UsageError("tune needs a model", hint="Pass --model NAME (and --api-base URL), or set INTELLIPERF_MODEL.")
    if not paths:
        raise UsageError(
            "no cases named", hint="Name programs or folders: intelliperf tune examples/atomic_contention --model NAME"
        )
    check_outputs({"--out": saved}, {"--work-dir": work_dir})
    model_access = (api_base, api_key_env, program, reasoning)
    if api_base:
        preflight.check_model_endpoint(api_base)
    cases = find_cases(paths, formula)
    ctrl_c.watch(saved, work_dir / "tune.json")
    judging = {"device": device.value, "model": model, "validation": {"sandbox": {"env": sandbox_env}}}
    settings = settled(OptimizeSettings, None, {**judging, "llm_options": llm_options(*model_access)})
    tuning = settled(TuneSettings, None, {"optimizer": optimizer, "demos": demos, "rounds": rounds})
    report = run_tune(cases, settings, tuning, out=saved, work_dir=work_dir, progress=progress)
    accepted = sum(j.score == 1.0 for j in report.judged)
    err.print(
        f"[dim]{len(report.judged)} answers judged on {len(report.cases)} cases, {accepted} accepted; "
        f"{report.demos} demonstrations; written: {saved}, {work_dir / 'tune.json'}[/dim]"
    )
    for name, why in report.skipped.items():
        err.print(f"[yellow]skipped {name}: {why}[/yellow]")
    out.print(f"Tuned program: {saved} (use it with --program {saved})", highlight=False)
