"""What `diagnose` and `optimize` are asked to do, each as one typed object.

The CLI builds them from its options, the Action through the CLI, and API callers either pass
one (`api.optimize(cmd, OptimizeSettings(...))`) or keyword arguments of the same names, which
are checked the same way. A wrong name or type is a UsageError naming the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .delivery.publish import Publish
from .errors import UsageError
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
    top_n: int = Field(10, description="kernels with the most time to look at")
    kernel: str | None = Field(None, description="only kernels whose name matches this regex")
    device: str = Field("auto", description="auto, cpu (Triton's interpreter) or gpu")
    sample_programs: int = Field(32, description="programs per launch the address trace runs")
    trace_launches: int = Field(1, description="launches per kernel the address trace looks at")
    counters: str = Field("auto", description="hardware counters: auto, ncu, rocprofv3 or off")
    profile_dir: Path | None = Field(None, description="keep the profiler's files here")
    timeout_s: float | None = Field(None, description="stop the profiled command after this many seconds")
    cwd: str | None = Field(None, description="where the command runs (default: the current folder)")
    output: Path | None = Field(None, description="write the JSON report here")
    markdown: Path | None = Field(None, description="write the Markdown report here")
    sarif: Path | None = Field(None, description="write the findings as SARIF 2.1.0 here")
    stop_early: bool = Field(True, description="profiler passes stop the program after the launches they need")
    all_warps: bool = Field(False, description="region timers record every warp (default: the first of each group)")
    region_data: Literal["auto", "trace", "tree"] = Field(
        "auto",
        description="what the region timers read: Proton's trace, its per-scope totals (tree), or auto "
        "(totals where a launch has more than region_timers.TRACE_ROWS CTAs x recorded warps)",
    )


class OptimizeSettings(DiagnoseSettings):
    formula: Any = Field(
        "auto",
        description="the formula whose bottleneck to fix (a name, or a Formula class or instance); auto: every "
        "formula asked, and the bottleneck that weighs most (its kernel's share of the time x its severity) fixed",
    )
    project: Path | None = Field(None, description="the folder copied for each candidate (default: cwd)")
    rewriter: Any = Field("auto", description="a rewriter's name (--rewriter), or a Rewriter instance")
    max_attempts: int = Field(6, description="candidates to validate at most")
    time_budget_s: float | None = Field(None, description="start no attempt after this many seconds")
    max_tokens: int | None = Field(None, description="start no attempt once the model used this many tokens")
    candidates: int | None = Field(None, description="candidates per round (default 1, one per GPU with devices)")
    devices: str | None = Field(None, description="validate a round's candidates in parallel: 'all' or '0,1'")
    model: str | None = Field(None, description="the llm rewriter's model (default $INTELLIPERF_MODEL)")
    llm_options: dict | None = Field(None, description="the llm rewriter's options (LLMRewriter.Options)")
    transcript: Path | None = Field(None, description="answers to replay (rewriter 'replay')")
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    in_place: bool = Field(False, description="apply the validated winner to the project's files")
    force: bool = Field(False, description="with in_place: apply over uncommitted changes")
    out_dir: Path = Field(Path("intelliperf-out"), description="reports, patches and attempts go here")
    publish: Publish | None = Field(None, description="commit the winner on a branch (and open a pull request)")


def settled(cls: type[DiagnoseSettings], settings: DiagnoseSettings | None, options: dict) -> Any:
    """`settings` (or the defaults) with `options` on top, checked: a UsageError names what is wrong."""
    try:
        return cls.model_validate({**(dict(settings) if settings is not None else {}), **options})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid {cls.__name__}: {problems}") from None
