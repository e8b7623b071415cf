"""The README example's kernel and the answers a scripted model gives about it, in the llm rewriter's
answer format: shared by the tests that drive the llm rewriter against a loopback server."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import EXAMPLES

from intelliperf.testing.openai_server import Reply

KERNEL = (EXAMPLES / "contended_sum.py").read_text().split("@triton.jit\n")[1].split("\n\n\n")[0]
LAUNCHER = (EXAMPLES / "contended_sum.py").read_text().split("\n\n\n")[2]
REDUCED_LINE = "tl.atomic_add(out_ptr, tl.sum(x))"


def fixed_kernel(new_line: str) -> str:
    """The example's kernel with its contended atomic line replaced."""
    return "@triton.jit\n" + KERNEL.replace("tl.atomic_add(out_ptr + zeros, x, mask=mask)", new_line) + "\n"


def answer(kernel: str, rationale: str, launcher: str = "") -> str:
    return (
        f"[[ ## kernel ## ]]\n```python\n{kernel}```\n\n[[ ## launcher ## ]]\n{launcher}\n\n"
        "[[ ## beside ## ]]\n\n\n"
        f"[[ ## rationale ## ]]\n{rationale}\n\n[[ ## completed ## ]]"
    )


def reply(kernel: str, rationale: str, launcher: str = "") -> Reply:
    return Reply(content=answer(kernel, rationale, launcher))


def interpreter_cases(tmp_path: Path) -> Path:
    """The atomic-contention examples at interpreter-friendly sizes (the harness's defaults shrunk)."""
    folder = tmp_path / "atomic_contention"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("__pycache__"))
    harness = folder / "_harness.py"
    text = (
        harness.read_text()
        .replace("else 1 << 20", "else 1 << 16")
        .replace('"--repeat", type=int, default=3', '"--repeat", type=int, default=1')
    )
    assert text != harness.read_text()
    harness.write_text(text)
    return folder
