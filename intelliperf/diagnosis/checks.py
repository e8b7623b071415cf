"""A run's settings checked before anything runs: where reports go, the kernel filter, the device, and
the program's path."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UsageError

DEVICES = ("auto", "cpu", "gpu")


def check_paths(
    files: dict[str, str | Path | None] | None = None, folders: dict[str, str | Path | None] | None = None
) -> None:
    """Where reports go, checked before anything runs: a file option must not name a folder, a
    folder option must not name a file (either found only after a run used to end in a traceback
    and a stray NAME.tmp)."""
    for option, path in (files or {}).items():
        if path is not None and Path(path).is_dir():
            raise UsageError(
                f"{option} {path} is a folder; it takes a file name",
                hint=f"Pass a file path, e.g. {option} {Path(path) / 'report.json'}.",
            )
    for option, path in (folders or {}).items():
        if path is not None and Path(path).exists() and not Path(path).is_dir():
            raise UsageError(f"{option} {path} is a file; it takes a folder (created if missing)")


def kernel_pattern(kernel: str | None) -> re.Pattern | None:
    if kernel is None:
        return None
    try:
        return re.compile(kernel)
    except re.error as exc:
        raise UsageError(f"--kernel {kernel!r} is not a valid regular expression: {exc}") from None


def runs_interpreted(device: str) -> bool:
    """True when the kernels must run in Triton's interpreter (no GPU, or --device cpu)."""
    if device not in DEVICES:
        raise UsageError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cpu":
        return True
    import torch

    has_gpu = torch.cuda.is_available()
    if device == "gpu" and not has_gpu:
        raise UsageError(
            "--device gpu was asked for, but torch sees no GPU on this machine",
            hint="Use --device cpu (or auto) to run the kernels in Triton's interpreter.",
        )
    return not has_gpu


def absolute_program(command: list[str], cwd: str | None) -> list[str]:
    """A program named by a relative path (`.venv/bin/python`) made absolute: later runs of the command
    start in a copy of the project, where it may not be (a virtual environment is not copied)."""
    program = command[0]
    if os.sep in program and not os.path.isabs(program):
        return [os.path.abspath(os.path.join(cwd or os.getcwd(), program)), *command[1:]]
    return command
