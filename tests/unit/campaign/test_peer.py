"""The peer's clock read as AgentKernelArena's evaluator reads it, from the reports its runners write."""

from __future__ import annotations

import json
import sys

from intelliperf.campaign.peer import read_times, run_commands, speedup, timed


def test_vllm_runner_report_per_test_case(tmp_path):
    (tmp_path / "build").mkdir()
    cases = [
        {"test_case_id": "perf1", "execution_time_ms": 0.5, "benchmark_method": "cuda_graph"},
        {"test_case_id": "perf2", "execution_time_ms": -1.0, "params": {"n": 2}},
    ]
    (tmp_path / "build" / "performance_report.json").write_text(json.dumps(cases))
    assert read_times(tmp_path, "") == {"perf1": 0.5, "perf2": -1.0}


def test_rocmbench_pytest_helper_timing_mean_by_params(tmp_path):
    (tmp_path / "perf").mkdir()
    cases = [{"op_name": "add", "params": {"SIZE": 4}, "timing_ms": {"mean": 0.2, "median": 0.1}}]
    (tmp_path / "perf" / "benchmark_results.json").write_text(json.dumps(cases))
    assert read_times(tmp_path, "") == {'{"SIZE": 4}': 0.2}


def test_geak_harness_printed_latency(tmp_path):
    assert read_times(tmp_path, "  [0] size=4  0.1ms\nGEAK_RESULT_LATENCY_MS=0.1460\n") == {"total": 0.146}


def test_the_peer_speedup_is_the_mean_of_case_ratios_and_none_on_a_failed_case():
    assert speedup({"a": 2.0, "b": 1.0}, {"a": 1.0, "b": 1.0}) == (1.5, "")
    assert speedup({"a": 2.0}, {"a": -1.0})[0] is None
    assert "differ" in speedup({"a": 2.0}, {"b": 1.0})[1]


def test_commands_run_in_the_task_folder_and_a_failure_says_which(tmp_path):
    (tmp_path / "ok.py").write_text("import os; print('Performance: 2.5 ms', os.environ['AKA_DEVICE'])")
    (tmp_path / "bad.py").write_text("raise SystemExit('no kernel')")
    env = {"AKA_DEVICE": "cpu", "PATH": "/usr/bin:/bin"}
    run = timed(["python3 ok.py"], tmp_path, env, 30)
    assert run.ok and run.times_ms == {"total": 2.5} and "cpu" in run.detail
    failed = run_commands(["python3 ok.py", "python3 bad.py"], tmp_path, env, 30)
    assert not failed.ok and failed.detail.startswith("`python3 bad.py`: exit 1") and "no kernel" in failed.detail
    slow = run_commands([f"{sys.executable} -c 'import time; time.sleep(5)'"], tmp_path, env, 1)
    assert not slow.ok and slow.detail.endswith("over 1 s")
    unsplittable = run_commands(['python3 -c "print(1)'], tmp_path, env, 5)
    assert not unsplittable.ok and "closing quotation" in unsplittable.detail
