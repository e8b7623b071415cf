"""`intelliperf campaign` on real vendored AgentKernelArena tasks under Triton's interpreter: the table,
a failing task as a row with its reason, Ctrl-C then --resume, and the same suite through a local Ray."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from intelliperf.campaign.schedule import run_process
from intelliperf.campaign.suite import find_tasks
from intelliperf.campaign.task import TaskSpec
from intelliperf.settings import CampaignSettings

VENDORED = REPO / "benchmarks" / "suites" / "agentkernelarena"
# Interpreter-sized: one passes its own check (nothing for the formulas to flag at its sizes), one fails
# it on this Triton (block pointers are gone from Triton 3.9), each in seconds.
TASKS = ("geak_eval/L1/refk_identity", "rocmbench/easy/test_add_kernel")


@pytest.fixture
def suite(tmp_path) -> Path:
    root = tmp_path / "suite"
    for name in TASKS:
        shutil.copytree(VENDORED / name, root / name)
    return root


def _rows(out: Path) -> dict[str, dict]:
    return {r["task"]: r for r in json.loads((out / "campaign.json").read_text())["rows"]}


def _check_rows(rows: dict[str, dict]) -> None:
    identity, add = rows["geak_eval/L1/refk_identity"], rows["rocmbench/easy/test_add_kernel"]
    assert identity["correct_before"] is True and identity["diagnosed"] == ["_identity_kernel"]
    assert identity["status"] == "nothing-found" and identity["detail"]
    assert add["status"] == "peer-fails" and add["correct_before"] is False
    assert "Block pointers have been removed" in add["detail"] or "exit 1" in add["detail"]


def test_campaign_interrupted_then_resumed(suite, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "intelliperf", "campaign", str(suite), "--device", "cpu", "--out-dir", str(out)]
    command += ["--max-attempts", "1"]
    started = subprocess.Popen(
        command, cwd=REPO, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "campaign.json").exists() or not _rows(out):
        assert started.poll() is None, started.communicate()
        time.sleep(0.5)
    first = _rows(out)
    assert len(first) == 1
    os.killpg(started.pid, signal.SIGINT)  # Ctrl-C at a terminal: the whole foreground group
    _, err = started.communicate(timeout=120)
    assert started.returncode == 130, err.decode()[-2000:]
    assert _rows(out) == first  # the task that was running left no row

    again = run_cli("campaign", str(suite), "--device", "cpu", "--out-dir", str(out), "--resume", "--max-attempts", "1")
    assert again.returncode == 6, again.stderr[-2000:]  # no win: nothing to fix in either task
    rows = _rows(out)
    assert set(rows) == set(TASKS) and all(rows[name] == row for name, row in first.items())
    _check_rows(rows)
    table = (out / "campaign.md").read_text()
    assert "| 2 | 1 | 1 | 0 (none) | 0 | 0 | 0 | - |" in table and "peer-fails 1" in table


def test_campaign_through_a_local_ray(suite, tmp_path):
    ray = pytest.importorskip("ray")
    from intelliperf.campaign.run import run

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        settings = CampaignSettings(device="cpu", ray_address="local", max_attempts=1)
        report = run(suite, settings, out_dir=tmp_path / "out")
    finally:
        ray.shutdown()
    _check_rows({r.task: r.model_dump() for r in report.rows})
    assert report.settings["workers"] == "ray local"


def test_a_task_that_runs_out_of_time_or_crashes_is_a_row_with_the_reason(tmp_path):
    task = tmp_path / "suite" / "sleepy"
    task.mkdir(parents=True)
    (task / "config.yaml").write_text("correctness_command:\n  - python3 -c 'import time; time.sleep(60)'\n")
    (spec_task,) = find_tasks(tmp_path / "suite")
    spec = TaskSpec(task=spec_task, work=tmp_path / "work", settings=CampaignSettings(device="cpu"))
    row = json.loads(run_process(spec.model_dump_json(), task_timeout_s=3))
    assert row["status"] == "error" and "ran over 3 s" in row["detail"]
    # The task's process killed from under it (as the kernel's OOM killer would): no row of its own.
    killer = "python3 -c 'import os, signal; os.kill(os.getppid(), signal.SIGKILL)'"
    (task / "config.yaml").write_text(f"correctness_command:\n  - {killer}\n")
    (spec_task,) = find_tasks(tmp_path / "suite")
    row = json.loads(run_process(spec.model_copy(update={"task": spec_task}).model_dump_json(), task_timeout_s=60))
    assert row["status"] == "error" and row["detail"].startswith("the task's process exited -9 without a row")
