"""`intelliperf tune` on CPU: the llm rewriter's DSPy program compiled with BootstrapFewShot against
the validators, a loopback OpenAI-compatible server answering; every answer is judged by a real
optimize run (sandbox, replay, decision), and only the accepted one becomes a demonstration."""

from __future__ import annotations

import json
import os

import pytest
from conftest import run_cli
from model_answers import LAUNCHER, REDUCED_LINE, fixed_kernel, interpreter_cases, reply

from intelliperf.testing.openai_server import ScriptedServer


@pytest.mark.slow
def test_tune_keeps_only_the_answer_the_validators_accept_and_optimize_loads_it(tmp_path, monkeypatch):
    folder = interpreter_cases(tmp_path)
    saved, work = tmp_path / "tuned.json", tmp_path / "tune"
    replies = [
        reply(fixed_kernel("tl.atomic_add(out_ptr, tl.sum(x) * 2.0)"), "WRONG-RESULT"),
        reply(fixed_kernel(REDUCED_LINE), "Sum the block first, then one atomic per program."),
    ]
    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    monkeypatch.setenv("INTELLIPERF_CACHE_DIR", str(tmp_path / "cache"))
    common = ["--model", "scripted-model", "--api-key-env", "TEST_LLM_API_KEY", "--device", "cpu"]
    with ScriptedServer(replies) as server:
        result = run_cli(
            "tune",
            str(folder / "contended_sum.py"),
            *common,
            "--api-base",
            server.url,
            "--rounds",
            "2",
            "--out",
            str(saved),
            "--work-dir",
            str(work),
            cwd=tmp_path,
            timeout=900,
        )
        assert len(server.requests) == 2  # one answer per round
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((work / "tune.json").read_text())
    assert report["cases"] == ["atomic_contention/contended_sum:atomicContention"] and report["demos"] == 1
    assert [(j["status"], j["score"]) for j in report["judged"]] == [("rejected", 0.0), ("accepted", 1.0)]
    program = json.loads(saved.read_text())
    demos = program["rewrite.predict"]["demos"] if "rewrite.predict" in program else program["rewrite"]["demos"]
    assert len(demos) == 1 and REDUCED_LINE in demos[0]["kernel"] and "WRONG-RESULT" not in json.dumps(program)
    assert "contended_sum_kernel" in demos[0]["kernel_source"]  # the example's inputs are the request's fields
    assert REDUCED_LINE not in (folder / "contended_sum.py").read_text()  # the user's files stay as they were

    # The tuned program is what --program loads: its demonstration reaches the model's prompt.
    with ScriptedServer([reply(fixed_kernel(REDUCED_LINE), "again")]) as server:
        optimized = run_cli(
            "optimize",
            *common,
            "--api-base",
            server.url,
            "--program",
            str(saved),
            "--max-attempts",
            "1",
            "--out-dir",
            str(tmp_path / "opt"),
            "--",
            "python",
            "contended_sum.py",
            cwd=folder,
            timeout=900,
        )
        assert optimized.returncode == 0, optimized.stderr[-3000:]
        assert "Sum the block first, then one atomic per program." in server.prompts()[0]
    assert LAUNCHER in (folder / "contended_sum.py").read_text()


def test_tune_refuses_bad_input_before_running(tmp_path):
    no_model = run_cli("tune", str(tmp_path), "--device", "cpu", env={**os.environ, "INTELLIPERF_MODEL": ""})
    assert no_model.returncode == 2 and "tune needs a model" in no_model.stderr
    no_cases = run_cli("tune", "--model", "m")
    assert no_cases.returncode == 2 and "no cases named" in no_cases.stderr
    bad = run_cli("tune", str(tmp_path), "--model", "m", "--optimizer", "gepa")
    assert bad.returncode == 2 and "'gepa' is not one of 'bootstrap', 'mipro'" in " ".join(bad.stderr.split())
    assert "Traceback" not in no_model.stderr + no_cases.stderr + bad.stderr
