"""The optimize loop: rewrite -> apply in a copy -> validate -> feed back, until a validated win.

A candidate wins when the validators find it correct (every kept dispatch, fresh-input and
unseen-shape replays, guards) and faster by their rule (on a GPU; on CPU speed is not
measured), AND the formula's metric improves, measured on the candidate's own run: the
validation run records the profile and the address trace too, so an attempt costs one run of
the user's program plus the cheap replay (and timing) worker.

The report is written after every attempt (`write`), so an interrupted run keeps what it did.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ..errors import IntelliPerfError, UsageError
from ..models import Attempt, KernelProfile, Optimization
from ..rewriters import Candidate, CodeUnit, HardwareFacts, PastAttempt, Rewriter, RewriteRequest
from ..rewriters.source import code_unit, launch_unit
from ..validators import Program, capture_reference
from ..workload.devices import spread_over
from ..workload.workspace import within
from .attempt import attempt_dir, run_attempt
from .head_start import start_next
from .measure import candidate_trace, measure_baseline
from .session import Session, Target, budget_spent, serial_device
from .verdict import rank, removed

# Fresh uniform draws at the recorded shape under the interpreter (a GPU's: ValidationSettings.trials, 3). There a
# call runs every program in Python, seconds each, on both sides of every replay; the input regimes that follow
# (negative, wide, non-finite, sparse, edge values) are fresh draws at that shape too, and with them the launcher
# still makes the calls the aliasing check compares there (ALIAS_CALLS).
INTERPRETED_TRIALS = 1


def run(session: Session, rewriters: list[Rewriter]) -> Optimization:
    """Run the loop; `session.report.optimization` is kept current and written after each attempt."""
    s = session
    baseline = measure_baseline(s)
    s.candidate_trace = candidate_trace(s, baseline)
    opt = Optimization(
        kernel=s.profile.name,
        formula=s.formula.name,
        rewriters=[r.name for r in rewriters],
        status="running",
        budget={
            "max_attempts": s.budget.max_attempts,
            "time_budget_s": s.budget.time_budget_s,
            "max_tokens": s.budget.max_tokens,
            "candidates": s.budget.candidates,
        },
        devices=s.budget.devices,
        baseline=baseline,
    )
    s.report.optimization = opt
    with tempfile.TemporaryDirectory(prefix="intelliperf-opt-") as tmp:
        work = Path(tmp)
        s.sandbox = s.validation.sandbox.build((s.root, s.out_dir, work, Path(s.report.run.cwd)), s.validation.secrets)
        opt.sandbox = s.sandbox.describe()
        try:
            start_next(s, work, 0)  # the first candidate's Pythons start while the reference is captured
            target = _reference(s, work, opt)
            opt.hardware = _hardware(s.report.run.mode == "interpreter").model_dump()
            s.write()
            queue = list(rewriters)
            while queue and opt.status == "running":
                stop = budget_spent(s, opt)
                if stop:
                    opt.notes.append(stop)
                    break
                if _round(s, opt, queue[0], target, work) == "declined":
                    queue.pop(0)
        finally:
            if s.ahead is not None:
                s.ahead.stop()
        if opt.status == "running" and opt.winner is not None:
            opt.status = "won"
            opt.notes.append(
                f"the winner (attempt {opt.winner}) is correct, but the {s.formula.name} formula, asked again of its "
                "own run, still finds the bottleneck: no candidate removed it"
            )
        if opt.status == "running":
            opt.status = "no-win"
            if not queue:
                opt.notes.append("every rewriter ran out of candidates")
    s.write()
    return opt


def _round(s: Session, opt: Optimization, rewriter: Rewriter, target: Target, work: Path) -> str:
    """One request, its candidates validated (best-of-N: all of them), the best accepted one kept."""
    request = _request(s, target, opt)
    begin = time.perf_counter()
    s.progress(f"attempt {len(opt.attempts) + 1}: asking the {rewriter.name} rewriter")
    candidates = _ask(rewriter, request, min(s.budget.candidates, s.budget.max_attempts - len(opt.attempts)))
    rewrite_s = (time.perf_counter() - begin) / max(len(candidates), 1)
    declined = next((c for c in candidates if c.declined), None)
    candidates = candidates[: candidates.index(declined)] if declined else candidates
    first = len(opt.attempts) + 1
    jobs = [(first + i, cand) for i, cand in enumerate(candidates)]
    tried = []

    def done(attempt: Attempt, cand: Candidate) -> None:
        attempt.seconds = {"rewrite": round(rewrite_s, 3), **attempt.seconds}
        opt.attempts.append(attempt)
        opt.attempts.sort(key=lambda a: a.number)
        opt.tokens += cand.tokens
        tried.append(attempt)
        s.progress(_summary(attempt))
        s.write()

    if len(s.budget.devices) > 1 and len(jobs) > 1:
        # One worker per GPU; each candidate's runs are pinned to its worker's GPU, where its speedup is
        # timed against the original too.
        def on_device(job: tuple[int, Candidate], device: str | None) -> Attempt:
            s.progress(f"attempt {job[0]}: on GPU {device}")
            return run_attempt(s, opt, target, job[1], work, job[0], device)

        spread_over(s.budget.devices, jobs, on_device, lambda job, attempt: done(attempt, job[1]))
    else:
        device = serial_device(s)
        for number, cand in jobs:
            done(run_attempt(s, opt, target, cand, work, number, device), cand)
    if declined and not tried:
        opt.notes.append(f"{rewriter.name}: {declined.declined}")
        s.progress(f"{rewriter.name} has no (more) candidates: {declined.declined}")
        return "declined"
    accepted = [a for a in opt.attempts if a.status == "accepted"]
    if accepted:
        best = max(accepted, key=lambda a: rank(a, s.finding))
        if best.number != opt.winner:
            opt.winner = best.number
            opt.speedup = best.verdict.speedup if best.verdict else None
            opt.bottleneck_removed = removed(best)
            _keep_winner(s, opt, best)
        # A faster fix that leaves the bottleneck in place wins, but the search goes on while budget
        # remains for one that removes it.
        if opt.bottleneck_removed:
            opt.status = "won"
        unjudged = [a for a in opt.attempts if a.status == "timed-out"]
        if unjudged and opt.status == "won":
            opt.notes.append(
                f"attempt(s) {', '.join(str(a.number) for a in unjudged)} timed out and were not judged "
                "(not found wrong): one of them may beat the winner; rerun with --candidate-timeout "
                "SECONDS above the limit they hit"
            )
        s.write()
    return "done"


def _ask(rewriter: Rewriter, request: RewriteRequest, n: int) -> list[Candidate]:
    """The rewriter's candidates; a rewriter that breaks is passed over with the reason, while
    configuration errors (no key, unreachable model) stop the run."""
    try:
        return rewriter.rewrite_many(request, n)
    except IntelliPerfError:
        raise
    except Exception as exc:  # a bug in a rewriter must not lose the run
        return [Candidate.decline(rewriter.name, f"the rewriter failed: {type(exc).__name__}: {exc}")]


def _lightest_launch_s(profile: KernelProfile) -> float:
    """The profiled device time of the kernel's lightest launch signature, per launch (autotuning's own
    launches aside): a timed call at any of the program's shapes takes at least about that long."""
    means = [sig.total_time_s / sig.launches for sig in profile.signatures if sig.launches > sig.tuning_launches]
    return min(means, default=profile.mean_time_s)


def _reference(s: Session, work: Path, opt: Optimization) -> Target:
    """Capture the reference run once, and locate the kernel and its launcher in the project."""
    if s.profile.file is None:
        raise IntelliPerfError(f"{s.profile.name}: the recorder found no source file for it, so it cannot be rewritten")
    kernel = _unit(s, Path(s.profile.file), s.profile.name, "kernel")  # before any run: a clear error early
    s.progress(f"capturing the reference outputs of {s.profile.name}")
    begin = time.perf_counter()
    if s.report.run.mode == "interpreter" and "trials" not in s.validation.model_fields_set:
        s.validation = s.validation.model_copy(update={"trials": INTERPRETED_TRIALS})
    program = Program(s.root, s.report.run.command, Path(s.report.run.cwd))
    reference = capture_reference(
        program,
        s.profile.name,
        interpret=s.report.run.mode == "interpreter",
        work_dir=work / "reference",
        settings=s.validation,
        sandbox=s.sandbox,
        exclude=(s.out_dir,),
        profiled=[signature.model_dump() for signature in s.profile.signatures],
    )
    s.report.stages["reference"] = round(time.perf_counter() - begin, 3)
    if s.report.run.mode != "interpreter":  # the timed reference must do the profiled work (timing.another_workload)
        s.validation = s.validation.model_copy(update={"profiled_launch_s": _lightest_launch_s(s.profile)})
    opt.notes += reference.notes
    info = reference.manifest.get("launcher") or {}
    launcher = None
    if info.get("file") and within(Path(info["file"]), reference.program.root):
        file = reference.original(info["file"])
        launcher = code_unit(file, info.get("qualname") or info["function"], s.root)
        if launcher is None and info.get("call_line"):  # module level, __main__, a nested function: the statement
            launcher = launch_unit(file, kernel.name, info["call_line"], s.root)
        info = {**info, "file": str(file)}
    for unit in (kernel, launcher):  # candidates are spliced into these texts, never re-read from the tree
        if unit is not None:
            s.originals.setdefault(unit.relpath, (s.root / unit.relpath).read_text())
    if launcher is None:
        opt.notes.append(
            f"the launch of {kernel.name} ({info.get('qualname') or '?'} in {info.get('file') or '?'}) "
            "cannot be rewritten: it is outside the project or not a `kernel[grid](...)` statement; only "
            "the kernel may change"
        )
    elif launcher.is_statement:
        opt.notes.append(
            f"the launch statement at line {launcher.line} of {launcher.relpath} (in "
            f"{info.get('qualname') or '?'}) is what a candidate may change besides the kernel"
        )
    return Target(reference, kernel, launcher)


def _unit(s: Session, file: Path, name: str, what: str) -> CodeUnit:
    if not within(file, s.root):
        raise UsageError(
            f"the {what} {name} is defined in {file}, outside the project folder {s.root}",
            hint="Run from the project's root, or pass --project DIR containing the kernel's file.",
        )
    unit = code_unit(file, name, s.root)
    if unit is None:
        raise UsageError(f"the {what} {name} is not a top-level function of {file}; only those can be rewritten")
    return unit


def _hardware(interpret: bool) -> HardwareFacts:
    if interpret:
        return HardwareFacts(
            device="no GPU (Triton interpreter on the CPU)",
            note="metrics are a model of the memory traffic; write for a current NVIDIA GPU",
        )
    import torch

    from ..validators.runs.performance import cached_bandwidth

    props = torch.cuda.get_device_properties(0)
    bandwidth = cached_bandwidth(props.name)
    shared = getattr(props, "shared_memory_per_multiprocessor", None)
    return HardwareFacts(
        device=props.name,
        sm_count=props.multi_processor_count,
        memory_bandwidth_gb_s=bandwidth / 1e9 if bandwidth else None,
        shared_memory_per_sm_kb=shared / 1024 if shared else None,
        warp_size=getattr(props, "warp_size", 32),
    )


def _request(s: Session, target: Target, opt: Optimization) -> RewriteRequest:
    """What the rewriter is asked: the kernel and its launcher, the diagnosis, the reference's first launch and
    what it writes, and every attempt so far."""
    launch, written = target.reference.manifest["launches"][0], target.reference.manifest["written"]
    sites = [site for ev in s.recording.evidence_of(s.profile.id) for site in ev.sites]
    history = [
        PastAttempt(
            number=a.number,
            rewriter=a.rewriter,
            title=a.title,
            outcome=a.status,
            reasons=a.reasons,
            diff=a.diff or None,
            chosen=a.chosen,
        )
        for a in opt.attempts
    ]
    return RewriteRequest(
        kernel=target.kernel,
        launcher=target.launcher,
        profile=s.profile,
        finding=s.finding,
        formula=s.formula.name,
        formula_sees_warps=s.formula.sees_warps_offline,
        problem=s.formula.problem,
        techniques=list(s.formula.techniques),
        metric=s.formula.metric,
        recipes=s.formula.recipes,
        sweep_first=s.formula.sweep_first,
        hardware=HardwareFacts(**opt.hardware),
        sites=sites,
        launch={"grid": launch.get("grid"), "options": launch.get("options"), "written": written},
        history=history,
        evidence=next((d.evidence for d in s.report.diagnoses if d.kernel == s.profile.name), []),
    )


def _summary(a: Attempt) -> str:
    text = f"attempt {a.number} ({a.rewriter}: {a.title}): {a.status}"
    if a.before and a.after and a.before.metric is not None and a.after.metric is not None:
        text += (
            f"; metric {a.before.metric:g} -> {a.after.metric:g}"
            + (" (modelled" if a.after.metric_modelled else " (measured")
            + (" in the candidate's process)" if a.after.metric_source == "candidate-process" else ")")
        )
    if a.verdict and a.verdict.speedup:
        sp = a.verdict.speedup
        text += f"; {sp.estimate:.2f}x [{sp.low:.2f}, {sp.high:.2f}]"
    if a.status != "accepted" and a.reasons:
        text += "\n  " + a.reasons.splitlines()[0][:300]
    return text


def _keep_winner(s: Session, opt: Optimization, attempt: Attempt) -> None:
    patch = s.out_dir / "winner.patch"
    patch.write_text(attempt.diff)
    opt.patch = str(patch)
    folder = attempt_dir(s, attempt.number) / "files"
    opt.files = {rel: str(folder / rel) for rel in attempt.files}
