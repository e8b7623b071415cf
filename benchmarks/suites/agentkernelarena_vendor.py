"""Vendor AgentKernelArena's triton2triton tasks into benchmarks/suites/agentkernelarena/.

    python benchmarks/suites/agentkernelarena_vendor.py GIT_DIR [--commit REV]

GIT_DIR is a clone (or bare mirror) of https://github.com/AMD-AGI/AgentKernelArena (Apache-2.0).
What it does, and nothing else:

* copies every task under tasks/triton2triton/{vllm,rocmbench,geak_eval} except the 25 of the
  recommended vLLM subset listed in tasks/triton2triton/README.md (held out as an external
  test: they never enter this repository) and every `build/` folder (results of the suite's
  own runs);
* materialises the timing helpers as the suite's `setup_workspace()` does
  (src/perf_helper_materialization.py): the canonical `src/tools/perf/vllm_cuda_graph_block.py`
  replaces the stub between the AKA-GENERATED markers of each vLLM `scripts/task_runner.py`, and
  `src/tools/perf/performance_utils_pytest.py` replaces each rocmbench task's stub;
* where a file hard-codes the device (`"cuda"`, `'cuda'`, `"cuda:0"` as a string, outside a
  comparison), the string becomes `AKA_DEVICE`, read from the environment variable of that
  name (default `cuda`, as published); such a file, and one that calls `torch.cuda.synchronize`,
  gets a block after its docstring that defines it and, with `AKA_DEVICE=cpu` (Triton's
  interpreter, where nothing runs asynchronously), makes `torch.cuda.synchronize` a no-op
  instead of an error;
* puts a header comment on every file naming the source repository, path, commit, license and
  the changes above; copies the suite's LICENSE; writes SOURCE.md (commit, exclusions, every
  changed file).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import tarfile
import tokenize
from pathlib import Path

REPO_URL = "https://github.com/AMD-AGI/AgentKernelArena"
SUITES = ("vllm", "rocmbench", "geak_eval")
ROOT = "tasks/triton2triton"
DEST = Path(__file__).resolve().parent / "agentkernelarena"
MARK_END = "# <<< AKA-GENERATED <<<"
MARK_START = re.compile(r"^# >>> AKA-GENERATED: shared CUDA-graph benchmark helpers.*>>>$", re.M)
FUNC_ANCHOR = "def _measure_cuda_event_fallback(fn, repetition):"
CUDA_STRINGS = {'"cuda"', "'cuda'", '"cuda:0"', "'cuda:0'"}
DEVICE_BLOCK = """\
# intelliperf (vendoring): the torch device comes from AKA_DEVICE (default cuda, as published); with
# AKA_DEVICE=cpu (Triton's interpreter) torch.cuda.synchronize waits for nothing instead of raising.
import os as _aka_os

AKA_DEVICE = _aka_os.environ.get("AKA_DEVICE", "cuda")
if AKA_DEVICE == "cpu":
    import torch as _aka_torch

    _aka_torch.cuda.synchronize = lambda device=None: None
"""


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(git_dir), *args], check=True, capture_output=True).stdout


def held_out(readme: str) -> set[str]:
    """The task paths (relative to tasks/triton2triton) of the recommended subset."""
    return set(re.findall(r"^- triton2triton/(\S+)$", readme, re.M))


def device_configurable(text: str) -> tuple[str, int]:
    """`text` with each hard-coded device string replaced by AKA_DEVICE; the count replaced."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    lines = text.splitlines(keepends=True)
    spans = []
    previous = None
    for tok in tokens:
        if tok.type == tokenize.STRING and tok.string in CUDA_STRINGS and tok.start[0] == tok.end[0]:
            if previous is None or previous.string not in ("==", "!=", "in"):
                spans.append(tok.start + (tok.end[1],))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = tok
    for row, start, end in reversed(spans):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + "AKA_DEVICE" + line[end:]
    return "".join(lines), len(spans)


def insert_block(text: str) -> str:
    """DEVICE_BLOCK after the module docstring and `from __future__` imports."""
    tree = ast.parse(text)
    after = 0
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and after == 0
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        after = node.end_lineno or after
    lines = text.splitlines(keepends=True)
    return "".join(lines[:after]) + ("\n" if after else "") + DEVICE_BLOCK + "\n" + "".join(lines[after:])


def materialise_vllm(text: str, block: str) -> str:
    start = MARK_START.search(text)
    if start is None or MARK_END not in text:
        return text
    return text[: start.end()] + "\n" + block + text[text.index(MARK_END) :]


def header(path: str, commit: str, changes: list[str]) -> str:
    said = "; ".join(changes) if changes else "none"
    return (
        f"# Vendored from {REPO_URL} (Apache-2.0, see LICENSE in benchmarks/suites/agentkernelarena/),\n"
        f"# {path} at commit {commit}. Changes for intelliperf: {said}.\n"
    )


def with_header(text: str, head: str) -> str:
    if text.startswith("#!"):
        first, _, rest = text.partition("\n")
        return first + "\n" + head + rest
    return head + text


def vendor_file(rel: str, text: str, commit: str, helpers: dict[str, str]) -> tuple[str, list[str]]:
    """The vendored text of one file and the changes made to it."""
    changes = []
    if rel.endswith("scripts/task_runner.py") and MARK_END in text:
        new = materialise_vllm(text, helpers["vllm"])
        if new != text:
            text, changes = (
                new,
                changes + ["CUDA-graph helpers materialised from src/tools/perf/vllm_cuda_graph_block.py"],
            )
    if rel.endswith("/performance_utils_pytest.py"):
        text, changes = helpers["rocmbench"], changes + ["materialised from src/tools/perf/performance_utils_pytest.py"]
    if rel.endswith(".py") and not rel.endswith("/performance_utils_pytest.py"):  # that helper is CPU-aware
        text, replaced = device_configurable(text)
        if replaced or "torch.cuda.synchronize" in text:
            text = insert_block(text)
            changes.append(
                f"device from AKA_DEVICE ({replaced} hard-coded device string(s)); "
                "torch.cuda.synchronize a no-op with AKA_DEVICE=cpu"
            )
    return with_header(text, header(f"{ROOT}/{rel}", commit, changes)), changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", type=Path)
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    commit = git(args.git_dir, "rev-parse", args.commit).decode().strip()
    excluded = held_out(git(args.git_dir, "show", f"{commit}:{ROOT}/README.md").decode())
    block = git(args.git_dir, "show", f"{commit}:src/tools/perf/vllm_cuda_graph_block.py").decode()
    helpers = {
        "vllm": block[block.index(FUNC_ANCHOR) :],
        "rocmbench": git(args.git_dir, "show", f"{commit}:src/tools/perf/performance_utils_pytest.py").decode(),
    }
    archive = tarfile.open(fileobj=io.BytesIO(git(args.git_dir, "archive", commit, ROOT)))
    if DEST.exists():
        shutil.rmtree(DEST)
    changed: dict[str, list[str]] = {}
    tasks = set()
    for member in archive.getmembers():
        rel = member.name.removeprefix(ROOT + "/")
        parts = rel.split("/")
        if not member.isfile() or parts[0] not in SUITES or "build" in parts:
            continue
        task = "/".join(parts[: 2 if parts[0] == "vllm" else 3])
        if task in excluded:
            continue
        tasks.add(task)
        text, changes = vendor_file(rel, archive.extractfile(member).read().decode(), commit, helpers)
        out = DEST / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        if changes:
            changed[rel] = changes
    (DEST / "LICENSE").write_bytes(git(args.git_dir, "show", f"{commit}:LICENSE"))
    (DEST / "SOURCE.md").write_text(source_md(commit, sorted(excluded), sorted(tasks), changed))
    print(f"{len(tasks)} tasks vendored ({len(excluded)} held out), {len(changed)} files changed -> {DEST}")


def source_md(commit: str, excluded: list[str], tasks: list[str], changed: dict[str, list[str]]) -> str:
    counts = {s: sum(t.startswith(s + "/") for t in tasks) for s in SUITES}
    lines = [
        "# AgentKernelArena triton2triton tasks (vendored)",
        "",
        f"Source: {REPO_URL}, `{ROOT}/` at commit `{commit}`. License: Apache-2.0 ([LICENSE](LICENSE)).",
        "Written by `benchmarks/suites/agentkernelarena_vendor.py` (its docstring says what it changes).",
        "",
        f"{len(tasks)} tasks: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + ". Left out: every `build/`",
        f"folder, and the {len(excluded)} tasks of the recommended vLLM subset (`{ROOT}/README.md`), held out",
        "as an external test:",
        "",
        *(f"* {t}" for t in excluded),
        "",
        f"## Files changed ({len(changed)})",
        "",
        "Every other file differs from its source by the header comment only.",
        "",
        *(f"* `{rel}`: {'; '.join(c)}" for rel, c in sorted(changed.items())),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
