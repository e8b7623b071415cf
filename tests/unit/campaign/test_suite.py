"""The suite reader on the vendored AgentKernelArena tasks: every config read as YAML reads it, the
held-out tasks absent, commands run by this interpreter."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from intelliperf.campaign.suite import KEYS, argv, copy_task, find_tasks, read_config
from intelliperf.errors import UsageError

SUITE = Path(__file__).resolve().parents[3] / "benchmarks" / "suites" / "agentkernelarena"


def test_every_vendored_config_reads_as_yaml_reads_it():
    configs = sorted(SUITE.rglob("config.yaml"))
    assert len(configs) == 140
    for config in configs:
        text = config.read_text()
        loaded = yaml.safe_load(text)
        expected = {k: v if isinstance(v, list) else [v] for k, v in loaded.items() if k in KEYS and v is not None}
        assert read_config(text) == expected, config


def test_the_held_out_subset_and_build_folders_stay_out():
    held_out = re.findall(r"^\* (vllm/\S+)$", (SUITE / "SOURCE.md").read_text(), re.M)
    assert len(held_out) == 25
    assert not [name for name in held_out if (SUITE / name).exists()]
    assert not list(SUITE.rglob("build"))
    tasks = find_tasks(SUITE)
    assert len(tasks) == 140 and not set(held_out) & {t.name for t in tasks}


def test_every_vendored_file_names_its_source_and_license():
    for path in [*SUITE.rglob("*.py"), *SUITE.rglob("config.yaml")]:
        head = "".join(path.read_text().splitlines(keepends=True)[:3])
        assert "AgentKernelArena" in head and "Apache-2.0" in head and "at commit" in head, path


def test_a_task_reads_its_kernels_and_commands():
    (task,) = find_tasks(SUITE, only=r"^vllm/triton_bincount$")
    assert task.sources == ["source/triton_bincount.py"] and task.problem is None
    assert task.kernel_regex == "^(_bincount_kernel)$"
    assert argv(task.correctness[0]) == [sys.executable, "scripts/task_runner.py", "correctness"]
    (pytest_task,) = find_tasks(SUITE, only=r"test_batched_vecmat$")
    assert argv(pytest_task.correctness[0])[:3] == [sys.executable, "-m", "pytest"]
    assert argv(pytest_task.correctness[0])[-1] == "not test_performance and not test_save_performance_results"


def test_a_config_item_naming_several_kernels_comma_separated_is_each_of_them():
    """ROCmBench's test_random_int lists `randint_kernel_runtime_seed,randint_kernel_const_seed` as one
    item; read as one name, the anchored `--kernel` matched neither of the kernels its test launches."""
    (task,) = find_tasks(SUITE, only=r"^rocmbench/easy/test_random_int$")
    assert task.kernels == ["randint_kernel_runtime_seed", "randint_kernel_const_seed"]
    pattern = re.compile(task.kernel_regex or "")
    assert pattern.search("randint_kernel_const_seed") and not pattern.search("randint_kernel_runtime_seed,x")
    named = {k for t in find_tasks(SUITE) for k in t.kernels}
    assert not [k for k in named if not re.fullmatch(r"[A-Za-z_]\w*", k)]  # every name an identifier


def test_a_target_that_is_a_jit_helper_brings_the_kernels_that_call_it():
    """vllm/triton_moe_mmk names `moe_mmk`, a @triton.jit helper the launched `moe_mmk_kernel` calls:
    `--kernel '^(moe_mmk)$'` alone matched no launch ("matches none of the launched kernels")."""
    (task,) = find_tasks(SUITE, only=r"^vllm/triton_moe_mmk$")
    assert task.kernels == ["moe_mmk", "moe_mmk_kernel"]
    assert re.compile(task.kernel_regex or "").search("moe_mmk_kernel")
    kernels = {t.name: t.kernels for t in find_tasks(SUITE)}
    assert kernels["vllm/triton_bincount"] == ["_bincount_kernel"]  # a launched kernel brings nothing


def test_a_copy_leaves_what_runs_wrote_behind(tmp_path):
    (task,) = find_tasks(SUITE, only=r"^vllm/triton_bincount$")
    source = tmp_path / "suite" / "t"
    (source / "build").mkdir(parents=True)
    (source / "build" / "performance_report.json").write_text("{}")
    (source / "config.yaml").write_text("correctness_command:\n  - python3 run.py\n")
    (source / "run.py").write_text("")
    task = find_tasks(tmp_path / "suite")[0]
    copy = copy_task(task, tmp_path / "copy")
    assert (copy / "run.py").exists() and not (copy / "build").exists()


def test_a_config_without_what_a_campaign_needs_is_a_task_with_a_problem(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "config.yaml").write_text("source_file_path:\n  - kernel.py\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.yaml").write_text(
        "source_file_path:\n- missing.py\ncorrectness_command:\n- python3 x.py\n"
    )
    a, b = find_tasks(tmp_path)
    assert a.problem == "config.yaml names no correctness_command"
    assert b.problem == "config.yaml names source files that are not there: missing.py"
    with pytest.raises(UsageError, match="no task under"):
        find_tasks(tmp_path, only="nothing")
