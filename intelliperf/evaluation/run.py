"""`intelliperf eval`: how well a rewriter optimizes with intelliperf, over a set of cases.

A case is a program and a formula whose bottleneck it has: every `.py` file named (or found in a
named folder) with a `Labels:` line (`Labels: atomicContention=yes overlap=no ...`, in its
docstring as in benchmarks/corpus/, or as a `# Labels:` comment as in examples/) gives one case
per formula labelled yes.
Each case runs `optimize` once per row (a rewriter: `llm` with the model, `offline` = recipes
then search, or any single rewriter), in-process, with its own out-dir under OUT/runs/.

Per case and in total it reports what the field compares models by (KernelBench's fast_p):
correct (some attempt passed every correctness check), accepted (a validated win), fast_1 /
fast_1.5 (accepted with a measured speedup above 1.0x / 1.5x; on the CPU nothing is timed, so
these are null), the speedup with its interval, attempts and tokens to the first win, and
why the other attempts failed, by class (syntax, scope, policy, crash, timeout, mismatch, not
faster, metric). OUT/eval.json is rewritten after every case, so `--resume` continues a
cut-off run; OUT/eval.md and (with matplotlib) OUT/eval.png sit beside it. `--max-tokens` and
`--time-budget` bound the whole evaluation: a case is not started once either is spent.
"""

from __future__ import annotations

import datetime
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import IntelliPerfError, ModelError, UsageError
from ..files import output_folder, write_atomic
from ..models import Attempt, ProblemKind, Speedup
from ..settings import OptimizeSettings

_LABELS = re.compile(r"^(?:# )?Labels:\s*(.+)$", re.M)  # in the docstring, or a comment (keeps line numbers)
OFFLINE = "offline"  # the row name for `--rewriter auto` without a model: recipes, then search

# The first of an attempt's problem kinds decides its class; the order puts the cause before the
# consequences (a crash also leaves outputs unwritten, but it is a crash).
FAILURE_CLASSES: dict[str, tuple[ProblemKind, ...]] = {
    "syntax": ("syntax", "format"),
    "scope": ("scope", "unchanged"),
    "policy": ("policy",),
    "crash": ("crash", "not-launched", "replay-failed", "capture"),
    "timeout": ("timeout",),
    "mismatch": (
        "dispatch-count",
        "side-stream",
        "shape",
        "dtype",
        "missing-output",
        "mismatch",
        "nan",
        "nan-handling",
        "inf",
        "all-zero",
        "unwritten",
        "precision",
        "stale-result",
        "race",
        "aliased-output",
        "sanitizer",
        "unverified",
    ),
    "not faster": ("slower", "not-faster", "implausible-speed"),
    "metric": ("metric",),
}


class Case(BaseModel):
    program: Path = Field(description="the program file, absolute")
    formula: str

    @property
    def name(self) -> str:
        return f"{self.program.parent.name}/{self.program.stem}:{self.formula}"


class Outcome(BaseModel):
    """One case optimized by one row's rewriters."""

    case: str
    row: str
    status: Literal["won", "no-win", "nothing-found", "error", "skipped"]
    correct: bool = False
    accepted: bool = False
    fast_1: bool | None = Field(None, description="accepted and timed above 1.0x; None: nothing was timed (CPU)")
    fast_1_5: bool | None = None
    speedup: Speedup | None = None
    winner: str | None = None
    attempts: int = 0
    attempts_to_win: int | None = None
    tokens: int = 0
    tokens_to_win: int | None = None
    failures: dict[str, int] = Field(default_factory=dict, description="rejected attempts per failure class")
    seconds: float = 0.0
    detail: str = Field("", description="why: the error, the skipped budget, or the run's note")
    out_dir: str = ""


class Totals(BaseModel):
    cases: int
    correct: int
    accepted: int
    fast_1: int | None
    fast_1_5: int | None
    geomean_speedup: float | None = Field(None, description="over the accepted cases with a timed speedup")
    tokens: int
    failures: dict[str, int]
    skipped: int = Field(0, description="cases not run: the token or time budget was spent first")


class EvalReport(BaseModel):
    version: int = 1
    started: str
    device: str
    model: str | None = None
    api_base: str | None = None
    rows: list[str]
    settings: dict = Field(default_factory=dict, description="max_attempts, budgets, candidates")
    cases: list[str] = Field(default_factory=list, description="the case names, in order")
    outcomes: list[Outcome] = Field(default_factory=list)
    totals: dict[str, Totals] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def labels(program: Path) -> dict[str, bool] | None:
    """{formula: labelled yes} from the program's `Labels:` docstring line; None without one."""
    found = _LABELS.search(program.read_text(errors="replace"))
    if found is None:
        return None
    pairs = [item.partition("=") for item in found.group(1).split()]
    if any(not sep or value not in ("yes", "no") for _, sep, value in pairs):
        raise UsageError(f"{program}: the Labels line must be FORMULA=yes|no pairs, got {found.group(1)!r}")
    return {name: value == "yes" for name, _, value in pairs}


def find_cases(paths: list[Path], formula: str | None = None) -> list[Case]:
    """The cases in the named files and folders (a folder: every *.py file under it)."""
    cases: list[Case] = []
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path} does not exist", hint="Name programs or folders of programs to evaluate.")
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for program in files:
            found = labels(program)
            if found is None:
                if path.is_dir():
                    continue  # helpers (_harness.py) and programs nobody labelled
                raise UsageError(
                    f"{program} has no `Labels:` line in its docstring",
                    hint="Add e.g. `Labels: atomicContention=yes` to its docstring, the formulas "
                    "whose bottleneck it has.",
                )
            cases += [
                Case(program=program.resolve(), formula=f) for f, yes in found.items() if yes and formula in (None, f)
            ]
    if not cases:
        raise UsageError(
            "no case to evaluate: none of the programs is labelled yes" + (f" for {formula}" if formula else ""),
            hint="A case is a program whose docstring has a line such as `Labels: overlap=yes`.",
        )
    return cases


def classify(attempt: Attempt) -> str | None:
    """The failure class of a rejected attempt; None for a win or a search's sweep (a screen)."""
    if attempt.status == "accepted":
        return None
    tags = [p.kind for p in attempt.problems]
    if "sweep" in tags:
        return None
    if attempt.status == "timed-out":
        return "timeout"
    for name, kinds in FAILURE_CLASSES.items():
        if any(tag in kinds for tag in tags):
            return name
    return "other"


def outcome_of(case: Case, row: str, report, seconds: float, out_dir: Path) -> Outcome:
    """An Outcome from optimize's Report."""
    opt = report.optimization
    if opt is None:
        return Outcome(
            case=case.name,
            row=row,
            status="nothing-found",
            seconds=seconds,
            out_dir=str(out_dir),
            detail="; ".join(report.notes)[:500] or "the diagnosis found no bottleneck to fix",
        )
    tried = [a for a in opt.attempts if classify(a) is not None or a.status == "accepted"]
    winner = next((a for a in opt.attempts if a.number == opt.winner), None)
    timed = opt.speedup is not None
    out = Outcome(
        case=case.name,
        row=row,
        status="won" if winner else "no-win",
        seconds=seconds,
        out_dir=str(out_dir),
        attempts=len(opt.attempts),
        tokens=sum(a.tokens for a in opt.attempts),
        correct=any(a.verdict is not None and a.verdict.correct for a in tried),
        accepted=winner is not None,
        speedup=opt.speedup,
        winner=winner and winner.title,
        failures=dict(Counter(c for a in opt.attempts if (c := classify(a)) is not None)),
    )
    if winner is not None:
        out.attempts_to_win = winner.number
        out.tokens_to_win = sum(a.tokens for a in opt.attempts if a.number <= winner.number)
    if report.run.mode != "interpreter":  # a GPU run times every accepted candidate
        out.fast_1 = bool(timed and opt.speedup.estimate > 1.0)
        out.fast_1_5 = bool(timed and opt.speedup.estimate >= 1.5)
    return out


def _settings_text(settings) -> str:
    if isinstance(settings, dict):
        return ", ".join(f"{key}={value}" for key, value in settings.items()) or "defaults"
    return str(settings)


def totals(outcomes: list[Outcome]) -> Totals:
    ran = [o for o in outcomes if o.status != "skipped"]
    timed = [o for o in ran if o.fast_1 is not None]
    speedups = [o.speedup.estimate for o in ran if o.accepted and o.speedup is not None]
    failures: Counter = Counter()
    for o in ran:
        failures.update(o.failures)
    return Totals(
        cases=len(ran),
        correct=sum(o.correct for o in ran),
        accepted=sum(o.accepted for o in ran),
        fast_1=sum(bool(o.fast_1) for o in timed) if timed else None,
        fast_1_5=sum(bool(o.fast_1_5) for o in timed) if timed else None,
        geomean_speedup=statistics.geometric_mean(speedups) if speedups else None,
        tokens=sum(o.tokens for o in ran),
        failures=dict(failures),
        skipped=len(outcomes) - len(ran),
    )


def case_slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def run(
    cases: list[Case],
    rows: list[str],
    settings: OptimizeSettings,
    *,
    out_dir: Path,
    resume: bool = False,
    progress=None,
) -> EvalReport:
    """Optimize every case with every row's rewriters, each run with `settings` (its device, model, sandbox,
    `max_attempts` and `candidates` per case; `max_tokens` and `time_budget_s` are the whole evaluation's:
    a case is not started once either is spent); the report is rewritten after each case."""
    from .. import api

    api.check_paths(folders={"--out-dir": out_dir})
    output_folder(out_dir)  # before the cases' runs make folders inside it, so it ignores itself
    progress = progress or (lambda message: None)
    path = out_dir / "eval.json"
    max_tokens, time_budget_s = settings.max_tokens, settings.time_budget_s
    budget = {"max_attempts": settings.max_attempts, "max_tokens": max_tokens, "time_budget_s": time_budget_s}
    report = _start(
        path,
        resume,
        rows=rows,
        device=settings.device,
        model=settings.model,
        llm_options=settings.llm_options,
        settings={**budget, "candidates": settings.candidates},
    )
    report.cases = list(dict.fromkeys([*report.cases, *(c.name for c in cases)]))  # a resume adds cases
    done = {(o.row, o.case) for o in report.outcomes if o.status != "skipped"}
    report.outcomes = [o for o in report.outcomes if (o.row, o.case) in done]
    began = time.monotonic()
    for row in rows:
        for case in cases:
            if (row, case.name) in done:
                continue
            used = sum(o.tokens for o in report.outcomes)
            spent = time.monotonic() - began
            why = _budget_spent(used, spent, max_tokens, time_budget_s)
            if why:
                report.outcomes.append(Outcome(case=case.name, row=row, status="skipped", detail=why))
                continue
            where = out_dir / "runs" / case_slug(row) / case_slug(case.name)
            progress(f"{row} on {case.name}")
            try:
                left = {
                    "max_tokens": None if max_tokens is None else max_tokens - used,
                    "time_budget_s": None if time_budget_s is None else time_budget_s - spent,
                }
                outcome = _optimized(case, row, where, settings.model_copy(update=left), progress)
            except ModelError:
                _save(report, path)  # the endpoint is down or refuses the key: every next case would fail too
                raise
            report.outcomes.append(outcome)
            _save(report, path)
    _save(report, path)
    return report


def _budget_spent(used: int, spent: float, max_tokens: int | None, time_budget_s: float | None) -> str | None:
    """Why the next case run is skipped: the tokens or the seconds of the budget are spent (None: neither)."""
    if max_tokens is not None and used >= max_tokens or time_budget_s is not None and spent >= time_budget_s:
        return (
            f"token budget spent ({used} of {max_tokens})"
            if max_tokens is not None and used >= max_tokens
            else f"time budget spent ({spent:.0f} of {time_budget_s:g} s)"
        )
    return None


def _optimized(case: Case, row: str, where: Path, settings: OptimizeSettings, progress) -> Outcome:
    """One case optimized with one row's rewriters in `where` (`settings`' budget: what is left of the eval's),
    and its outcome; an error the user can fix is that case's outcome, but a model that fails raises."""
    from .. import api

    start = time.monotonic()
    try:
        result = api.optimize(
            [sys.executable, case.program.name],
            settings,
            formula=case.formula,
            cwd=str(case.program.parent),
            rewriter="auto" if row == OFFLINE else row,
            model=settings.model if row == "llm" else None,
            llm_options={**(settings.llm_options or {}), "transcript": where / "transcript.json"},
            out_dir=where,
            progress=partial(_prefixed, progress, f"  {case.name}: "),
        )
        return outcome_of(case, row, result, round(time.monotonic() - start, 1), where)
    except ModelError:
        raise  # the caller saves the report first
    except IntelliPerfError as exc:
        return Outcome(
            case=case.name,
            row=row,
            status="error",
            seconds=round(time.monotonic() - start, 1),
            detail=exc.message[:500],
            out_dir=str(where),
        )


def _prefixed(progress: Callable[[str], None], prefix: str, message: str) -> None:
    progress(prefix + message)


def _start(path: Path, resume: bool, **fields) -> EvalReport:
    fresh = EvalReport(
        started=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        device=fields["device"],
        model=fields["model"],
        api_base=(fields["llm_options"] or {}).get("api_base"),
        rows=fields["rows"],
        settings=fields["settings"],
    )
    if not path.exists():
        if resume:
            raise UsageError(f"--resume: there is no {path} to continue", hint="Drop --resume to start one.")
        return fresh
    if not resume:
        raise UsageError(
            f"{path} already holds an evaluation", hint="Pass --resume to continue it, or choose another --out-dir."
        )
    try:
        old = EvalReport.model_validate_json(path.read_text())
    except ValueError as exc:
        raise UsageError(f"--resume: {path} is not an intelliperf evaluation ({str(exc).splitlines()[0]})") from None
    same = ("max_attempts", "candidates")  # what a case's result depends on; the budgets may grow on resume
    model = fresh.model if "llm" in fresh.rows else old.model  # offline rows take no model
    if (old.model, old.device, *(old.settings.get(k) for k in same)) != (
        model,
        fresh.device,
        *(fresh.settings.get(k) for k in same),
    ):
        raise UsageError(
            f"--resume: {path} was run with model {old.model!r}, device {old.device}, "
            + ", ".join(f"{k} {old.settings.get(k)}" for k in same),
            hint="Resume with the same --model, --device, --max-attempts and --candidates, or choose "
            "another --out-dir.",
        )
    old.rows = list(dict.fromkeys([*old.rows, *fresh.rows]))
    old.settings = fresh.settings
    return old


def _save(report: EvalReport, path: Path) -> None:
    report.totals = {row: totals([o for o in report.outcomes if o.row == row]) for row in report.rows}
    output_folder(path.parent)
    write_atomic(str(path), report.model_dump_json(indent=1))
    write_atomic(str(path.with_suffix(".md")), markdown(report))
    plot(report, path.with_suffix(".png"))


def _fraction(n: int | None, of: int) -> str:
    return "n/a" if n is None else f"{n}/{of}"


def markdown(report: EvalReport) -> str:
    """The totals per row, then every case."""
    classes = [*FAILURE_CLASSES, "other"]
    lines = [
        f"# intelliperf eval: {len(report.cases)} cases on {report.device}",
        "",
        f"Model: {report.model or '(none)'}"
        + (f" at {report.api_base}" if report.api_base else "")
        + f"; started {report.started}; settings: {_settings_text(report.settings)}.",
        "",
        "| row | cases | correct | accepted | fast_1 | fast_1.5 | geomean speedup | tokens | "
        + " | ".join(classes)
        + " |",
        "|---" * (8 + len(classes)) + "|",
    ]
    for row, t in report.totals.items():
        lines.append(
            f"| {row} | {t.cases} | {t.correct}/{t.cases} | {t.accepted}/{t.cases} | "
            f"{_fraction(t.fast_1, t.cases)} | {_fraction(t.fast_1_5, t.cases)} | "
            f"{'-' if t.geomean_speedup is None else f'{t.geomean_speedup:.2f}x'} | {t.tokens} | "
            + " | ".join(str(t.failures.get(c, 0)) for c in classes)
            + " |"
        )
    skipped = {row: t.skipped for row, t in report.totals.items() if t.skipped}
    if skipped:
        why = next((o.detail for o in report.outcomes if o.status == "skipped"), "")
        lines += [
            "",
            "**Not every case ran**: "
            + ", ".join(f"{n} case(s) of {row}" for row, n in skipped.items())
            + f" skipped ({why}); the figures above cover the cases that ran. `--resume` runs the rest.",
        ]
    if report.device == "cpu":
        lines += [
            "",
            "On the CPU nothing is timed: *accepted* means correct and the formula's modelled metric "
            "improved; fast_1 and fast_1.5 need a GPU.",
        ]
    lines += [
        "",
        "| case | row | status | speedup [95 % CI] | winner | attempts (to win) | tokens (to win) | "
        "failures (or why) | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for o in report.outcomes:
        speed = f"{o.speedup.estimate:.2f}x [{o.speedup.low:.2f}, {o.speedup.high:.2f}]" if o.speedup else "-"
        why = ", ".join(f"{k} {v}" for k, v in o.failures.items()) or o.detail[:200].replace("|", "/") or "-"
        to_win = "-" if o.tokens_to_win is None else o.tokens_to_win
        lines.append(
            f"| {o.case} | {o.row} | {o.status} | {speed} | {o.winner or '-'} | "
            f"{o.attempts} ({o.attempts_to_win or '-'}) | {o.tokens} ({to_win}) | {why} | {o.seconds:g} |"
        )
    return "\n".join(lines) + "\n"


def _bar(outcome: Outcome | None) -> float:
    """A case's bar: its speedup when accepted and timed, 1 accepted untimed, 0 no win."""
    if outcome is None or not outcome.accepted:
        return 0.0
    return outcome.speedup.estimate if outcome.speedup else 1.0


def plot(report: EvalReport, path: Path) -> None:
    """Speedup per case and row (1.0 where nothing won); skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    cases = report.cases
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(cases) * max(1, len(report.rows))), 3.5))
    width = 0.8 / max(1, len(report.rows))
    for i, row in enumerate(report.rows):
        by_case = {o.case: o for o in report.outcomes if o.row == row}
        heights = [_bar(by_case.get(c)) for c in cases]
        ax.bar([x + i * width for x in range(len(cases))], heights, width, label=row)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cases))], cases, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("speedup (0: no win; 1: accepted, not timed)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
