"""A suite: a folder of tasks, each a folder with a `config.yaml` in AgentKernelArena's layout.

The keys read (top-level lists of plain or quoted strings; everything else is left alone):

    source_file_path:          files holding the kernels, relative to the task folder
      - source/triton_bincount.py
    target_kernel_functions:   the kernels to work on (an anchored `--kernel` regex is made of them;
      - _bincount_kernel       an item may name several, comma-separated, as some ROCmBench configs do;
                               a @triton.jit helper named brings the jit functions that call it)
    correctness_command:       run in the task folder; exit 0 means correct
      - python3 scripts/task_runner.py correctness
    performance_command:       run in the task folder; times read by `campaign.peer`
      - python3 scripts/task_runner.py performance

A command's leading `python`/`python3` becomes this interpreter and `pytest` becomes `python -m
pytest`, so the task runs in the environment intelliperf runs in. A folder without a config.yaml
is no task; a config.yaml without a correctness command is a task that fails with that reason.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import UsageError

KEYS = ("source_file_path", "target_kernel_functions", "correctness_command", "performance_command")
# What a task's own runs leave behind: never copied, so every copy starts as the suite ships it.
LEFTOVERS = ("build", "perf", "__pycache__", ".pytest_cache", "*.pt")


class Task(BaseModel):
    name: str = Field(description="the folder relative to the suite, e.g. vllm/triton_bincount")
    folder: Path
    sources: list[str] = Field(default_factory=list)
    kernels: list[str] = Field(default_factory=list)
    correctness: list[str] = Field(default_factory=list)
    performance: list[str] = Field(default_factory=list)
    problem: str | None = Field(None, description="why the config cannot be used as it is")

    @property
    def kernel_regex(self) -> str | None:
        """The target kernels as one anchored regex for `--kernel`; None: every kernel."""
        return "^(" + "|".join(re.escape(k) for k in self.kernels) + ")$" if self.kernels else None


def read_config(text: str) -> dict[str, list[str]]:
    """The KEYS of a config.yaml: each `key:` followed by `- item` lines (or `key: value`), an item
    folded over more indented lines joined with spaces, as YAML does. A restricted reader, so a
    campaign needs no YAML library; the unit tests hold it to yaml.safe_load on the vendored suite."""
    raw: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        top = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", line)
        item = re.match(r"^\s*-\s+(.*)$", line)
        if top:
            current = top.group(1) if top.group(1) in KEYS else None
            if current is not None:
                value = top.group(2).strip()
                raw[current] = [] if value in ("", "null", "~") else [value]
        elif current is not None and item:
            raw[current].append(item.group(1).strip())
        elif current is not None and raw[current] and line[:1].isspace():
            raw[current][-1] += " " + line.strip()
    return {key: [_scalar(v) for v in values] for key, values in raw.items()}


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        return inner.replace("''", "'") if text[0] == "'" else inner.replace('\\"', '"').replace("\\\\", "\\")
    return text


def load_task(folder: Path, suite: Path) -> Task:
    name = folder.relative_to(suite).as_posix()
    found = read_config((folder / "config.yaml").read_text(errors="replace"))
    task = Task(
        name=name,
        folder=folder,
        sources=found.get("source_file_path", []),
        kernels=[k for item in found.get("target_kernel_functions", []) for k in re.split(r"[,\s]+", item) if k],
        correctness=found.get("correctness_command", []),
        performance=found.get("performance_command", []),
    )
    missing = [s for s in task.sources if not (folder / s).is_file()]
    if not missing:
        task.kernels += [c for c in _callers(folder, task.sources, task.kernels) if c not in task.kernels]
    if not task.correctness:
        task.problem = "config.yaml names no correctness_command"
    elif missing:
        task.problem = f"config.yaml names source files that are not there: {', '.join(missing)}"
    return task


def _callers(folder: Path, sources: list[str], kernels: list[str]) -> list[str]:
    """The @triton.jit functions in the sources that call a named kernel: a config may name a jit helper
    (vLLM's moe_mmk, called by the launched moe_mmk_kernel), which --kernel alone matches in no launch."""
    import ast

    calls: dict[str, set[str]] = {}
    for source in sources:
        try:
            tree = ast.parse((folder / source).read_text(errors="replace"))
        except SyntaxError:
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in fn.decorator_list):
                calls[fn.name] = {ast.unparse(c.func).split(".")[-1] for c in ast.walk(fn) if isinstance(c, ast.Call)}
    return sorted(name for name, called in calls.items() if called & set(kernels))


def find_tasks(suite: Path, only: str | None = None) -> list[Task]:
    """Every task under `suite` (a folder holding a config.yaml), sorted; `only`: names matching the regex."""
    if not suite.is_dir():
        raise UsageError(f"{suite} is not a folder", hint="Name a suite: a folder of task folders with config.yaml.")
    suite = suite.resolve()
    tasks = [load_task(c.parent, suite) for c in sorted(suite.rglob("config.yaml")) if c.parent != suite]
    if only:
        try:
            pattern = re.compile(only)
        except re.error as exc:
            raise UsageError(f"--only {only!r} is not a regular expression: {exc}") from None
        tasks = [t for t in tasks if pattern.search(t.name)]
    if not tasks:
        raise UsageError(
            f"no task under {suite}" + (f" matches --only {only!r}" if only else ""),
            hint="A task is a folder with a config.yaml naming its correctness_command (docs/cli.md#campaign).",
        )
    return tasks


def argv(command: str) -> list[str]:
    """A config command as an argument list run by this interpreter."""
    words = shlex.split(command)
    if words and re.fullmatch(r"python(3(\.\d+)?)?", words[0]):
        return [sys.executable, *words[1:]]
    if words and words[0] == "pytest":
        return [sys.executable, "-m", "pytest", *words[1:]]
    return words


def copy_task(task: Task, to: Path) -> Path:
    """A fresh copy of the task folder, without what earlier runs left in it."""
    if to.exists():
        shutil.rmtree(to)
    shutil.copytree(task.folder, to, ignore=shutil.ignore_patterns(*LEFTOVERS), symlinks=True)
    return to
