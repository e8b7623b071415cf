"""One task end to end, in a process of its own: `python -m intelliperf.campaign.task SPEC.json ROW.json`.

1. a fresh copy of the task (`original/`); its own correctness command must pass there first;
2. `optimize --formula auto` on that command with the offline rewriters, its `--kernel` the
   task's target kernels (the diagnosis asks every formula: what it flags is the row's `flagged`);
3. a winner's files go into another fresh copy (`patched/`), judged by the task's correctness
   command and, on a GPU, timed by its performance command against `original/`, the two taking
   turns (`rounds` times each; per case the mean of the rounds).

The row is written whatever happens: an error is its reason, never a lost task.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from pydantic import BaseModel, Field

from ..settings import CampaignSettings
from .peer import environment, run_commands, speedup, timed
from .results import Row
from .suite import Task, copy_task


class TaskSpec(BaseModel):
    task: Task
    work: Path = Field(description="this task's folder under the campaign's out-dir")
    settings: CampaignSettings = Field(description="the campaign's, its device decided: cpu or gpu")


def run_task(spec: TaskSpec) -> Row:
    start = time.monotonic()
    row = Row(task=spec.task.name, out_dir=str(spec.work))
    try:
        _steps(spec, row)
    except Exception as exc:  # the row says what stopped it; the campaign goes on
        from ..errors import IntelliPerfError

        row.status = "error"
        row.detail = exc.message if isinstance(exc, IntelliPerfError) else _crash(exc)
    row.seconds = round(time.monotonic() - start, 1)
    return row


def _crash(exc: Exception) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1:]
    return f"{type(exc).__name__}: {exc}" + (f" ({where[0].filename}:{where[0].lineno})" if where else "")


def _steps(spec: TaskSpec, row: Row) -> None:
    task = spec.task
    if task.problem:
        row.status, row.detail = "unusable", task.problem
        return
    env = environment(spec.settings.device, spec.settings.device_variable)
    original = copy_task(task, spec.work / "original")
    before = run_commands(task.correctness, original, env, spec.settings.program_timeout_s)
    row.correct_before = before.ok
    if not before.ok:
        row.status, row.detail = "peer-fails", before.detail
        return
    os.environ.update(env)  # the programs intelliperf runs see the task's device
    report = _optimize(spec, original)
    row.diagnosed = [d.kernel for d in report.diagnoses]
    row.flagged = sorted({f.formula for d in report.diagnoses for f in d.findings if f.present})
    opt = report.optimization
    if opt is None:
        row.status = "nothing-found"
        row.detail = "; ".join(report.notes)[-300:] or "no formula flagged a target kernel"
        return
    row.fixed = opt.formula or report.formula
    winner = next((a for a in opt.attempts if a.number == opt.winner), None)
    if winner is None:
        row.status = "no-win"
        row.detail = _why_no_win(opt)
        return
    row.status, row.winner = "won", winner.title
    row.intelliperf_speedup = opt.speedup.estimate if opt.speedup else None
    _judge(spec, row, original, opt.files, env)


def _optimize(spec: TaskSpec, original: Path):
    from .. import api
    from .suite import argv

    command = argv(spec.task.correctness[0])
    return api.optimize(
        command,
        formula="auto",
        kernel=spec.task.kernel_regex,
        device=spec.settings.device,
        rewriter="auto",
        model=None,
        cwd=str(original),
        project=original,
        out_dir=spec.work / "optimize",
        max_attempts=spec.settings.max_attempts,
        time_budget_s=spec.settings.time_budget_s,
        timeout_s=spec.settings.program_timeout_s,
        progress=lambda message: print(f"{spec.task.name}: {message}", file=sys.stderr, flush=True),
    )


def _why_no_win(opt) -> str:
    from ..evaluation.run import classify

    classes = [c for a in opt.attempts if (c := classify(a)) is not None]
    said = ", ".join(f"{c} {classes.count(c)}" for c in dict.fromkeys(classes))
    return f"{len(opt.attempts)} attempt(s)" + (f": {said}" if said else "") + (f"; {opt.error}" if opt.error else "")


def _judge(spec: TaskSpec, row: Row, original: Path, files: dict[str, str], env: dict[str, str]) -> None:
    """The winner in a fresh copy of the task, by the task's own commands."""
    patched = copy_task(spec.task, spec.work / "patched")
    for rel, copy in files.items():
        (patched / rel).write_text(Path(copy).read_text())
    check = run_commands(spec.task.correctness, patched, env, spec.settings.program_timeout_s)
    row.peer_correct = check.ok
    if not check.ok:
        row.detail = f"the winner fails the task's own correctness command: {check.detail}"
        return
    if spec.settings.device == "cpu":
        row.detail = "peer-verified correct; not timed (the interpreter has no device clock)"
        return
    if not spec.task.performance:
        row.detail = "config.yaml names no performance_command: not timed"
        return
    _peer_time(spec, row, original, patched, env)


def _peer_time(spec: TaskSpec, row: Row, original: Path, patched: Path, env: dict[str, str]) -> None:
    sides: dict[str, list[dict[str, float]]] = {"baseline": [], "winner": []}
    for _ in range(max(1, spec.settings.rounds)):
        for side, folder in (("baseline", original), ("winner", patched)):
            run = timed(spec.task.performance, folder, env, spec.settings.program_timeout_s)
            if not run.ok:
                row.detail = f"the {side}'s performance command: {run.detail}"
                return
            sides[side].append(run.times_ms)
    base, mine = (_mean_cases(sides[s]) for s in ("baseline", "winner"))
    row.peer_times_ms = {k: [round(base[k], 5), round(mine[k], 5)] for k in base if k in mine}
    row.peer_speedup, why = speedup(base, mine)
    row.detail = why or f"peer-timed over {len(base)} case(s), {spec.settings.rounds} round(s) each side"


def _mean_cases(rounds: list[dict[str, float]]) -> dict[str, float]:
    keys = set(rounds[0]).intersection(*rounds[1:])
    out = {}
    for key in keys:
        values = [r[key] for r in rounds]
        out[key] = -1.0 if any(v <= 0 for v in values) else sum(values) / len(values)
    return out


def main(argv: list[str]) -> int:
    spec = TaskSpec.model_validate_json(Path(argv[0]).read_text())
    row = run_task(spec)
    Path(argv[1]).write_text(row.model_dump_json(indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
