"""The optimize loop: rewrite -> apply in a copy -> validate -> feed back, until a validated win.

A candidate wins when the validators find it correct (every kept dispatch, fresh-input and
unseen-shape replays, guards) and faster by their rule (on a GPU; on CPU speed is not
measured), AND the formula's metric improves, measured on the candidate's own run: the
validation run records the profile and the address trace too, so an attempt costs one run of
the user's program plus the cheap replay (and timing) worker.

The report is written after every attempt (`write`), so an interrupted run keeps what it did.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import IntelliPerfError, UsageError
from .files import output_folder
from .formulas import Formula, Registry
from .models import Attempt, Evidence, Finding, KernelProfile, Measure, Optimization, Report, Speedup, Verdict
from .profiling.aggregate import STATIC_BACKEND, Recording, load_recording
from .profiling.window import tuned_configs
from .rewriters import Candidate, CodeUnit, HardwareFacts, PastAttempt, Rewriter, RewriteRequest
from .rewriters.source import (
    NotPython,
    ScopeError,
    check_scope,
    code_unit,
    is_jit,
    item_name,
    launch_unit,
    module_items,
    splice,
    splice_items,
    statement_block,
    unified_diff,
)
from .validators import (
    Ahead,
    Program,
    ReferenceRun,
    ValidationSettings,
    capture_reference,
    copy_project,
    start_ahead,
    validate,
)
from .validators.policy import PolicyError, check_module_item, check_statement
from .validators.policy import check as check_policy
from .validators.workers import busy, fits_beside, run_limit
from .workload.devices import pinned_env, spread_over
from .workload.head_start import HeadStart
from .workload.runner import TraceSettings
from .workload.sandbox import Sandbox
from .workload.workspace import in_copy, within

if TYPE_CHECKING:
    from .profiling.region_timers import TimerRun

IMPROVEMENT = 0.01  # the metric must move by more than 1 % in its better direction
# Head starts by default from this many cores: on the 2-core CPU machine the first one slowed the reference
# capture it overlaps by about what it saved the candidate's run (1.2 s against 1.0 s, README example).
HEAD_START_CPUS = 4


@dataclass
class Budget:
    max_attempts: int = 6
    time_budget_s: float | None = None
    max_tokens: int | None = None
    candidates: int = 1  # per round (best-of-N)
    devices: list[str] = field(default_factory=list)  # GPUs to validate a round's candidates on, one worker each

    def check(self) -> None:
        if self.max_attempts < 1:
            raise UsageError(f"--max-attempts must be at least 1, got {self.max_attempts}")
        if self.candidates < 1:
            raise UsageError(f"--candidates must be at least 1, got {self.candidates}")
        if self.time_budget_s is not None and self.time_budget_s <= 0:
            raise UsageError(f"--time-budget must be a positive number of seconds, got {self.time_budget_s:g}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(f"--max-tokens must be at least 1, got {self.max_tokens}")


@dataclass
class Session:
    """What the loop needs from the diagnosis, and where it writes."""

    report: Report
    profile: KernelProfile
    finding: Finding
    recording: Recording
    formula: Formula
    registry: Registry
    root: Path
    out_dir: Path
    trace: TraceSettings  # what the diagnosis recorded besides the launches (address trace, static view)
    validation: ValidationSettings
    budget: Budget
    write: Callable[[], None]
    progress: Callable[[str], None]
    started: float = field(default_factory=time.perf_counter)
    originals: dict[str, str] = field(default_factory=dict)  # the files a candidate may change, as the run began
    sandbox: Sandbox | None = None  # every program run of the loop goes through it
    ahead: Started | None = None  # the next attempt's folder, and the Pythons started for it
    candidate_trace: TraceSettings | None = None  # what a candidate's validation run records (`_candidate_trace`)


@dataclass
class Started:
    """The next attempt's folder and the Pythons started for it (`_start_ahead`): its validation's, and its
    region-timer run's where the formula reads region timers."""

    where: Path
    validation: Ahead
    timers: HeadStart | None = None  # for `region_timers.collect(where=where / "timers")`

    def stop(self) -> None:
        self.validation.stop()
        if self.timers is not None:
            self.timers.stop()

    def started(self, timeout_s: float) -> str | None:
        """Once every one of them has its start-up over (it then takes no CPU until its run comes); what
        kept them, where `timeout_s` passed first."""
        heads = [*self.validation.heads(), *([self.timers] if self.timers else [])]
        deadline = time.perf_counter() + timeout_s
        while not all(head.started() for head in heads):
            if time.perf_counter() > deadline:
                return (
                    f"the next candidate's Pythons, started beside this validation, were still starting after "
                    f"{timeout_s:g} s: their start-up may have taken CPU from the timing"
                )
            time.sleep(0.02)
        return None


@dataclass
class TimersBeside:
    """A candidate's region-timer run started with its validation (`_timers_beside`): its start-up, its
    program's work before its first launch and that launch's compilation run beside the validation; the
    GPU turn it then waits for is the loop's until the validation is over."""

    where: Path  # its `collect(where=...)`
    lock: int  # the turn, held: the file descriptor of its lock
    thread: threading.Thread
    out: list  # [its TimerRun] once the run is over

    def quiet(self) -> str | None:
        """Before the validation's timing: until the run waits for its turn (or has ended)."""
        from .profiling import region_timers

        deadline = time.perf_counter() + PARK_WAIT_S
        while self.thread.is_alive() and not region_timers.parked(self.where):
            if time.perf_counter() > deadline:
                return (
                    f"the candidate's region-timer run, started beside its validation, had not reached its first "
                    f"launch after {PARK_WAIT_S:g} s: what it ran on the GPU before may have shared it with the timing"
                )
            time.sleep(0.02)
        return None

    def finish(self, timeout_s: float) -> TimerRun | None:
        """The turn given to the run (its launch runs now), and the run once it ends; None where it did not end
        in `timeout_s` (it ends with the sandbox when intelliperf does)."""
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1
        self.thread.join(timeout_s)
        return self.out[0] if self.out else None


PARK_WAIT_S = 60.0  # how long the timing waits for a region-timer run beside it to reach its first launch


def run(session: Session, rewriters: list[Rewriter]) -> Optimization:
    """Run the loop; `session.report.optimization` is kept current and written after each attempt."""
    s = session
    baseline = _baseline(s)
    s.candidate_trace = _candidate_trace(s, baseline)
    opt = Optimization(
        kernel=s.profile.name,
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
            _start_ahead(s, work, 0)  # the first candidate's Pythons start while the reference is captured
            reference, kernel, launcher = _reference(s, work, opt)
            opt.hardware = _hardware(s.report.run.mode == "interpreter").model_dump()
            s.write()
            queue = list(rewriters)
            while queue and opt.status == "running":
                stop = _budget_spent(s, opt)
                if stop:
                    opt.notes.append(stop)
                    break
                if _round(s, opt, queue[0], reference, kernel, launcher, work) == "declined":
                    queue.pop(0)
        finally:
            if s.ahead is not None:
                s.ahead.stop()
        if opt.status == "running" and opt.winner is not None:
            opt.status = "won"
            opt.notes.append(
                f"the winner (attempt {opt.winner}) is correct and faster, but {s.formula.metric or 'the metric'} "
                "did not improve: the diagnosed bottleneck is still there, and no candidate removed it"
            )
        if opt.status == "running":
            opt.status = "no-win"
            if not queue:
                opt.notes.append("every rewriter ran out of candidates")
    s.write()
    return opt


def _round(
    s: Session,
    opt: Optimization,
    rewriter: Rewriter,
    reference: ReferenceRun,
    kernel: CodeUnit,
    launcher: CodeUnit | None,
    work: Path,
) -> str:
    """One request, its candidates validated (best-of-N: all of them), the best accepted one kept."""
    request = _request(s, kernel, launcher, opt, reference.manifest["launches"][0], reference.manifest["written"])
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
            return _attempt(s, opt, reference, kernel, launcher, job[1], work, job[0], device)

        spread_over(s.budget.devices, jobs, on_device, lambda job, attempt: done(attempt, job[1]))
    else:
        device = _device(s)
        for number, cand in jobs:
            done(_attempt(s, opt, reference, kernel, launcher, cand, work, number, device), cand)
    if declined and not tried:
        opt.notes.append(f"{rewriter.name}: {declined.declined}")
        s.progress(f"{rewriter.name} has no (more) candidates: {declined.declined}")
        return "declined"
    accepted = [a for a in opt.attempts if a.status == "accepted"]
    if accepted:
        best = max(accepted, key=lambda a: _rank(a, s.finding))
        if best.number != opt.winner:
            opt.winner = best.number
            opt.speedup = best.verdict.speedup if best.verdict else None
            opt.bottleneck_removed = best.metric_improved is True
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


def _reference(s: Session, work: Path, opt: Optimization) -> tuple[ReferenceRun, CodeUnit, CodeUnit | None]:
    """Capture the reference run once, and locate the kernel and its launcher in the project."""
    if s.profile.file is None:
        raise IntelliPerfError(f"{s.profile.name}: the recorder found no source file for it, so it cannot be rewritten")
    kernel = _unit(s, Path(s.profile.file), s.profile.name, "kernel")  # before any run: a clear error early
    s.progress(f"capturing the reference outputs of {s.profile.name}")
    begin = time.perf_counter()
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
    return reference, kernel, launcher


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

    from .validators.performance import cached_bandwidth

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


def _request(
    s: Session, kernel: CodeUnit, launcher: CodeUnit | None, opt: Optimization, launch: dict, written: list[str]
) -> RewriteRequest:
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
        kernel=kernel,
        launcher=launcher,
        profile=s.profile,
        finding=s.finding,
        formula=s.formula.name,
        problem=s.formula.problem,
        techniques=list(s.formula.techniques),
        metric=s.formula.metric,
        hardware=HardwareFacts(**opt.hardware),
        sites=sites,
        launch={"grid": launch.get("grid"), "options": launch.get("options"), "written": written},
        history=history,
        evidence=next((d.evidence for d in s.report.diagnoses if d.kernel == s.profile.name), []),
    )


def _budget_spent(s: Session, opt: Optimization) -> str | None:
    b = s.budget
    if len(opt.attempts) >= b.max_attempts:
        return f"stopped after {len(opt.attempts)} attempts (--max-attempts)"
    if b.time_budget_s is not None and time.perf_counter() - s.started > b.time_budget_s:
        return f"stopped: the time budget of {b.time_budget_s:g} s is spent"
    if b.max_tokens is not None and opt.tokens >= b.max_tokens:
        return f"stopped: {opt.tokens} tokens used, budget {b.max_tokens}"
    return None


def apply_candidate(
    originals: dict[str, str], kernel: CodeUnit, launcher: CodeUnit | None, cand: Candidate
) -> dict[str, str]:
    """{relpath: new text} for the candidate (`originals`: {relpath: text} of the project's files),
    checked to change nothing but the kernel, its launcher and the code beside the kernel (more
    kernels, helpers, constants), all within the source policy; raises ScopeError or PolicyError."""
    texts: dict[str, str] = {}
    allowed: dict[str, set[str]] = {}
    block: tuple[int, int] | None = None
    if cand.launcher is not None and launcher is None:
        raise ScopeError(
            "the launch cannot be rewritten here (it is outside the project or not a kernel[grid](...) statement)"
        )
    edits = [(kernel, cand.kernel)] if cand.kernel is not None else []
    if launcher is not None and cand.launcher is not None:
        edits.append((launcher, cand.launcher))
    for unit, new in sorted(edits, key=lambda e: -e[0].line):  # bottom-up: a statement's line stays valid
        text = texts.get(unit.relpath) or originals[unit.relpath]
        texts[unit.relpath] = splice(text, unit.qualname, new)
        allowed.setdefault(unit.relpath, set()).add(unit.qualname)
        if unit.is_statement:
            block = statement_block(new, unit.line)
            _rebinds_nothing(originals[unit.relpath], unit.source, new)
        # A sweep is the search's own screen (its autotuner's `do_bench`, `**{}` in the launch), never a
        # fix: the config it finds comes back as a candidate of its own, held to the policy in full.
        if cand.sweep:
            continue
        if unit.is_statement:
            check_statement(unit.source, new)
        else:
            check_policy(unit.source, new, unit.name, kernel=unit is kernel)
    for unit, new in edits:
        _no_new_imported_names(originals[unit.relpath], unit.source, new)
    statement = launcher.relpath if launcher is not None and launcher.is_statement else None
    for rel, text in texts.items():
        check_scope(
            originals[rel],
            text,
            allowed[rel],
            kernel=kernel.qualname if rel == kernel.relpath else None,
            launches=kernel.name if rel == statement else None,
            block=block if rel == statement else None,
        )
    if cand.module:
        rel = kernel.relpath
        texts[rel] = _beside_kernel(texts.get(rel) or originals[rel], kernel, launcher, cand.module)
        _no_new_imported_names(originals[rel], "", cand.module)
    return texts


POLICY_MODULES = {"math", "torch", "triton", "triton.language"}  # what the source policy judges by name


def _no_new_imported_names(text: str, old: str, new: str) -> None:
    """The policy judges `torch.x` and `tl.y` by name; a name the file imported from any other module
    (`from os import environ`, `import numpy as np`) it cannot judge, so new code may not start using one
    (a relative import is the program's own code, which the candidate may call as the original did)."""
    imported = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name not in POLICY_MODULES}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module not in POLICY_MODULES:
            imported |= {a.asname or a.name for a in node.names}

    def used(code: str) -> set[str]:
        if not code.strip():
            return set()
        return {n.id for n in ast.walk(ast.parse(textwrap.dedent(code))) if isinstance(n, ast.Name)}

    added = sorted((used(new) - used(old)) & imported)
    if added:
        raise PolicyError(
            f"the candidate uses {', '.join(added)}, which the file imports from a module the source policy does "
            "not judge (only math, torch, triton and triton.language are); compute with those instead"
        )


def _rebinds_nothing(text: str, old: str, new: str) -> None:
    """A launch statement's block binds names of its own, never the program's functions, classes or
    imports (which would change code outside the block)."""
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    program = {item_name(n) for n in tree.body} | {(a.asname or a.name).split(".")[0] for n in imports for a in n.names}

    def bound(code: str) -> set[str]:
        nodes = ast.walk(ast.parse(textwrap.dedent(code)))
        return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    rebound = sorted((bound(new) - bound(old)) & (program - {None}))
    if rebound:
        raise ScopeError(f"the launch's block rebinds {', '.join(rebound)}, which the program defines elsewhere")


def _beside_kernel(text: str, kernel: CodeUnit, launcher: CodeUnit | None, module: str) -> str:
    """`text` with the candidate's code beside the kernel spliced in: new items before the kernel,
    changed ones in place. A changed item must be a kernel or constant the kernel section uses
    (the program's other functions stay); every item is held to the source policy."""
    try:
        statements = ast.parse(textwrap.dedent(module)).body
        items = module_items(module)
    except SyntaxError as exc:
        raise NotPython(f"the code beside the kernel is not valid Python: {exc.msg}") from None
    for stmt in statements:  # functions and constants only: anything else would run at import
        if item_name(stmt) is None or isinstance(stmt, ast.ClassDef):
            check_module_item(None, ast.unparse(stmt), kernel=False)  # names what it is, where it can
            raise ScopeError(f"beside the kernel go functions and constants only, not `{ast.unparse(stmt)[:80]}`")
    tree = ast.parse(text)
    present = {item_name(n): n for n in tree.body if item_name(n) is not None}
    used = _names_used(text, [kernel.qualname] + ([launcher.qualname] if launcher else []), items)
    for name, source in items.items():
        if name in (kernel.name, launcher.name if launcher else None):
            raise ScopeError(f"{name} is the kernel or the launcher: give it in its own field, not beside them")
        node = present.get(name)
        new_node = ast.parse(source).body[0]
        jit = isinstance(new_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(new_node)
        if node is not None:
            was_jit = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(node)
            constant = isinstance(node, (ast.Assign, ast.AnnAssign))
            if not (was_jit or constant) or name not in used:
                raise ScopeError(
                    f"{name} is the program's own code: a candidate may add kernels, helpers and constants, "
                    "and change the kernels and constants its kernel and launcher use, not other code"
                )
        check_module_item(module_items(text).get(name) if node is not None else None, source, kernel=jit)
    found = next((n for n in tree.body if item_name(n) == kernel.name), None)
    if found is None:
        raise ScopeError("code beside the kernel can be added only where the kernel is a top-level function")
    first = min([found.lineno] + [d.lineno for d in getattr(found, "decorator_list", [])])
    changed = splice_items(text, items, first)
    check_scope(text, changed, set(items), kernel=kernel.qualname)
    return changed


def _names_used(text: str, qualnames: list[str], items: dict[str, str]) -> set[str]:
    """The names the kernel, the launcher and the new items refer to."""
    tree = ast.parse(text)
    nodes: list[ast.AST] = [n for n in tree.body if item_name(n) in {q.split(".")[-1] for q in qualnames}]
    nodes += [ast.parse(source) for source in items.values()]
    return {n.id for top in nodes for n in ast.walk(top) if isinstance(n, ast.Name)}


def _attempt(
    s: Session,
    opt: Optimization,
    reference: ReferenceRun,
    kernel: CodeUnit,
    launcher: CodeUnit | None,
    cand: Candidate,
    work: Path,
    number: int,
    device: str | None,
) -> Attempt:
    started = time.perf_counter()
    attempt = Attempt(
        number=number,
        rewriter=cand.rewriter,
        title=cand.title,
        rationale=cand.rationale,
        status="invalid",
        tokens=cand.tokens,
        before=opt.baseline.model_copy(),
    )
    if cand.invalid:
        attempt.reasons = f"- [{cand.invalid_kind}] {cand.invalid}"
        return attempt
    try:
        changes = apply_candidate(s.originals, kernel, launcher, cand)
    except PolicyError as exc:
        attempt.reasons = f"- [policy] {exc}"
        return attempt
    except (ScopeError, SyntaxError) as exc:
        kind = "syntax" if isinstance(exc, (SyntaxError, NotPython)) else "scope"
        attempt.reasons = f"- [{kind}] {exc}"
        return attempt
    attempt.files = sorted(changes)
    attempt.diff = "".join(unified_diff(rel, s.originals[rel], text) for rel, text in changes.items())
    _save_attempt(s, attempt, changes)
    ahead, s.ahead = s.ahead, None  # (none is started where candidates are spread over GPUs)
    where = ahead.where if ahead else work / f"attempt-{number}"
    attempt.device = device
    s.progress(f"attempt {number}: validating {cand.rewriter} candidate ({cand.title})")
    settings = s.validation.model_copy(update={"screen": True}) if cand.sweep else s.validation
    if cand.sweep:  # a screen is not timed, and its choice comes next: the choice's Pythons start beside it
        _start_ahead(s, work, number, reference)
    beside = None if cand.sweep else _timers_beside(s, reference, changes, where, device)
    if not cand.sweep and _timed_on_gpu(s):
        # The next candidate's Pythons start beside this validation (2.4-3.0 s of start-up it would otherwise
        # wait for, H100), without CUDA contexts (this one's run and workers hold the GPU's room); the timing
        # waits until their start-up is over, as it does for the region-timer run beside it.
        _start_ahead(s, work, number)
    try:
        started_ahead = ahead.validation if ahead else None
        quiet = _before_timing(s, beside)
        program, verdict = _validated(s, reference, changes, where, device, settings, started_ahead, quiet)
    except BaseException as exc:
        if beside is not None:  # never leave its turn held: its run would wait for it forever
            beside.finish(0)
        if isinstance(exc, KeyboardInterrupt):  # the report keeps the attempt whose folder is already there
            attempt.status, attempt.reasons = (
                "interrupted",
                "- [interrupted] stopped by the user (Ctrl-C) while it was being validated; not judged",
            )
            opt.attempts.append(attempt)
            s.write()
        raise
    if _timed_out(verdict) and s.validation.timeout_s is None and busy():
        # The limit scales with the load when the attempt starts; load that came later can still kill a good
        # candidate. Once more, with twice the time, in a fresh copy: a timeout says nothing about correctness.
        load = os.getloadavg()[0]
        s.progress(
            f"attempt {number}: timed out while the machine was busy (load {load:.1f} on {os.cpu_count()} "
            "cores); once more with twice the time"
        )
        if ahead is not None:  # its folders go: a Python started in them would not see the new copy
            ahead.stop()
            ahead = None
        if beside is not None:  # the run beside it (its folder goes too), measured again after the validation
            beside.finish(0)
            beside = None
        shutil.rmtree(where, ignore_errors=True)
        program, verdict = _validated(
            s,
            reference,
            changes,
            where,
            device,
            settings.model_copy(update={"patience": 2 * settings.patience}),
        )
        verdict.notes.append(
            f"validated a second time after a timeout on a busy machine (load {load:.1f} on "
            f"{os.cpu_count()} cores), with twice the time"
        )
    _start_ahead(s, work, number, reference)  # not earlier (but beside a screen): they would take CPU from its timing
    attempt.verdict = verdict
    attempt.seconds.update(verdict.seconds)
    begin = time.perf_counter()
    _metric_after(s, attempt, cand, program, where, ahead.timers if ahead else None, beside, reference)
    attempt.seconds["metric"] = round(time.perf_counter() - begin, 3)
    _decide(s, attempt)
    shutil.rmtree(where, ignore_errors=True)  # the copy and its captures: the report has what matters
    attempt.seconds["total"] = round(time.perf_counter() - started, 3)  # the stages above overlap in part
    return attempt


def _metric_after(
    s: Session,
    attempt: Attempt,
    cand: Candidate,
    program: Program,
    where: Path,
    timers: HeadStart | None,
    beside: TimersBeside | None,
    reference: ReferenceRun,
) -> None:
    """`attempt.after` from a correct candidate's run (and, for a formula reading region timers, from the run
    `beside` its validation, or one more now in the Python `timers` started for it); a sweep's choice. What
    was started for it and not taken is stopped."""
    assert attempt.verdict is not None  # measured after validation
    correct = attempt.verdict.correct
    early = beside.finish(run_limit(reference, s.validation) if correct else 0) if beside is not None else None
    if correct:  # the candidate's own (validation) run, recorded
        recording = load_recording(where / "validation" / "candidate")
        attempt.after = _measure_candidate(s, recording, program, not cand.sweep, where, timers, early)
        attempt.after.metric_source = "candidate-process"
        if cand.sweep:
            mine = [p for p in recording.kernels if p.name == s.profile.name]
            attempt.chosen = tuned_configs(mine).get(s.profile.name, {})
    if timers is not None:
        timers.stop()  # where nothing took it


def _validated(
    s: Session,
    reference: ReferenceRun,
    changes: dict[str, str],
    where: Path,
    device: str | None,
    settings: ValidationSettings,
    ahead: Ahead | None = None,
    quiet: Callable[[], str | None] | None = None,
) -> tuple[Program, Verdict]:
    """The candidate's copy of the project, and the validators' verdict on it: its program and workers in
    the Pythons `ahead` started for them where they fit."""
    copy = copy_project(s.root, changes, where / "project", exclude=(s.out_dir,))
    program = Program(
        copy,
        in_copy(s.report.run.command, s.root, copy),
        copy / Path(s.report.run.cwd).resolve().relative_to(s.root),
        env=pinned_env(device),
    )
    return program, validate(
        reference,
        program,
        work_dir=where / "validation",
        settings=settings,
        trace=s.candidate_trace or s.trace,
        ahead=ahead,
        quiet=quiet,
    )


def _timed_on_gpu(s: Session) -> bool:
    return s.report.run.mode != "interpreter" and s.validation.timing


def _before_timing(s: Session, beside: TimersBeside | None) -> Callable[[], str | None] | None:
    """What a correct candidate's timing waits for: the region-timer run beside it parked at its first launch,
    and the next candidate's Pythons started beside it done starting."""
    if beside is None and s.ahead is None:
        return None

    def quiet() -> str | None:
        said = [beside.quiet() if beside else None, s.ahead.started(PARK_WAIT_S) if s.ahead else None]
        return "; ".join(note for note in said if note) or None

    return quiet


def _device(s: Session) -> str | None:
    """The GPU candidates are validated on one after another (`_round`)."""
    return s.budget.devices[0] if s.budget.devices else None


def _start_ahead(s: Session, work: Path, done: int, reference: ReferenceRun | None = None) -> None:
    """The Pythons for the next candidate's program run and workers (`start_ahead`), in a folder of its own,
    after attempt `done` (0: while the reference is captured; beside it where it is a screen), where the
    settings want them (`ValidationSettings.head_start`); not after the budget's last attempt, not where
    candidates are spread over several GPUs, nor twice. Once the `reference` says its workers fit beside its
    run, they make their CUDA contexts now too."""
    wanted = s.validation.head_start
    if wanted is None:
        wanted = (os.cpu_count() or 1) >= HEAD_START_CPUS
    last = done >= s.budget.max_attempts  # attempt `done` was the budget's last
    if last or not wanted or s.ahead is not None or len(s.budget.devices) > 1 or s.sandbox is None:
        return
    where = Path(tempfile.mkdtemp(prefix="attempt-", dir=work))
    validation = start_ahead(
        s.sandbox,
        s.report.run.command[0],
        where / "project",
        where / "validation",
        inputs=work / "reference" / "inputs",  # where `_reference` has them (capture_reference's layout)
        reference_root=work / "reference" / "project",
        interpret=s.report.run.mode == "interpreter",
        settings=s.validation,
        env=pinned_env(_device(s)),
        cuda=reference is not None and fits_beside(reference),
    )
    timers = None
    if _times_regions(s):
        from .profiling import region_timers

        timers = region_timers.start_ahead(s.sandbox, s.report.run.command[0], where / "timers", pinned_env(_device(s)))
    s.ahead = Started(where, validation, timers)


def _timed_out(verdict: Verdict) -> bool:
    """Killed at a time limit and nothing else found: the candidate was not judged, neither way."""
    return bool(verdict.problems) and all(p.kind == "timeout" for p in verdict.problems)


def _measure(finding: Finding | None, profile: KernelProfile | None, time_source: str) -> Measure:
    return Measure(
        metric=finding.metric.value if finding and finding.metric else None,
        metric_name=finding.metric.name if finding and finding.metric else None,
        metric_modelled=bool(finding and finding.modelled),
        kernel_time_s=profile.mean_time_s if profile else None,
        time_source=time_source,
        bottleneck_absent=bool(finding and not finding.present and not finding.metric and finding.evidence_backend),
    )


def _baseline(s: Session) -> Measure:
    """The original measured as each candidate will be, from its recording (no profiler pass), so
    before and after compare like with like when the diagnosis also read hardware counters."""
    return _measure_in(s, s.recording, s.profile, s.report.run.time_source, _timed_original(s))


def _timed_original(s: Session) -> list[Evidence]:
    """The diagnosis's region timers of the original kernel."""
    return [ev for d in s.report.diagnoses if d.kernel == s.profile.name for ev in d.evidence if ev.regions]


def _candidate_trace(s: Session, baseline: Measure) -> TraceSettings:
    """What each candidate's validation run records besides its launches: what the diagnosis recorded, less
    the static view where the baseline's metric is the same without it (on a GPU the region timers give
    overlap's). The static view compiles the kernel for two more targets inside the candidate's program,
    which waits for it: 2-3 s of a pipelined GEMM's run on the H100, for nothing the verdict reads."""
    timed = _timed_original(s)
    if not s.trace.static_targets or baseline.metric is None or not timed:
        return s.trace
    rest = [ev for ev in s.recording.evidence_of(s.profile.id) if ev.backend != STATIC_BACKEND]
    findings = s.formula.evaluate(s.profile, [*timed, *rest], s.registry)
    without = _measure(_same_formula(s, findings), s.profile, s.report.run.time_source)
    if (without.metric, without.metric_name) != (baseline.metric, baseline.metric_name):
        return s.trace
    return replace(s.trace, static_targets=(), pattern=s.trace.pattern if s.trace.sample_programs else None)


def _timers_beside(
    s: Session, reference: ReferenceRun, changes: dict[str, str], where: Path, device: str | None
) -> TimersBeside | None:
    """The candidate's region-timer run, started now beside its validation (in a fresh Python: its start-up
    is off the critical path, and the one started ahead stays for a run after the validation where this one
    gave nothing), where the formula reads the timers on a GPU: it waits for its GPU turn at its first
    launch, and the loop holds the turn until the validation is over. Told the original's launches (the
    candidate's are known only after its run; its totals are read again with them): not for an autotuned
    kernel (which config to pin), nor where the program's recorded GPU memory would not fit twice beside the
    validation's workers."""
    if not _times_regions(s) or tuned_configs([s.profile]) or not fits_beside(reference, programs=2):
        return None
    from .profiling import region_timers

    timers = where / "timers-beside"  # (`where / "timers"` is the Python started ahead's)
    lock = region_timers.turn_file(timers)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    os.lockf(fd, os.F_LOCK, 0)
    out: list = []

    original = Program(s.root, s.report.run.command, Path(s.report.run.cwd), env=pinned_env(device))

    def run() -> None:
        try:
            out.append(_timer_run(s, original, s.profile, changes=changes, where=timers, turn=str(lock)))
        except Exception:  # noqa: BLE001  (its folder gone with a retried validation: measured after it instead)
            pass

    thread = threading.Thread(target=run, name="region-timers-beside", daemon=True)
    thread.start()
    return TimersBeside(timers, fd, thread, out)


def _times_regions(s: Session) -> bool:
    """Whether each candidate gets a region-timer run: on a GPU, for a formula that reads the timers."""
    return s.report.run.mode == "compiled" and s.formula.wants_regions(s.registry)


def _measure_candidate(
    s: Session,
    recording: Recording,
    program: Program,
    regions: bool = True,
    where: Path | None = None,
    ahead: HeadStart | None = None,
    early: TimerRun | None = None,
) -> Measure:
    """The formula's metric and the kernel time in the candidate's own (validation) run; region
    timers, when the formula reads them, in one more run of the candidate's copy (in `where`/timers, in the
    Python `ahead` started there), read as Proton's per-scope totals (not for a screen, `regions=False`: its
    choice is measured when it is tried). `early`: that run, made beside the validation (`TimerRun`); told the
    original's launches, its totals are read again with the grid and warps the candidate's own run recorded.
    Not for a candidate that autotunes: that run, told no config to pin, timed its configs and chose its own."""
    profile = next((k for k in recording.kernels if k.name == s.profile.name), None)
    if profile is None:
        return _measure_replacements(s, recording)
    from .profiling import region_timers

    timed: list[Evidence] = []
    stands = regions and not tuned_configs([profile])
    beside = region_timers.reread(early, s.profile, profile) if stands and early is not None else None
    if beside is not None:
        timed = [beside]
    elif regions and _times_regions(s):
        s.progress("region timers: the candidate once more, instrumented")
        run = _timer_run(s, program, profile, where=where / "timers" if where else None, ahead=ahead)
        timed = list(run.evidence.values())
    return _measure_in(s, recording, profile, recording.first("time_source", "unknown"), timed)


def _measure_replacements(s: Session, recording: Recording) -> Measure:
    """A candidate that no longer launches the kernel (split into others, renamed): the formula asked of
    every kernel its run launches that the original's did not, the worst metric of them standing for the
    kernel's, and their mean times added up (one launch of each)."""
    before = {k.name for k in s.recording.kernels}
    measures = [
        _measure_in(s, recording, k, recording.first("time_source", "unknown"))
        for k in recording.kernels
        if k.name not in before
    ]
    measured = [m for m in measures if m.metric is not None]
    if not measured:
        return Measure()
    lower = s.finding.metric is None or s.finding.metric.better == "lower"
    worst = (max if lower else min)(measured, key=lambda m: m.metric or 0.0)
    times = [m.kernel_time_s for m in measures if m.kernel_time_s is not None]
    return worst.model_copy(update={"kernel_time_s": sum(times) if times else None})


def _timer_run(s: Session, program: Program, profile: KernelProfile, **place):
    """One region-timer run of a candidate, sandboxed: `program` (with the candidate's `changes` where it is the
    original's), its kernel's loop instrumented, read as Proton's per-scope totals (the metric is a share, which
    they give without the trace); `place`: `changes`, `where`, `ahead`, `turn` of `region_timers.collect`."""
    from .profiling import region_timers

    return region_timers.collect(
        program.command,
        [profile],
        root=program.root,
        cwd=program.workdir(),
        timeout_s=s.validation.timeout_s,
        env=program.env,
        sandbox=s.sandbox,
        loops_only=True,
        data="tree",
        **place,
    )


def _measure_in(
    s: Session, recording: Recording, profile: KernelProfile, time_source: str, timed: Sequence[Evidence] = ()
) -> Measure:
    """The formula asked again on one run's recording (and its region timers): its metric there,
    and the kernel time."""
    findings = s.formula.evaluate(profile, [*timed, *recording.evidence_of(profile.id)], s.registry)
    return _measure(_same_formula(s, findings), profile, time_source)


def _same_formula(s: Session, findings: list[Finding]) -> Finding | None:
    """The finding of the diagnosis's formula among a formula's findings (a composite gives several)."""
    return next((f for f in findings if f.formula == s.finding.formula), findings[0] if findings else None)


def _decide(s: Session, attempt: Attempt) -> None:
    verdict = attempt.verdict
    assert verdict is not None  # decided after validation
    reasons = [verdict.reasons()] if verdict.problems else []
    said = _timed_against_profile(verdict.speedup, getattr(s, "profile", None))
    if said and said not in verdict.notes:
        verdict.notes.append(said)
    metric = s.formula.metric
    if verdict.correct and attempt.chosen is None:  # a sweep's metric is not measured: its choice's will be
        was, now = attempt.before or Measure(), attempt.after or Measure()
        before, after = was.metric, now.metric
        better = s.finding.metric.better if s.finding.metric else "lower"
        if before is not None and after is None and now.bottleneck_absent:
            attempt.metric_improved = True  # what the metric counts is gone from the kernel
        elif before is None or after is None:
            attempt.metric_improved = None
            reasons.append(f"- [metric] the candidate's {metric or 'metric'} could not be measured")
        elif was.metric_name and now.metric_name and was.metric_name != now.metric_name:
            attempt.metric_improved = None  # e.g. region timers gave one, the static view the other
            reasons.append(
                f"- [metric] the candidate's metric was {now.metric_name}, the original's {was.metric_name}: they "
                "do not compare (its evidence differed: did the region-timer run fail?)"
            )
        else:
            attempt.metric_improved = (
                after < before * (1 - IMPROVEMENT) if better == "lower" else after > before * (1 + IMPROVEMENT)
            )
            if not attempt.metric_improved:
                named = now.metric_name or was.metric_name or metric or "the formula's metric"
                reasons.append(
                    f"- [metric] correct, but {named} did not improve: {before:g} -> {after:g} ({better} is better)"
                )
    if verdict.faster is not None:  # timed on a GPU: a correct candidate that is faster wins, metric or not
        won = verdict.correct and verdict.accepted
    else:  # no time (CPU): the formula's modelled metric is the only evidence the kernel got better
        won = verdict.correct and verdict.speedup is None and attempt.metric_improved is True
    if attempt.chosen is not None:  # a sweep screens configs; the one it found is tried next, pinned
        won = False
        reasons.insert(
            0,
            f"- [sweep] a screen, not a fix: its autotuner chose {_config_text(attempt.chosen)}, "
            "which the search tries next as a pinned config"
            if attempt.chosen
            else "- [sweep] a screen, not a fix: which config its autotuner chose could not be read from "
            "the candidate's run",
        )
    attempt.status = "accepted" if won else "timed-out" if _timed_out(verdict) else "rejected"
    attempt.reasons = "\n".join(r for r in reasons if r)


def _timed_against_profile(speedup: Speedup | None, profile: KernelProfile | None) -> str | None:
    """The reference's timed call next to the profiled kernel's mean time: the launcher may launch more
    than the kernel, but a gap past 2x says the timing is not what the program runs."""
    if speedup is None or profile is None or not profile.mean_time_s:
        return None
    profiled_ms = profile.mean_time_s * 1e3
    text = (
        f"the reference's timed call took {speedup.reference_ms:.4g} ms ({speedup.method}); the profiled "
        f"kernel {profiled_ms:.4g} ms per launch"
    )
    ratio = speedup.reference_ms / profiled_ms
    if ratio > 2 or ratio < 0.5:
        text += (
            f": {ratio:.2g}x apart, so what was timed differs from what the program ran (other kernels in the "
            "launcher, host work, or another workload)"
        )
    return text


def _config_text(config: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items() if k != "kwargs" and v is not None)


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


def _attempt_dir(s: Session, number: int) -> Path:
    return s.out_dir / "attempts" / f"{number:02d}"


def _save_attempt(s: Session, attempt: Attempt, changes: dict[str, str]) -> None:
    output_folder(s.out_dir)
    folder = _attempt_dir(s, attempt.number)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "candidate.patch").write_text(attempt.diff)
    for rel, text in changes.items():
        target = folder / "files" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _rank(attempt: Attempt, finding: Finding) -> tuple[bool, float, float]:
    """Best of the accepted: one that removes the bottleneck first, then the measured speedup, then the
    metric (CPU runs have no speedup)."""
    speedup = attempt.verdict.speedup.estimate if attempt.verdict and attempt.verdict.speedup else 0.0
    metric = attempt.after.metric if attempt.after and attempt.after.metric is not None else 0.0
    lower = finding.metric is None or finding.metric.better == "lower"
    return attempt.metric_improved is True, speedup, -metric if lower else metric


def _keep_winner(s: Session, opt: Optimization, attempt: Attempt) -> None:
    patch = s.out_dir / "winner.patch"
    patch.write_text(attempt.diff)
    opt.patch = str(patch)
    folder = _attempt_dir(s, attempt.number) / "files"
    opt.files = {rel: str(folder / rel) for rel in attempt.files}
