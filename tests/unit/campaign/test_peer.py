"""The peer's clock read as AgentKernelArena's evaluator reads it, from the reports its runners write."""

from __future__ import annotations

import json
import os
import sys

import pytest

from intelliperf.campaign.peer import environment, read_times, run_commands, speedup, timed


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
    # pytest's summary buries the error under its banners: the error line comes first
    (tmp_path / "test_x.py").write_text("import triton_missing_module\n\ndef test_x():\n    pass\n")
    collected = run_commands(["pytest -x test_x.py -p no:cacheprovider"], tmp_path, {**os.environ, **env}, 60)
    assert not collected.ok
    assert collected.detail.startswith("`pytest -x test_x.py -p no:cacheprovider`: exit 2: E   ModuleNotFoundError")
    assert "triton_missing_module" in collected.detail and "1 error in" in collected.detail  # and the summary


AUTOTUNED = """\
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = torch.arange(300, dtype=torch.float32)
y = torch.empty_like(x)
twice[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, y, 300)
assert torch.equal(y, 2 * x)
print("Correctness: PASS")
"""


@pytest.mark.slow
def test_an_autotuned_task_passes_its_own_check_under_the_interpreter(tmp_path):
    """Triton's autotuner looks for a device clock and stops with "0 active drivers" under the interpreter;
    the campaign's CPU environment lets it run its first config, as intelliperf's own runs do."""
    (tmp_path / "task.py").write_text(AUTOTUNED)
    cpu = environment("cpu", "AKA_DEVICE")
    assert cpu["AKA_DEVICE"] == "cpu" and cpu["TRITON_INTERPRET"] == "1"
    run = run_commands(["python3 task.py"], tmp_path, cpu, 120)
    assert run.ok and "Correctness: PASS" in run.detail, run.detail
    plain = {k: v for k, v in cpu.items() if k != "PYTHONPATH"}
    bare = run_commands(["python3 task.py"], tmp_path, plain, 120)
    assert not bare.ok and "0 active drivers" in bare.detail
    gpu = environment("gpu", "AKA_DEVICE")
    assert gpu["AKA_DEVICE"] == "cuda" and gpu.get("PYTHONPATH") == os.environ.get("PYTHONPATH")
