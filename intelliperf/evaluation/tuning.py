"""`intelliperf tune`: tune the llm rewriter's DSPy program against the validators' verdict.

The training set is the eval's cases (programs with a `Labels:` line). For each case, one
`optimize` run up to its first question records the request the llm rewriter would get; its
prompt fields are the example's inputs (the same fields, scrubbed, that a real run sends). A
DSPy optimizer then runs the program on the examples, and every answer it wants judged goes
through `optimize` again with that answer as the only candidate: the same sandbox, the same
validators, the same decision as a real run, so the metric cannot be fooled more easily than
`optimize` itself. The score of one answer: 1 when it is accepted (a validated win), 0.5 when it
is correct but not a win, 0 otherwise. `bootstrap` (dspy.BootstrapFewShot) keeps accepted
answers as demonstrations (with `rounds` > 1 a case whose answer failed is asked again, at a
higher temperature); `mipro` (dspy.MIPROv2, auto="light") also proposes instructions and
needs many more model calls. The compiled program is saved where `--program FILE` loads it.

Each judged answer costs a profile, a reference capture and one attempt of the case's program
(on the 2-core CPU machine about a minute for the README's example); a training set of a few
small cases is the intended size.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import UsageError
from ..files import write_atomic
from ..rewriters import Candidate, Rewriter, RewriteRequest
from ..rewriters.llm import LLMRewriter, prompt_fields, scrubbed
from ..rewriters.transcript import candidate_from_answer
from ..settings import OptimizeSettings, TuneOptimizer, TuneSettings
from .run import Case, case_slug

SCORES = {"accepted": 1.0, "correct": 0.5}


class Judged(BaseModel):
    case: str
    status: str = Field(description="the attempt's status, or why the answer was never validated")
    score: float
    seconds: float


class TuneReport(BaseModel):
    model: str
    optimizer: TuneOptimizer
    program: str = Field(description="where the compiled program was saved")
    cases: list[str] = Field(description="the training set: the cases that had a request")
    skipped: dict[str, str] = Field(default_factory=dict, description="cases left out, and why")
    judged: list[Judged] = Field(default_factory=list, description="every answer the optimizer had judged")
    demos: int = Field(0, description="demonstrations in the compiled program")


class _Ask(Rewriter):
    """Records the first request of a case and declines: the request is all the example needs."""

    name = "tuning"

    def __init__(self) -> None:
        super().__init__()
        self.request: RewriteRequest | None = None

    def rewrite(self, request: RewriteRequest) -> Candidate:
        self.request = request
        return Candidate.decline(self.name, "recording the request only")


class _Answer(Rewriter):
    """Offers one candidate, once: the answer being judged."""

    name = "llm"

    def __init__(self, candidate: Candidate) -> None:
        super().__init__()
        self.candidate: Candidate | None = candidate

    def rewrite(self, request: RewriteRequest) -> Candidate:
        candidate, self.candidate = self.candidate, None
        return candidate or Candidate.decline(self.name, "one answer only")


def tune(
    cases: list[Case],
    settings: OptimizeSettings,
    tuning: TuneSettings,
    *,
    out: Path,
    work_dir: Path,
    progress=None,
) -> TuneReport:
    """Compile the llm rewriter's program (`settings.model` with its `llm_options`) on `cases` and save it to
    `out` (JSON, for --program); each answer is judged by an optimize run with `settings` (its device and
    sandbox)."""
    if not settings.model:
        raise UsageError("tune needs a model", hint="Pass --model NAME (and --api-base URL), or set INTELLIPERF_MODEL.")
    from .. import api

    api.check_paths(files={"--out": out}, folders={"--work-dir": work_dir})
    progress = progress or (lambda message: None)
    model, optimizer, demos, rounds = settings.model, tuning.optimizer, tuning.demos, tuning.rounds
    rewriter = LLMRewriter(LLMRewriter.Options(model=model, **(settings.llm_options or {})))
    lm, program = rewriter.configured()
    report = TuneReport(model=model, optimizer=optimizer, program=str(out), cases=[])
    run = _Runner(work_dir, settings, progress)
    examples, requests = [], {}
    for case in cases:
        request, why = run.request(case)
        if request is None:
            report.skipped[case.name] = why
            continue
        requests[case.name] = request
        report.cases.append(case.name)
        fields = scrubbed(prompt_fields(request))
        examples.append(_example(fields, case))
    if not examples:
        raise UsageError("no case had a bottleneck to rewrite: nothing to tune on", hint=json.dumps(report.skipped))

    def metric(example, prediction, trace=None) -> float:
        case = next(c for c in cases if c.name == example.case)
        answer = {k: str(getattr(prediction, k, "") or "") for k in ("kernel", "launcher", "rationale")}
        judged = run.judge(case, candidate_from_answer("llm", requests[case.name], answer))
        report.judged.append(judged)
        write_atomic(work_dir / "tune.json", report.model_dump_json(indent=2))
        return judged.score

    import dspy

    if optimizer == "bootstrap":
        tuner = dspy.BootstrapFewShot(
            metric=metric,
            metric_threshold=SCORES["accepted"],
            max_bootstrapped_demos=demos,
            max_labeled_demos=0,
            max_rounds=rounds,
        )
        compile_args = {}
    else:
        tuner = dspy.MIPROv2(
            metric=metric, auto="light", num_threads=1, max_bootstrapped_demos=demos, max_labeled_demos=0
        )
        compile_args = {"requires_permission_to_run": False}
    with dspy.context(lm=lm):
        compiled = tuner.compile(program, trainset=examples, **compile_args)
    out.parent.mkdir(parents=True, exist_ok=True)
    compiled.save(str(out))
    report.demos = sum(len(p.demos) for p in compiled.predictors())
    write_atomic(work_dir / "tune.json", report.model_dump_json(indent=2))
    return report


def _example(fields: dict, case: Case):
    import dspy

    return dspy.Example(**fields, case=case.name).with_inputs(*fields)


class _Runner:
    """`optimize` on one case, in-process, with a rewriter of ours and its own out-dir."""

    def __init__(self, work_dir: Path, settings: OptimizeSettings, progress) -> None:
        self.work_dir, self.settings, self.progress = work_dir, settings, progress
        self.count = 0

    def _optimize(self, case: Case, rewriter: Rewriter, where: Path):
        from .. import api

        return api.optimize(
            [sys.executable, case.program.name],
            self.settings,
            formula=case.formula,
            cwd=str(case.program.parent),
            rewriter=rewriter,
            max_attempts=1,
            out_dir=where,
            progress=lambda m: self.progress(f"  {case.name}: {m}"),
        )

    def request(self, case: Case) -> tuple[RewriteRequest | None, str]:
        """The request the llm rewriter would get first, or why there is none."""
        self.progress(f"{case.name}: recording its request")
        ask = _Ask()
        report = self._optimize(case, ask, self.work_dir / case_slug(case.name) / "request")
        if ask.request is None:
            return None, (report.notes or ["no request was made"])[-1]
        return ask.request, ""

    def judge(self, case: Case, candidate: Candidate) -> Judged:
        """One answer through `optimize`, as the only candidate."""
        self.count += 1
        self.progress(f"{case.name}: judging answer {self.count}")
        begin = time.monotonic()
        where = self.work_dir / case_slug(case.name) / f"answer-{self.count}"
        report = self._optimize(case, _Answer(candidate), where)
        attempts = report.optimization.attempts if report.optimization else []
        status = attempts[0].status if attempts else "not validated"
        correct = bool(attempts and attempts[0].verdict and attempts[0].verdict.correct)
        score = SCORES["accepted"] if status == "accepted" else SCORES["correct"] if correct else 0.0
        return Judged(case=case.name, status=status, score=score, seconds=round(time.monotonic() - begin, 1))
