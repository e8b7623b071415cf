"""The Python API. The CLI is a thin skin over these functions."""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import env, redact
from .delivery.git import find_repo
from .delivery.publish import Ready, deliver, prepare
from .diagnosis.checks import check_paths
from .diagnosis.passes import RegionsOnly, trace_settings
from .diagnosis.priorities import ASK_ALL, AUTO, chosen_note, left_launch_bound, ranked_bottlenecks
from .diagnosis.run import profile_and_diagnose
from .errors import ProfileStoppedError, UsageError
from .files import output_folder
from .formulas import default_registry
from .models import OptimizationStatus, Report
from .settings import DiagnoseSettings, OptimizeSettings, RegionsSettings, settled
from .workload.devices import parse_devices
from .workload.workspace import within

if TYPE_CHECKING:
    from .formulas import Formula, Registry
    from .models import Optimization
    from .optimization.session import Budget, Session
    from .profiling.aggregate import Recording
    from .rewriters import Rewriter
    from .validators import ValidationSettings

Progress = Callable[[str], None]
log = logging.getLogger("intelliperf")


def _logged(stage: str) -> None:
    """Progress for API callers that pass no `progress`: the `intelliperf` logger, at INFO."""
    log.info(redact.scrub(stage))


def diagnose(
    command: Sequence[str],
    settings: DiagnoseSettings | None = None,
    *,
    progress: Progress | None = None,
    **options,
) -> Report:
    """Run `command`, rank its Triton kernels and ask the formula about the top ones.

    `settings` (a DiagnoseSettings), or its fields as keyword arguments (`formula=...`, on top of
    `settings` when both are given). `counters`: "auto" reads hardware counters when the formula
    uses them and a GPU and its profiler (ncu, rocprofv3) are there; "ncu"/"rocprofv3" insist;
    "off" never profiles. `profile_dir` keeps the profiler's files (the .ncu-rep opens in Nsight
    Compute). `stop_early`: the profiler passes (ncu, region timers) stop the program once each top
    kernel had the launches they look at; the first run, which ranks the kernels, always runs to
    the end.

    Returns the Report that `intelliperf diagnose` prints and writes (`output` for JSON,
    `markdown` for Markdown, `sarif` for GitHub code scanning). Raises an IntelliPerfError
    subclass for anything the user can fix.
    """
    s = settled(DiagnoseSettings, settings, options)
    check_paths(
        files={"--output": s.output, "--markdown": s.markdown, "--sarif": s.sarif},
        folders={"--profile-dir": s.profile_dir},
    )
    registry = default_registry(s.formula_paths)
    s = named_formula(s, registry)
    the_formula = registry.create(s.formula, **(s.formula_options or {}))
    report, _ = profile_and_diagnose(list(command), the_formula, registry, s, progress=progress or _logged)
    from .delivery.report import write_reports

    write_reports(report, output=s.output, markdown=s.markdown, sarif=s.sarif)
    return report


def named_formula(s: DiagnoseSettings, registry: Registry) -> Any:
    """The settings with their formula as a name: a Formula class or instance given is registered for the call."""
    if isinstance(s.formula, str):
        return s
    return s.model_copy(update={"formula": registry.register(s.formula).name})


def regions(
    command: Sequence[str],
    settings: RegionsSettings | None = None,
    *,
    progress: Progress | None = None,
    **options,
) -> Report:
    """Time the regions of the top kernel (or the top one matching `kernel`) with compiler-inserted
    timers, without a formula: per-region cycles, overlap, the timeline (Perfetto JSON, PNG) in
    `out_dir`. Without a GPU, the regions and what the static view compiled in each. `all_warps`:
    record every warp of each CTA (default: the first of each warp group).

    `settings` (a RegionsSettings), or its fields as keyword arguments (on top of `settings` when both
    are given)."""
    from .delivery.report import write_reports
    from .profiling.region_timers import static_regions

    r = settled(RegionsSettings, settings, options)
    check_paths(folders={"--out-dir": r.out_dir})
    out = Path(r.out_dir).resolve()
    output_folder(out)  # before the timer pass writes into it, so the folder ignores itself
    fixed = {"top_n": 1, "sample_programs": 1, "counters": "off", "region_data": "trace"}  # the timeline is the point
    diagnosing = DiagnoseSettings(**r.model_dump(exclude={"out_dir"}), **fixed)
    report, recording = profile_and_diagnose(
        list(command), RegionsOnly(), default_registry(), diagnosing, progress=progress or _logged, timer_dir=out
    )
    for d in report.diagnoses:
        profile = next(k for k in report.kernels if k.name == d.kernel)
        if not any(ev.regions for ev in d.evidence):
            report.notes += static_regions(profile, d.evidence)
    write_reports(report, output=out / "report.json", markdown=out / "report.md")
    return report


def optimize(
    command: Sequence[str],
    settings: OptimizeSettings | None = None,
    *,
    progress: Progress | None = None,
    **options,
) -> Report:
    """Diagnose, then rewrite -> validate -> feed back until a candidate is correct, faster and
    improves the formula's metric, or the budget is spent.

    Writes `out_dir/report.json` and `report.md` (and `output`/`markdown` if given) after every
    attempt, each attempt's patch under `out_dir/attempts/`, and the winner as
    `out_dir/winner.patch`; with `in_place` the winner is applied to the project; with `publish`
    it is committed on its own branch (and pushed, with a pull request). The returned Report's
    `optimization` holds every attempt; it is None when no kernel has the bottleneck.

    `settings` (an OptimizeSettings), or its fields as keyword arguments (on top of `settings`
    when both are given); `rewriter` may be a Rewriter instance of the caller's.
    `devices` ("all" or "0,1"): validate each round's candidates in parallel, one worker per GPU;
    `candidates` (per round) then defaults to the number of GPUs.
    """
    from .delivery.report import write_reports
    from .rewriters import make_rewriters

    s = settled(OptimizeSettings, settings, options)
    progress = progress or _logged
    check_paths(
        files={"--output": s.output, "--markdown": s.markdown, "--sarif": s.sarif},
        folders={"--out-dir": s.out_dir, "--profile-dir": s.profile_dir},
    )
    budget = _budget(s)
    model = s.model or os.environ.get(env.MODEL) or None
    key_env = (s.llm_options or {}).get("api_key_env")
    redact.also(key_env)
    rewriters = make_rewriters(s.rewriter, model=model, llm_options=s.llm_options, transcript=s.transcript)
    root = Path(s.project or s.cwd or os.getcwd()).resolve()
    if not root.is_dir():
        raise UsageError(f"--project {root} is not a folder")
    out = Path(s.out_dir).resolve()
    s = s.model_copy(update={"project": root, "out_dir": out, "validation": _validation(s, key_env, root, out)})
    if s.in_place:
        check_clean(root, s.force)
    ready = prepare(s.publish, root) if s.publish else None
    registry = default_registry(s.formula_paths)
    s = named_formula(s, registry)
    auto = s.formula == AUTO
    the_formula = _diagnosing(s, registry)
    report, recording = profile_and_diagnose(
        list(command),
        the_formula,
        registry,
        _profile_bounded(s),
        progress=progress,
        timer_dir=Path(s.profile_dir) if s.profile_dir else out / "regions",
    )

    def write() -> None:
        write_reports(report, output=out / "report.json", markdown=out / "report.md")
        if s.output or s.markdown or s.sarif:
            write_reports(report, output=s.output, markdown=s.markdown, sarif=s.sarif)

    the_formula = _choose(report, registry) if auto else the_formula
    if report.selected is None:
        _nothing_to_fix(report, the_formula.name if not auto else None, write)
        return report
    _check_whole_run(recording, report, out, write)
    _check_workdir(report, root)
    progress(
        "rewriters: "
        + " then ".join(r.name for r in rewriters)
        + ("" if model else " (no model configured: pass --model NAME [--api-base URL] to use an LLM)")
    )
    session = _session(report, recording, the_formula, registry, s, budget, write, progress)
    optimization = _attempts(session, rewriters, write)
    if ready is not None:  # before --in-place, which makes the patched files differ from the commit
        _publish(ready, report, write)
    if s.in_place and optimization.winner is not None:
        apply_in_place(root, optimization, s.force, progress)
    write()
    return report


def _check_whole_run(recording: Recording, report: Report, out: Path, write: Callable[[], None]) -> None:
    """A program stopped at its time limit is diagnosed, not optimized: each validation runs it to its end."""
    if recording.stopped_at_s is not None:
        report.notes.append("no attempt: a fix is validated on the whole run, which the program did not finish")
        write()
        raise ProfileStoppedError(recording.stopped_at_s, str(out / "report.json"))


def _profile_bounded(s: OptimizeSettings) -> OptimizeSettings:
    """The time budget bounds the profiling run too: a program that runs longer is stopped there and
    diagnosed on what it launched until then (as at --timeout, whichever is shorter)."""
    if s.time_budget_s is None or (s.timeout_s is not None and s.timeout_s <= s.time_budget_s):
        return s
    return s.model_copy(update={"timeout_s": s.time_budget_s})


def _nothing_to_fix(report: Report, formula: str | None, write: Callable[[], None]) -> None:
    what = f"the {formula} bottleneck" if formula else "any bottleneck any formula finds"
    report.notes.append(f"nothing to optimize: no diagnosed kernel has {what}")
    write()


def _diagnosing(s: OptimizeSettings, registry: Registry) -> Formula:
    """The formula the diagnosis asks: the one named, or with --formula auto every registered one."""
    if s.formula != AUTO:
        return registry.create(s.formula, **(s.formula_options or {}))
    if s.formula_options:
        raise UsageError("--formula-option applies to one formula", hint="Name it: -f NAME -O KEY=VALUE.")
    return registry.create(ASK_ALL)


def _choose(report: Report, registry: Registry) -> Formula:
    """With --formula auto: the heaviest bottleneck found becomes the one to fix (`report.selected` its kernel),
    and the report says which, and what else was found."""
    ranked = ranked_bottlenecks(report)
    left = left_launch_bound(report)
    if left:
        report.notes.append(f"--formula auto leaves {', '.join(left)}: launch-bound (see the diagnosis)")
    if not ranked:
        report.selected = None
        return registry.create(ASK_ALL)
    report.notes.append(chosen_note(ranked))
    report.selected, report.formula = ranked[0][1], ranked[0][2].formula  # the diagnoses keep every formula's
    return registry.create(report.formula)


def _budget(s: OptimizeSettings) -> Budget:
    """The loop's budget from the settings (checked by their fields); `candidates` per round defaults to one per
    GPU."""
    from .optimization.session import Budget

    gpus = parse_devices(s.devices)
    return Budget(
        max_attempts=s.max_attempts,
        time_budget_s=s.time_budget_s,
        max_tokens=s.max_tokens,
        candidates=max(len(gpus), 1) if s.candidates is None else s.candidates,
        devices=gpus,
    )


def _validation(s: OptimizeSettings, key_env: str | None, root: Path, out: Path) -> ValidationSettings:
    """The validation settings, with the model's key among the secrets kept from candidate code; the
    sandbox is built once here so that a machine without one refuses before anything runs."""
    validation = s.validation.model_copy(deep=True)
    validation.secrets = sorted({*validation.secrets, *([key_env] if key_env else [])})
    validation.sandbox.build((root, out), validation.secrets)  # refuse before anything runs
    return validation


def _check_workdir(report: Report, root: Path) -> None:
    """The command's working directory must be inside the project folder copied for each candidate."""
    if not within(Path(report.run.cwd), root):
        raise UsageError(
            f"the command runs in {report.run.cwd}, outside the project folder {root}",
            hint="Pass --project DIR: the folder copied for each candidate must contain the command's "
            "working directory and the kernel's file.",
        )


def _session(
    report: Report,
    recording: Recording,
    the_formula: Formula,
    registry: Registry,
    s: OptimizeSettings,
    budget: Budget,
    write: Callable[[], None],
    progress: Progress,
) -> Session:
    """What the loop works on: the selected kernel, its finding and recording, and where it writes (`s` as
    `optimize` resolved it: its project and out-dir absolute, its validation's sandbox checked)."""
    from .optimization.session import Session

    assert report.selected is not None  # optimize returned before the loop where nothing was selected
    assert s.project is not None
    profile = next(k for k in recording.kernels if k.name == report.selected)
    present = [f for f in report.diagnosis(report.selected).findings if f.present]
    finding = next((f for f in present if f.formula == the_formula.name), present[0])
    return Session(
        report=report,
        profile=profile,
        finding=finding,
        recording=recording,
        formula=the_formula,
        registry=registry,
        root=s.project,
        out_dir=s.out_dir,
        trace=trace_settings(
            the_formula, registry, re.escape(profile.name), s.sample_programs, interpret=report.run.mode != "compiled"
        ),
        validation=s.validation,
        budget=budget,
        write=write,
        progress=progress,
    )


def _attempts(session: Session, rewriters: list[Rewriter], write: Callable[[], None]) -> Optimization:
    """The loop run; an interruption or a failure is recorded in the report (written) before it goes on up."""
    from .optimization import loop

    report = session.report
    started = time.perf_counter()
    try:
        optimization = loop.run(session, rewriters)
    except KeyboardInterrupt:
        _stop(report, "interrupted", "interrupted by the user (Ctrl-C)", write)
        raise
    except Exception as exc:
        _stop(report, "failed", f"{type(exc).__name__}: {exc}", write)
        raise
    report.stages["attempts"] = round(time.perf_counter() - started - report.stages.get("reference", 0), 3)
    return optimization


def _publish(ready: Ready, report: Report, write: Callable[[], None]) -> None:
    if report.optimization is None or report.optimization.winner is None:
        report.notes.append("no validated win, so no branch or pull request")
        return
    try:
        report.delivery = deliver(ready, report)
    except UsageError as exc:
        report.notes.append(f"branch / pull request not made: {exc}")
        write()  # the reports and the patch stay; the message says what to fix
        raise


def _stop(report: Report, status: OptimizationStatus, why: str, write: Callable[[], None]) -> None:
    if report.optimization is not None:
        report.optimization.status = status
        report.optimization.error = why
    write()


def check_clean(root: Path, force: bool) -> None:
    """--in-place needs a clean tree (tracked files), so the change can be reviewed and undone."""
    if force:
        return
    try:
        repo = find_repo(root)
    except UsageError:
        return  # no git: nothing to check; the patch file is the way back
    if repo is None:
        return
    try:
        dirty = repo.is_dirty(untracked_files=False) and repo.git.status("--porcelain", "--untracked-files=no")
    finally:
        repo.close()  # GitPython's `git cat-file` processes end here, not whenever it is collected
    if dirty:
        raise UsageError(
            f"--in-place refuses to change a git tree with uncommitted changes:\n{dirty}",
            hint="Commit or stash them first, or pass --force to apply over them.",
        )


def apply_in_place(root: Path, optimization, force: bool, progress: Progress = _logged) -> None:
    """Write the winner's files into the project, unless a file changed since the run began; outside git,
    each file's original is kept first (OUT_DIR/originals/), and said where."""
    from .rewriters.source import unified_diff

    check_clean(root, force)
    patch = Path(optimization.patch).read_text()
    new = {rel: Path(copy).read_text() for rel, copy in optimization.files.items()}
    for rel, text in new.items():
        if unified_diff(rel, (root / rel).read_text(), text) not in patch:
            optimization.notes.append(f"{rel} changed while intelliperf ran: not applied (the patch is kept)")
            return
    _keep_originals(root, optimization, progress)
    for rel, text in new.items():
        (root / rel).write_text(text)
    optimization.applied = True
    optimization.notes.append(f"applied to {', '.join(optimization.files)} (--in-place)")


def _keep_originals(root: Path, optimization, progress: Progress) -> None:
    """Outside a git repository nothing else holds the files --in-place overwrites: copies go under
    OUT_DIR/originals/ (same relative paths), and the run says where before it writes."""
    try:
        repo = find_repo(root)
    except UsageError:  # no git at all
        repo = None
    if repo is not None:
        repo.close()
        return
    folder = Path(optimization.patch).parent / "originals"
    for rel in optimization.files:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, folder / rel)
    where = f"{root} is not in a git repository: the originals of {', '.join(optimization.files)} are kept in {folder}"
    progress(f"--in-place: {where}")
    optimization.notes.append(where)
