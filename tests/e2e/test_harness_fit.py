"""Suite harnesses on the CPU: kernels in a file the harness loads by path, target kernels named by the
user (`--kernel`) or by the task's config.yaml, on a real vendored AgentKernelArena task and on a
harness-shaped program (tests/programs/harness)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PROGRAMS, REPO, py, run_cli

VENDORED = REPO / "benchmarks" / "suites" / "agentkernelarena"
HARNESS = PROGRAMS / "harness"


def _git_repo(source: Path, to: Path) -> Path:
    shutil.copytree(source, to, ignore=shutil.ignore_patterns("__pycache__", "build"))
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "task"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *command], cwd=to, check=True)
    return to


def _interpreted() -> dict[str, str]:
    return {**os.environ, "TRITON_INTERPRET": "1", "AKA_DEVICE": "cpu"}


def _changed(repo: Path) -> list[str]:
    return subprocess.run(["git", "diff", "--name-only"], cwd=repo, capture_output=True, text=True).stdout.split()


def _applies_to_a_fresh_clone(repo: Path, patch: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=clone, check=True)
    assert (clone / "source").is_dir() and _changed(clone) == _changed(repo)


def test_a_kernel_file_loaded_by_path_is_found_and_only_the_named_kernel_is_fixed(tmp_path):
    """`--kernel` picks the small contended kernel over the hotter clean one; profile, diagnose and the
    fix all point at source/ops.py, which the harness executes with spec_from_file_location."""
    repo = _git_repo(HARNESS, tmp_path / "task")
    command = ["python", "scripts/runner.py", "correctness"]
    done = run_cli(
        "optimize", "--device", "cpu", "--formula", "atomicContention", "--kernel", "^contended_sum_kernel$",
        "--max-attempts", "1", "--in-place", "--", *command, cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((repo / "intelliperf-out" / "report.json").read_text())
    ops = str(repo / "source" / "ops.py")
    assert [(k["name"], k["file"]) for k in report["kernels"]] == [("scale_kernel", ops), ("contended_sum_kernel", ops)]
    assert report["top"] == ["contended_sum_kernel"]  # the hotter scale_kernel is not diagnosed
    (finding,) = [f for d in report["diagnoses"] for f in d["findings"] if f["present"]]
    assert {line["file"] for line in finding["lines"]} == {ops}
    opt = report["optimization"]
    assert opt["kernel"] == "contended_sum_kernel" and opt["winner"] == 1 and list(opt["files"]) == ["source/ops.py"]
    patch = repo / "intelliperf-out" / "winner.patch"
    assert patch.read_text().startswith("--- a/source/ops.py\n+++ b/source/ops.py\n")
    assert _changed(repo) == ["source/ops.py"]  # --in-place wrote the loaded file, nothing else
    _applies_to_a_fresh_clone(repo, patch, tmp_path)
    again = subprocess.run(py(repo / "scripts" / "runner.py", "correctness"), env=_interpreted(), cwd=repo)
    assert again.returncode == 0


def test_diagnose_looks_only_at_the_kernels_the_regex_names(tmp_path):
    out = tmp_path / "report.json"
    program = py(PROGRAMS / "multi_kernel.py")
    done = run_cli("diagnose", "--device", "cpu", "--kernel", "add|scale", "-o", str(out), "--", *program)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert [k["name"] for k in report["kernels"]][0] == "heavy_kernel"  # ranked, not diagnosed
    assert report["top"] == [d["kernel"] for d in report["diagnoses"]] == ["add_kernel", "scale_kernel"]


def test_a_real_suite_task_is_optimized_in_the_file_its_runner_loads_by_path(tmp_path):
    """vllm/triton_bincount: task_runner.py executes source/triton_bincount.py by path; the lane fix lands
    there, applies to a clean checkout and passes the task's own correctness command."""
    repo = _git_repo(VENDORED / "vllm" / "triton_bincount", tmp_path / "task")
    done = run_cli(
        "optimize", "--device", "cpu", "--formula", "laneUtilization", "--kernel", "^_bincount_kernel$",
        "--max-attempts", "2", "--in-place", "--", "python", "scripts/task_runner.py", "correctness",
        cwd=repo, env=_interpreted(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((repo / "intelliperf-out" / "report.json").read_text())
    source = str(repo / "source" / "triton_bincount.py")
    assert report["kernels"][0]["file"] == source and report["top"] == ["_bincount_kernel"]
    assert list(report["optimization"]["files"]) == ["source/triton_bincount.py"]
    patch = repo / "intelliperf-out" / "winner.patch"
    assert "+++ b/source/triton_bincount.py" in patch.read_text() and _changed(repo) == ["source/triton_bincount.py"]
    _applies_to_a_fresh_clone(repo, patch, tmp_path)
    own = subprocess.run([sys.executable, "scripts/task_runner.py", "correctness"], cwd=repo, env=_interpreted())
    assert own.returncode == 0


def test_the_campaign_takes_the_target_kernels_from_the_tasks_config(tmp_path):
    """config.yaml names the small kernel; the campaign diagnoses and fixes it, not the hotter one, and the
    task's own correctness command passes on the winner."""
    task = tmp_path / "suite" / "harness"
    shutil.copytree(HARNESS, task)
    (task / "config.yaml").write_text(
        "source_file_path:\n  - source/ops.py\ntarget_kernel_functions:\n  - contended_sum_kernel\n"
        "correctness_command:\n  - python3 scripts/runner.py correctness\n"
    )
    out = tmp_path / "out"
    done = run_cli("campaign", str(tmp_path / "suite"), "--device", "cpu", "--max-attempts", "1", "--out-dir", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads((out / "campaign.json").read_text())["rows"]
    assert row["diagnosed"] == ["contended_sum_kernel"] and row["flagged"] == ["atomicContention"]
    assert row["status"] == "won" and row["peer_correct"] is True, row
