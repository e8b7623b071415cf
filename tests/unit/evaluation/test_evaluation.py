"""`intelliperf eval` on CPU: the llm rewriter driven by a loopback OpenAI-compatible server
with one answer of each failure class, the offline rewriters beside it, budgets, resume, and
the counts of the report checked one by one."""

from __future__ import annotations

import json
import re
from typing import get_args

import pytest
from conftest import EXAMPLES, REPO, run_cli
from model_answers import KERNEL, LAUNCHER, REDUCED_LINE, fixed_kernel, interpreter_cases, reply

from intelliperf.errors import UsageError
from intelliperf.evaluation.run import FAILURE_CLASSES, Outcome, classify, find_cases, totals
from intelliperf.models import Attempt, Problem, ProblemKind
from intelliperf.testing.openai_server import ScriptedServer


def test_classify_reads_the_first_problem_kind_and_ignores_wins_and_sweeps():
    def attempt(status: str, *kinds: str) -> Attempt:
        made = Attempt(number=1, rewriter="llm", title="t", status=status)
        made.set_problems([Problem(kind=k, message=f"a {k} problem") for k in kinds])  # type: ignore[arg-type]
        return made

    assert classify(attempt("accepted")) is None
    assert classify(attempt("rejected", "sweep", "metric")) is None
    assert classify(attempt("invalid", "syntax")) == "syntax"
    assert classify(attempt("invalid", "format")) == "syntax"
    assert classify(attempt("invalid", "unchanged")) == "scope"
    assert classify(attempt("rejected", "crash", "unwritten")) == "crash"
    assert classify(attempt("rejected", "mismatch", "slower")) == "mismatch"
    assert classify(attempt("rejected", "nan-handling")) == "mismatch"
    assert classify(attempt("timed-out", "timeout")) == "timeout"
    assert classify(attempt("interrupted", "interrupted")) == "other"
    # the reasons the next rewrite reads are the same problems as text
    told = attempt("rejected", "crash", "unwritten").reasons
    assert told == "- [crash] a crash problem\n- [unwritten] a unwritten problem"


def test_every_problem_kind_has_one_failure_class():
    """The kinds are written once (models.ProblemKind); each but a screen or a user's stop is classified,
    so no rejection is counted as "other" for want of a class."""
    every_kind = [k for kinds in FAILURE_CLASSES.values() for k in kinds]
    assert len(every_kind) == len(set(every_kind))  # one class per kind
    assert set(get_args(ProblemKind)) - set(every_kind) == {"sweep", "interrupted"}
    assert set(every_kind) <= set(get_args(ProblemKind))


def test_totals_count_fast_p_only_where_something_was_timed():
    from intelliperf.validators.verdict import Speedup

    def speed(x: float) -> Speedup:
        return Speedup(
            estimate=x, low=x * 0.9, high=x * 1.1, reference_ms=1.0, candidate_ms=1 / x, pairs=10, method="t"
        )

    gpu = [
        Outcome(
            case="a",
            row="r",
            status="won",
            correct=True,
            accepted=True,
            fast_1=True,
            fast_1_5=True,
            speedup=speed(2.0),
            tokens=10,
        ),
        Outcome(
            case="b",
            row="r",
            status="won",
            correct=True,
            accepted=True,
            fast_1=True,
            fast_1_5=False,
            speedup=speed(1.125),
            tokens=5,
        ),
        Outcome(case="c", row="r", status="no-win", fast_1=False, fast_1_5=False, failures={"crash": 2}),
        Outcome(case="d", row="r", status="skipped", detail="token budget spent"),
    ]
    t = totals(gpu)
    assert (t.cases, t.correct, t.accepted, t.fast_1, t.fast_1_5, t.tokens, t.skipped) == (3, 2, 2, 2, 1, 15, 1)
    assert t.geomean_speedup == pytest.approx(1.5) and t.failures == {"crash": 2}
    cpu = totals([Outcome(case="a", row="r", status="won", correct=True, accepted=True)])
    assert cpu.fast_1 is None and cpu.geomean_speedup is None


def test_cases_come_from_labels_and_bad_labels_are_named(tmp_path):
    found = [c.name for c in find_cases([REPO / "examples", REPO / "benchmarks" / "corpus"])]
    assert "atomic_contention/contended_sum:atomicContention" in found
    assert "corpus/vllm_bincount:atomicContention" in found and "overlap/gemm:overlap" in found
    assert not any("reduced_sum" in name or "_harness" in name for name in found)  # clean kernels, helpers
    only = find_cases([REPO / "examples"], "bankConflict")
    assert [c.name for c in only] == ["bank_conflict/column_sums:bankConflict"]
    bad = tmp_path / "bad.py"
    bad.write_text('"""A kernel.\n\nLabels: overlap=maybe\n"""\n')
    with pytest.raises(UsageError, match=r"FORMULA=yes\|no pairs"):
        find_cases([bad])


@pytest.mark.slow
def test_eval_cli_refuses_bad_input_before_running(tmp_path):
    none = run_cli("eval", str(tmp_path / "missing"))
    assert none.returncode == 2 and "does not exist" in none.stderr
    (tmp_path / "unlabelled.py").write_text("print(1)\n")
    unlabelled = run_cli("eval", str(tmp_path / "unlabelled.py"))
    assert unlabelled.returncode == 2 and "no `Labels:` line" in unlabelled.stderr
    no_model = run_cli("eval", "-r", "llm", str(EXAMPLES))
    assert no_model.returncode == 2 and "the llm row needs a model" in no_model.stderr
    wrong_row = run_cli("eval", "-r", "replay", str(EXAMPLES))
    assert wrong_row.returncode == 2 and "--rewriter takes llm, offline, recipes, search" in wrong_row.stderr
    resume = run_cli("eval", "--resume", "--out-dir", str(tmp_path / "new"), str(EXAMPLES / "contended_sum.py"))
    assert resume.returncode == 2 and "there is no" in resume.stderr
    budget = run_cli("eval", "--candidates", "0", "--out-dir", str(tmp_path / "b"), str(EXAMPLES / "contended_sum.py"))
    assert budget.returncode == 2 and "--candidates must be at least 1" in budget.stderr
    assert not (tmp_path / "b").exists()  # refused before anything ran or was written
    for result in (none, unlabelled, no_model, wrong_row, resume, budget):
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_eval_counts_each_failure_class_of_a_scripted_model_then_resumes_with_the_offline_row(tmp_path, monkeypatch):
    folder = interpreter_cases(tmp_path)
    out = tmp_path / "eval"
    malicious = LAUNCHER.replace("    out = torch.zeros", "    open('/proc/1/environ').read()\n    out = torch.zeros")
    assert malicious != LAUNCHER
    replies = [
        reply(
            "@triton.jit\ndef contended_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
            "    pid = tl.program_id(0\n",
            "syntax error",
        ),
        reply(fixed_kernel(REDUCED_LINE) + "\n\ndef main():\n    return 1\n", "changes the program's main"),
        reply(fixed_kernel(REDUCED_LINE), "reads the environment of pid 1", launcher=malicious),
        reply(fixed_kernel("tl.atomic_add(out_ptr, tl.sum(x) * 2.0)"), "wrong result"),
        reply(fixed_kernel("tl.atomic_add(out_ptr + zeros, x * 1.0, mask=mask)"), "no real change"),
        reply(fixed_kernel(REDUCED_LINE), "Sum the block first, then one atomic per program."),
    ]
    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    monkeypatch.setenv("INTELLIPERF_CACHE_DIR", str(tmp_path / "cache"))  # every answer comes from the server
    with ScriptedServer(replies) as server:
        llm = run_cli(
            "eval",
            "-r",
            "llm",
            "--model",
            "scripted-model",
            "--api-base",
            server.url,
            "--api-key-env",
            "TEST_LLM_API_KEY",
            "--device",
            "cpu",
            "--max-attempts",
            "6",
            "--max-tokens",
            "900",
            "--out-dir",
            str(out),
            str(folder / "contended_sum.py"),
            str(folder / "contended_histogram.py"),
            cwd=tmp_path,
            timeout=900,
        )
        assert len(server.requests) == 6
    # the budget ran out before the second case: said on stderr and in eval.md, and the exit code is not 0
    assert llm.returncode == 8, llm.stderr[-3000:]
    assert "1 case run(s) skipped: the budget was spent first; --resume runs them." in llm.stderr
    assert "**Not every case ran**: 1 case(s) of llm skipped (token budget spent (900 of 900))" in llm.stdout
    report = json.loads((out / "eval.json").read_text())
    first, second = report["outcomes"]
    assert first["case"] == "atomic_contention/contended_sum:atomicContention" and first["status"] == "won"
    assert first["failures"] == {"syntax": 1, "scope": 1, "policy": 1, "crash": 1, "metric": 1}
    assert (first["attempts"], first["attempts_to_win"], first["tokens"], first["tokens_to_win"]) == (6, 6, 900, 900)
    assert first["correct"] and first["accepted"] and first["fast_1"] is None  # the interpreter times nothing
    assert second["status"] == "skipped" and "token budget spent (900 of 900)" in second["detail"]
    llm_total = report["totals"]["llm"]
    assert (llm_total["cases"], llm_total["correct"], llm_total["accepted"], llm_total["tokens"]) == (1, 1, 1, 900)
    assert "| llm | 1 | 1/1 | 1/1 | n/a | n/a | - | 900 | 1 | 1 | 1 | 1 | 0 | 0 | 0 | 1 | 0 |" in llm.stdout
    assert (out / "eval.png").stat().st_size > 1000 and (out / "eval.md").exists()
    assert REDUCED_LINE not in (folder / "contended_sum.py").read_text()  # the user's files stay as they were
    # the folder eval made ignores itself in git, though the first case's run made the folders inside it
    assert "*" in (out / ".gitignore").read_text().splitlines()
    settings = re.search(r"settings: ([^\n]*)\.", (out / "eval.md").read_text())
    assert settings and "max_attempts=6" in settings[1] and "{" not in settings[1]  # name=value, not a dict

    again = run_cli("eval", "--device", "cpu", "--out-dir", str(out), str(folder / "contended_sum.py"))
    assert again.returncode == 2 and "--resume" in again.stderr
    offline = run_cli(
        "eval",
        "--resume",
        "-r",
        "offline",
        "--device",
        "cpu",
        "--max-attempts",
        "6",
        "--out-dir",
        str(out),
        str(folder / "contended_sum.py"),
        cwd=tmp_path,
        timeout=900,
    )
    assert offline.returncode == 0, offline.stderr[-3000:]
    report = json.loads((out / "eval.json").read_text())
    assert report["rows"] == ["llm", "offline"]
    rows = {(o["row"], o["case"]): o for o in report["outcomes"]}
    assert rows[("llm", first["case"])]["failures"] == first["failures"]  # kept, not asked again
    win = rows[("offline", first["case"])]
    assert win["status"] == "won" and win["winner"] == "reduce-then-atomic" and win["tokens"] == 0
    assert report["totals"]["offline"]["accepted"] == 1
    assert "| offline | 1 | 1/1 | 1/1 |" in (out / "eval.md").read_text()


# Ways a model's answer goes wrong, applied at random to the right fix (seeded, so reproducible).
MUTATIONS = {
    "wrong constant": lambda k: k.replace("tl.sum(x)", "tl.sum(x) + 1.0"),
    "dropped line": lambda k: "\n".join(line for line in k.splitlines() if "tl.load" not in line) + "\n",
    "broken syntax": lambda k: k.replace("tl.sum(x))", "tl.sum(x)"),
    "reads a file": lambda k: k.replace(
        "    pid = tl.program_id(0)", "    pid = tl.program_id(0)\n    open('/etc/hostname').read()"
    ),
    "renamed kernel": lambda k: k.replace("def contended_sum_kernel", "def other_kernel"),
    "no change": lambda k: KERNEL_TEXT,
}
KERNEL_TEXT = "@triton.jit\n" + KERNEL + "\n"


@pytest.mark.slow
def test_eval_accounts_for_every_randomly_mutated_answer(tmp_path, monkeypatch):
    """Whatever the answers are, every attempt is a win or exactly one failure class (never
    'other'), the classes add up to the attempts, and the win (if any) is correct."""
    import random

    rng = random.Random(20261123)
    names = rng.sample(sorted(MUTATIONS), 4)
    replies = [reply(MUTATIONS[name](fixed_kernel(REDUCED_LINE)), name) for name in names]
    folder = interpreter_cases(tmp_path)
    out = tmp_path / "eval"
    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    monkeypatch.setenv("INTELLIPERF_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedServer(replies) as server:
        done = run_cli(
            "eval",
            "-r",
            "llm",
            "--model",
            "scripted-model",
            "--api-base",
            server.url,
            "--api-key-env",
            "TEST_LLM_API_KEY",
            "--device",
            "cpu",
            "--max-attempts",
            "4",
            "--out-dir",
            str(out),
            str(folder / "contended_sum.py"),
            cwd=tmp_path,
            timeout=900,
        )
    assert done.returncode == 6, (names, done.stderr[-3000:])  # no mutant is the fix
    (outcome,) = json.loads((out / "eval.json").read_text())["outcomes"]
    assert outcome["status"] == "no-win" and outcome["attempts"] == 4 and not outcome["accepted"]
    assert sum(outcome["failures"].values()) == 4 and "other" not in outcome["failures"], (names, outcome)
    expected = {
        "wrong constant": "crash",
        "dropped line": "crash",
        "broken syntax": "syntax",
        "reads a file": "policy",
        "renamed kernel": "scope",
        "no change": "scope",
    }
    want: dict[str, int] = {}
    for name in names:
        want[expected[name]] = want.get(expected[name], 0) + 1
    assert outcome["failures"] == want, (names, outcome["failures"])
