"""What `diagnose`, `regions` and `optimize` are asked to do, each as one typed object: the one place
each option's default, constraint and description live.

The CLI builds them from its options (whose defaults and, where they say the same, help it reads from
these fields), the Action through the CLI, the config file (`[tool.intelliperf]`) through the CLI's
defaults, and API callers either pass one (`api.optimize(cmd, OptimizeSettings(...))`) or keyword
arguments of the same names; all go through `settled`, so a wrong name, type or value is the same
UsageError whichever way it came.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import UsageError

if TYPE_CHECKING:  # imported when OptimizeSettings is first used (`model_rebuild` below), not before: the CLI
    # reads these models' defaults at every start, and the validators would bring numpy and more with them
    from .delivery.publish import Publish
    from .validators import ValidationSettings


class DiagnoseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    formula: Any = Field(
        "diagnoseOnly",
        description="the formula to apply: a registered name (`intelliperf formulas`), or a Formula class or "
        "instance (registered for the call)",
    )
    formula_paths: list[Path] = Field(default_factory=list, description="files that define more formulas")
    formula_options: dict | None = Field(None, description="the formula's options (-O KEY=VALUE)")
    top_n: int = Field(10, ge=1, description="look at the N kernels with the most time")
    kernel: str | None = Field(None, description="only kernels whose name matches this regex")
    device: str = Field(
        "auto", description="where kernels run: auto (a GPU when torch sees one), cpu (Triton's interpreter) or gpu"
    )
    sample_programs: int = Field(
        32,
        ge=1,
        description="programs per launch the address trace runs (for formulas that read it: atomicContention, "
        "memoryAccess; bankConflict and overlap read the static view only)",
    )
    trace_launches: int = Field(1, description="launches per kernel the address trace looks at")
    counters: str = Field(
        "auto", description="hardware counters: auto (when a GPU and its profiler are there), ncu, rocprofv3 or off"
    )
    profile_dir: Path | None = Field(
        None, description="keep the profiler's files here (the .ncu-rep opens in Nsight Compute)"
    )
    timeout_s: float | None = Field(None, description="stop the profiled command after this many seconds")
    cwd: str | None = Field(None, description="where the command runs (default: the current folder)")
    output: Path | None = Field(None, description="write the JSON report here")
    markdown: Path | None = Field(None, description="write a Markdown report here")
    sarif: Path | None = Field(None, description="write the findings as SARIF 2.1.0 here (GitHub code scanning)")
    stop_early: bool = Field(True, description="profiler passes stop the program after the launches they need")
    all_warps: bool = Field(False, description="region timers record every warp (default: the first of each group)")
    region_data: Literal["auto", "trace", "tree"] = Field(
        "auto",
        description="what the region timers read: Proton's trace (per-iteration figures, overlap, timeline), its "
        "per-scope totals (tree: the loop's shares only, seconds faster on large grids), or auto (totals past "
        "1,024 CTAs x recorded warps)",
    )


def _validation_settings() -> ValidationSettings:
    from .validators import ValidationSettings

    return ValidationSettings()


class OptimizeSettings(DiagnoseSettings):
    formula: Any = Field(
        "auto",
        description="the formula whose bottleneck to fix (a name, or a Formula class or instance); auto: every "
        "formula asked, and the bottleneck that weighs most (its kernel's share of the time x its severity) fixed",
    )
    project: Path | None = Field(None, description="the folder copied for each candidate (default: cwd)")
    rewriter: Any = Field("auto", description="a rewriter's name (--rewriter), or a Rewriter instance")
    max_attempts: int = Field(6, ge=1, description="candidates to validate at most")
    time_budget_s: float | None = Field(None, gt=0, description="start no attempt after this many seconds")
    max_tokens: int | None = Field(None, ge=1, description="start no attempt once the model used this many tokens")
    candidates: int | None = Field(
        None, ge=1, description="candidates per round (best-of-N; default 1, or one per GPU with --devices)"
    )
    devices: str | None = Field(
        None,
        description="validate a round's candidates in parallel on these GPUs, one worker each: `all` or a list "
        "such as 0,1",
    )
    model: str | None = Field(None, description="the llm rewriter's model (default $INTELLIPERF_MODEL)")
    llm_options: dict | None = Field(None, description="the llm rewriter's options (LLMRewriter.Options)")
    transcript: Path | None = Field(None, description="answers to replay (--rewriter replay)")
    validation: ValidationSettings = Field(default_factory=_validation_settings)
    in_place: bool = Field(False, description="apply the validated winner to your files")
    force: bool = Field(False, description="with --in-place: apply over uncommitted changes")
    out_dir: Path = Field(Path("intelliperf-out"), description="reports, patches and attempts go here")
    publish: Publish | None = Field(None, description="commit the winner on a branch (and open a pull request)")

    @classmethod
    def model_rebuild(cls, **kwargs: Any) -> bool | None:
        """Where pydantic completes the model on its first use: the two field types it waited for, imported."""
        from .delivery.publish import Publish
        from .validators import ValidationSettings

        globals().update(Publish=Publish, ValidationSettings=ValidationSettings)
        return super().model_rebuild(**kwargs)


def _diagnose_field(name: str) -> Any:
    return DiagnoseSettings.model_fields[name]


class RegionsSettings(BaseModel):
    """What `regions` is asked: the diagnose settings it reads (their fields, defaults and checks), and where
    its files go; the rest is fixed (the top kernel, no formula, no counters, Proton's trace)."""

    model_config = ConfigDict(extra="forbid")

    kernel: str | None = Field(None, description="the top kernel whose name matches this regex")
    device: str = _diagnose_field("device")
    timeout_s: float | None = _diagnose_field("timeout_s")
    cwd: str | None = _diagnose_field("cwd")
    stop_early: bool = _diagnose_field("stop_early")
    all_warps: bool = _diagnose_field("all_warps")
    out_dir: Path = Field(Path("intelliperf-regions"), description="report, timeline (Perfetto JSON) and PNG go here")


TuneOptimizer = Literal["bootstrap", "mipro"]  # (dspy's: BootstrapFewShot, MIPROv2)


class TuneSettings(BaseModel):
    """What `tune` is asked besides the runs it judges answers with (an OptimizeSettings): the DSPy optimizer."""

    model_config = ConfigDict(extra="forbid")

    optimizer: TuneOptimizer = Field(
        "bootstrap",
        description="bootstrap (dspy.BootstrapFewShot: accepted answers become demonstrations) or mipro "
        "(dspy.MIPROv2, light: also new instructions; many more model calls)",
    )
    demos: int = Field(2, ge=1, description="demonstrations to keep at most")
    rounds: int = Field(1, ge=1, description="bootstrap: answers asked per case until one is accepted")


class CampaignSettings(BaseModel):
    """What `campaign` is asked: where its tasks run, and each task's budget."""

    model_config = ConfigDict(extra="forbid")

    device: str = _diagnose_field("device")
    devices: str | None = Field(
        None, description="run tasks side by side on these GPUs of this host, one each: `all` or 0,1"
    )
    ray_address: str | None = Field(
        None,
        description="run each task as a Ray task asking for one GPU, on the cluster at ADDRESS (`auto`, "
        "ray://HOST:PORT, or `local` to start one here); needs the ray extra",
    )
    max_attempts: int = Field(4, ge=1, description="per task: candidates to validate at most")
    time_budget_s: float | None = Field(
        None, gt=0, description="per task: start no optimize attempt after this many seconds"
    )
    program_timeout_s: float = Field(300.0, description="seconds each of a task's program runs may take")
    task_timeout_s: float = Field(
        1800.0, description="seconds a whole task may take; then it is stopped (a failed row)"
    )
    device_variable: str = Field(
        "AKA_DEVICE", description="the variable that tells a task's programs the torch device (cpu or cuda)"
    )
    rounds: int = Field(2, description="GPU: runs of the task's performance command per side, taking turns")


# The command line's option for a field, where it is not the field's name with dashes (less a unit `_s`);
# OFF: the flag that sets the field to False.
OPTIONS = {
    "ray_address": "--ray",
    "program_timeout_s": "--timeout",
    "formula_paths": "--formula-path",
    "formula_options": "--formula-option",
    "stop_early": "--full-run",
    "validation.timeout_s": "--candidate-timeout",
    "validation.sandbox.enabled": "--no-sandbox",
    "validation.sandbox.read": "--sandbox-read",
    "validation.sandbox.env": "--sandbox-env",
    "validation.sandbox.network": "--sandbox-network",
}
OFF = ("stop_early", "validation.sandbox.enabled")


def option_of(field: str) -> str:
    """`--max-attempts` for `max_attempts`, `--candidate-timeout` for `validation.timeout_s`."""
    return OPTIONS.get(field) or "--" + field.rpartition(".")[2].removesuffix("_s").replace("_", "-")


def settled(cls: type[BaseModel], settings: BaseModel | None, options: dict) -> Any:
    """`settings` (or the defaults) with `options` on top, checked: a UsageError says what is wrong, a value
    out of its field's range as the command line's option (the same message from the API, the CLI and the
    config file)."""
    try:
        return cls.model_validate({**(dict(settings) if settings is not None else {}), **options})
    except ValidationError as exc:
        ranges = [_out_of_range(e) for e in exc.errors()]
        if all(ranges):
            raise UsageError("; ".join(r for r in ranges if r)) from None
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid {cls.__name__}: {problems}") from None


def _out_of_range(error: Any) -> str | None:
    """`--max-attempts must be at least 1, got 0` for a value a field's `ge`/`gt` refuses (None: another error)."""
    option, got, limits = option_of(".".join(map(str, error["loc"]))), error["input"], error.get("ctx") or {}
    if error["type"] == "greater_than_equal":
        return f"{option} must be at least {limits['ge']}, got {got}"
    if error["type"] == "greater_than" and limits.get("gt") == 0:
        unit = " of seconds" if str(error["loc"][-1]).endswith("_s") else ""
        return f"{option} must be a positive number{unit}, got {got:g}"
    return None
