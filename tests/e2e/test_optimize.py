"""`intelliperf optimize` end to end on CPU: real programs, real subprocesses, a real git
repository, and a loopback OpenAI-compatible server driving the llm rewriter through DSPy."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXAMPLES, REPO, SMALL, run_cli
from model_answers import REDUCED_LINE, answer, fixed_kernel

from intelliperf.testing.openai_server import Reply, ScriptedServer

SUM_CMD = [sys.executable, "contended_sum.py", *SMALL]


def _project(tmp_path: Path) -> Path:
    """The examples as a user's git repository."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns("__pycache__"))
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    return project


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def test_optimize_fixes_the_contended_sum_in_place_and_refuses_a_dirty_tree(tmp_path):
    project = _project(tmp_path)
    harness = project / "_harness.py"
    harness.write_text(harness.read_text() + "# local edit\n")
    refused = run_cli("optimize", "--in-place", "--", *SUM_CMD, cwd=project)
    assert refused.returncode == 2 and "uncommitted changes" in refused.stderr and "_harness.py" in refused.stderr
    assert harness.read_text().endswith("# local edit\n")
    subprocess.run(["git", "checkout", "-q", "_harness.py"], cwd=project, check=True)

    out = tmp_path / "out"
    done = run_cli("optimize", "--in-place", "--head-start", "--out-dir", str(out), "--", *SUM_CMD, cwd=project)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "recipes then search (no model configured" in done.stderr
    opt = _report(out)["optimization"]
    assert opt["status"] == "won" and opt["winner"] == 1 and opt["applied"] is True
    first = opt["attempts"][0]
    assert any("started ahead" in note for note in first["verdict"]["notes"])  # while the reference was captured
    assert (first["rewriter"], first["title"], first["status"]) == ("recipes", "reduce-then-atomic", "accepted")
    # every element onto one address, then one update per program (64 of them)
    assert first["before"]["metric"] == 65536 and first["after"]["metric"] == 64 and first["after"]["metric_modelled"]
    assert first["verdict"]["correct"] and first["verdict"]["faster"] is None
    seconds = first["seconds"]
    assert {"rewrite", "candidate_run", "compare", "replay", "metric", "total"} <= set(seconds)
    assert seconds["total"] >= seconds["candidate_run"] + seconds["replay"]  # the wall time: the stages are in it
    assert f"| {seconds['total'] + seconds['rewrite']:.1f} |" in (out / "report.md").read_text()  # not their sum
    # The tree now holds exactly the winner's patch, and the program still checks its own result.
    diff = subprocess.run(["git", "diff"], cwd=project, capture_output=True, text=True).stdout
    patch = (out / "winner.patch").read_text()
    assert [line for line in diff.splitlines() if line[:1] in "+-"] == [
        line for line in patch.splitlines() if line[:1] in "+-"
    ]
    assert "tl.sum(tl.where(mask, x, tl.zeros_like(x)))" in patch
    check = subprocess.run(
        [sys.executable, "contended_sum.py", *SMALL],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert check.returncode == 0 and "OK" in check.stdout
    assert "Correct fix: attempt 1; speed not measured without a GPU." in done.stdout and "Validated" not in done.stdout
    assert "not timed (CPU)" in done.stdout and (out / "report.md").read_text().count("### Attempt") == 1


def test_optimize_privatizes_the_histogram_without_touching_the_users_files(tmp_path):
    before = _digest(REPO / "examples")
    out = tmp_path / "out"
    done = run_cli(
        "optimize",
        "--out-dir",
        str(out),
        "--",
        sys.executable,
        "examples/atomic_contention/contended_histogram.py",
        *SMALL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    opt = _report(out)["optimization"]
    assert opt["status"] == "won" and opt["attempts"][0]["title"] == "privatize-histogram"
    assert opt["attempts"][0]["before"]["metric"] > 8 * opt["attempts"][0]["after"]["metric"]
    assert _digest(REPO / "examples") == before and not opt["applied"]
    check = subprocess.run(
        ["git", "apply", "--check", str(out / "winner.patch")], cwd=REPO, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert (out / "attempts" / "01" / "files" / "examples" / "atomic_contention" / "contended_histogram.py").exists()
    how = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("- to apply it:"))
    assert f"`git apply {out / 'winner.patch'}` in the project folder" in how and "`TRITON_INTERPRET=1`" in how


def test_optimize_on_a_clean_kernel_says_there_is_nothing_to_fix(tmp_path):
    done = run_cli(
        "optimize",
        "--out-dir",
        str(tmp_path),
        "--",
        sys.executable,
        "examples/atomic_contention/reduced_sum.py",
        *SMALL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = _report(tmp_path)
    assert report["optimization"] is None and report["selected"] is None
    assert any("nothing to optimize" in n for n in report["notes"])


def test_optimize_cli_errors_for_the_model_come_before_any_run(tmp_path):
    no_model = run_cli("optimize", "--rewriter", "llm", "--", "python", "nope.py")
    assert no_model.returncode == 2 and "--rewriter llm needs a model" in no_model.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("INTELLIPERF_API_KEY", "OPENAI_API_KEY")}
    no_key = run_cli("optimize", "--model", "gpt-4o", "--", "python", "nope.py", env=env)
    assert no_key.returncode == 5 and "INTELLIPERF_API_KEY / OPENAI_API_KEY is not set" in " ".join(
        no_key.stderr.split()
    )
    assert "Traceback" not in no_key.stderr
    replay = run_cli(
        "optimize", "--rewriter", "replay", "--transcript", str(tmp_path / "none.json"), "--", sys.executable, "x.py"
    )
    assert replay.returncode == 2 and "cannot read the transcript" in replay.stderr


def test_llm_rewriter_goes_through_bad_answers_to_a_validated_win(tmp_path, monkeypatch):
    import intelliperf
    from intelliperf.validators import ValidationSettings

    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-never-leaks")
    monkeypatch.chdir(EXAMPLES)
    replies = [
        Reply(
            content=answer(
                "@triton.jit\ndef contended_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                "    pid = tl.program_id(0\n",
                "syntax error",
            )
        ),
        Reply(content=answer(fixed_kernel("tl.atomic_add(out_ptr, tl.sum(x) * 2.0)"), "wrong result")),
        Reply(content=answer(fixed_kernel("tl.atomic_add(out_ptr + zeros, x * 1.0, mask=mask)"), "no real change")),
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply(delay_s=4, content="too late"),
        Reply(content=answer(fixed_kernel(REDUCED_LINE), "Sum the block first, then one atomic per program.")),
    ]
    out = tmp_path / "out"
    with ScriptedServer(replies) as server:
        report = intelliperf.optimize(
            [sys.executable, "contended_sum.py", *SMALL],
            rewriter="llm",
            model="scripted-model",
            device="cpu",
            llm_options={
                "api_base": server.url,
                "api_key_env": "TEST_LLM_API_KEY",
                "backoff_s": 0.05,
                "timeout_s": 2.0,
                "cache_dir": None,
                "transcript": out / "transcript.json",
            },
            out_dir=out,
            validation=ValidationSettings(head_start=True),
        )
        prompts = server.prompts()
    opt = report.optimization
    assert [a.status for a in opt.attempts] == ["invalid", "rejected", "rejected", "accepted"]
    # Each validated one ran in a Python started ahead: the first while the reference was captured (kept
    # through the invalid answer), each next one while the one before was replayed.
    assert [any("started ahead" in n for n in a.verdict.notes) for a in opt.attempts[1:]] == [True, True, True]
    assert opt.winner == 4 and opt.attempts[3].after.metric == 64 and opt.tokens == 4 * 150  # one update a program
    # Each next prompt carries the concrete reason the previous answer failed.
    assert len(prompts) == 6
    assert "not valid Python: '(' was never closed at line 3" in prompts[1]
    # The example checks its own result, so a wrong kernel fails the program: its assertion is the reason.
    assert "[crash]" in prompts[2] and "Expected 32783.5" in prompts[2] and "but got 65567.1" in prompts[2]
    assert "did not improve: 65536 -> 65536" in prompts[3]
    assert "[[ ## history ## ]]\n[]" in prompts[0] and "Attempt 3 (llm: no real change): rejected" in prompts[3]
    # the diagnosis's evidence reaches the model as typed fields: the static view's instructions per line
    assert "cuda:90 line 21: " in prompts[0] and "atomic atom.global" in prompts[0]
    saved = json.loads((out / "transcript.json").read_text())
    assert len(saved["answers"]) == 4 and REDUCED_LINE in saved["answers"][3]["kernel"]
    for text in ((out / "report.json").read_text(), (out / "transcript.json").read_text()):
        assert "sk-never-leaks" not in text
    assert REDUCED_LINE not in (EXAMPLES / "contended_sum.py").read_text()


def test_an_interrupted_run_leaves_a_complete_report(tmp_path):
    transcript = tmp_path / "answers.json"
    transcript.write_text(
        json.dumps(
            {
                "version": 1,
                "answers": [
                    {
                        "kernel": fixed_kernel("tl.atomic_add(out_ptr, tl.sum(x) + 1.0)"),
                        "rationale": "wrong on purpose",
                    },
                    {"kernel": fixed_kernel(REDUCED_LINE), "rationale": "the fix"},
                ],
            }
        )
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "intelliperf",
            "optimize",
            "--rewriter",
            "replay",
            "--transcript",
            str(transcript),
            "--out-dir",
            str(out),
            "--",
            *SUM_CMD,
        ],
        cwd=EXAMPLES,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline:
        report = out / "report.json"
        if report.exists() and len(_report(out)["optimization"]["attempts"]) == 1:
            break
        time.sleep(0.2)
    time.sleep(1.0)  # into the second attempt's validation
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert "interrupted: the attempts so far are in" in stderr
    opt = _report(out)["optimization"]
    assert opt["status"] == "interrupted" and "Ctrl-C" in opt["error"]
    assert opt["attempts"][0]["status"] == "rejected" and "Scalars are not close" in opt["attempts"][0]["reasons"]
    # the attempt in flight is in the report too, with its diff, next to its folder
    assert opt["attempts"][1]["status"] == "interrupted" and "Ctrl-C" in opt["attempts"][1]["reasons"]
    assert "tl.sum" in opt["attempts"][1]["diff"] and (out / "attempts" / "02").is_dir()
    assert "**interrupted**" in (out / "report.md").read_text()


def test_best_of_n_validates_every_candidate_of_a_round(tmp_path, monkeypatch):
    import intelliperf

    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    monkeypatch.chdir(EXAMPLES)
    replies = [
        Reply(content=answer(fixed_kernel("tl.atomic_add(out_ptr + zeros, x * 1.0, mask=mask)"), "no change")),
        Reply(content=answer(fixed_kernel(REDUCED_LINE), "sum first")),
    ]
    with ScriptedServer(replies) as server:
        report = intelliperf.optimize(
            [sys.executable, "contended_sum.py", *SMALL],
            rewriter="llm",
            model="scripted-model",
            device="cpu",
            candidates=2,
            llm_options={
                "api_base": server.url,
                "api_key_env": "TEST_LLM_API_KEY",
                "cache_dir": None,
                "transcript": None,
            },
            out_dir=tmp_path,
        )
        assert len(server.requests) == 2 and all(r["temperature"] == 0.8 for r in server.requests)
    opt = report.optimization
    assert [a.status for a in opt.attempts] == ["rejected", "accepted"] and opt.winner == 2
    assert "did not improve" in opt.attempts[0].reasons


def test_a_timeout_on_a_busy_machine_is_retried_once_and_stays_unjudged(tmp_path, monkeypatch):
    """A candidate killed at its limit is `timed-out` (not judged), and on a busy machine it gets
    one more validation with twice the time before that."""
    import intelliperf
    from intelliperf.optimization import attempt as loop_attempt
    from intelliperf.validators import ValidationSettings

    slow = (
        "def contended_sum(x: torch.Tensor, block: int = 1024) -> torch.Tensor:\n"
        "    for _ in range(10**10):\n        pass\n"
        "    out = torch.zeros(1, device=x.device, dtype=torch.float32)\n"
        "    contended_sum_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)\n"
        "    return out\n"
    )
    transcript = tmp_path / "answers.json"
    transcript.write_text(
        json.dumps(
            {
                "version": 1,
                "answers": [
                    {"kernel": fixed_kernel(REDUCED_LINE), "launcher": slow, "rationale": "right, but slow to start"}
                ],
            }
        )
    )
    monkeypatch.setattr(loop_attempt, "busy", lambda: True)
    report = intelliperf.optimize(
        SUM_CMD,
        cwd=str(EXAMPLES),
        device="cpu",
        rewriter="replay",
        transcript=transcript,
        max_attempts=1,
        out_dir=tmp_path / "out",
        validation=ValidationSettings(patience=0.05),
    )  # limits of a few seconds
    (attempt,) = report.optimization.attempts
    assert attempt.status == "timed-out" and report.optimization.status == "no-win", attempt.reasons
    assert [p.kind for p in attempt.verdict.problems] == ["timeout"]
    assert any("validated a second time after a timeout on a busy machine" in n for n in attempt.verdict.notes)


def test_a_program_named_by_a_relative_path_runs_in_the_copies_too(tmp_path):
    """`-- .venv/bin/python app.py`: the copies of the project the candidates run in start elsewhere
    and hold no virtual environment, so the program's path is made absolute first."""
    relative = os.path.relpath(sys.executable, EXAMPLES)
    assert os.sep in relative and not os.path.isabs(relative)
    done = run_cli(
        "optimize",
        "--device",
        "cpu",
        "--max-attempts",
        "1",
        "--out-dir",
        str(tmp_path / "out"),
        "--",
        relative,
        "contended_sum.py",
        *SMALL,
        cwd=EXAMPLES,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = _report(tmp_path / "out")
    assert report["run"]["command"][0] == os.path.abspath(os.path.join(EXAMPLES, relative))
    assert report["optimization"]["attempts"][0]["status"] == "accepted"


def test_a_sweep_runs_through_the_loop_and_is_never_the_winner(tmp_path, monkeypatch):
    """The search's sweep end to end on the CPU: the kernel under @triton.autotune (written outputs
    restored, a short benchmark per config) and the launch's own num_warps/num_stages dropped pass
    the policy and scope checks and run correctly in the candidate's sandboxed program; the attempt
    is a screen, not a win: its outputs are compared, and no replay, sanitizer or timing runs. The
    interpreter has no timer to tune with, so the GPU is faked at the loop's hardware facts and the
    autotuner's choice cannot be read (it is on the H100)."""
    import intelliperf
    from intelliperf.formulas.atomic_contention import AtomicContention
    from intelliperf.optimization import loop
    from intelliperf.rewriters import HardwareFacts, search

    class SweepFirst(AtomicContention):  # a user's formula that wants the sweep first (as overlap does)
        name = "atomicContentionSweepFirst"
        sweep_first = True

    monkeypatch.setattr(loop, "_hardware", lambda interpret: HardwareFacts(device="a GPU (faked for the test)"))
    report = intelliperf.optimize(
        SUM_CMD, cwd=str(EXAMPLES), device="cpu", formula=SweepFirst, rewriter="search", max_attempts=1,
        out_dir=tmp_path / "out",
    )  # fmt: skip
    (attempt,) = report.optimization.attempts
    assert attempt.title == search.sweep_title(False) and attempt.verdict.correct, attempt.reasons
    assert attempt.status == "rejected" and report.optimization.winner is None
    assert "[sweep] a screen, not a fix" in attempt.reasons and attempt.chosen == {}
    assert "@triton.autotune(configs=" in attempt.diff and "restore_value=['out_ptr']" in attempt.diff
    assert any("a screen" in n for n in attempt.verdict.notes) and "replay" not in attempt.seconds
    assert attempt.verdict.checks and all(c.startswith("in-program") for c in attempt.verdict.checks)


def test_settings_objects_and_keywords_are_one_checked_input():
    """api.diagnose/optimize take a DiagnoseSettings/OptimizeSettings, or its fields as keywords on
    top of one; a wrong name or type is a UsageError naming the field, before anything runs."""
    import pytest

    from intelliperf.api import optimize
    from intelliperf.errors import UsageError
    from intelliperf.settings import DiagnoseSettings, OptimizeSettings, settled

    merged = settled(OptimizeSettings, OptimizeSettings(top_n=3, max_attempts=2), {"formula": "bankConflict"})
    assert (merged.top_n, merged.max_attempts, merged.formula) == (3, 2, "bankConflict")
    assert settled(DiagnoseSettings, None, {}).formula == "diagnoseOnly" and OptimizeSettings().formula == "auto"
    with pytest.raises(UsageError, match="top_nn: Extra inputs are not permitted"):
        optimize(["true"], top_nn=3)
    with pytest.raises(UsageError, match="max_attempts: Input should be a valid integer"):
        optimize(["true"], OptimizeSettings(), max_attempts="many")
