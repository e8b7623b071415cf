"""Where reports go: output paths checked before a run, reports on stdout or a FIFO written once, at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from . import preflight


def check_outputs(files: dict[str, Path | None], folders: dict[str, Path | None]) -> None:
    """Every output location the user named, checked before anything runs (a read-only one used to
    end the run in a traceback, after it)."""
    for option, path in files.items():
        preflight.check_output(option, path)
    for option, path in folders.items():
        preflight.check_output(option, path, folder=True)


REPORT_KINDS = {"--output": "json", "--markdown": "markdown", "--sarif": "sarif", "--format": "json"}


def report_streams(outputs: dict[str, Path | None]) -> dict[str, Path | None]:
    """The report options that name a stream: stdout (`-`, /dev/stdout; None here), a FIFO or a device.
    The CLI writes each once, at the end: optimize rewrites its report files after every attempt,
    and a FIFO's reader takes one document."""
    streams = {
        option: None if preflight.is_stdout(path) else path
        for option, path in outputs.items()
        if path is not None and preflight.is_stream(path)
    }
    to_stdout = [option for option, path in streams.items() if path is None]
    if len(to_stdout) > 1:
        raise UsageError(
            f"{' and '.join(to_stdout)} name stdout, which takes one report", hint="Send the others to files."
        )
    return streams


def json_on_stdout(streams: dict[str, Path | None]) -> dict[str, Path | None]:
    """`--format json`: the JSON report on stdout, unless `-o -` already puts it there; stdout takes one."""
    on_stdout = [option for option, path in streams.items() if path is None]
    if on_stdout == ["--output"]:
        return streams
    if on_stdout:
        raise UsageError(f"--format json and {on_stdout[0]} both name stdout", hint="Send the other to a file.")
    return {**streams, "--format": None}


@contextmanager
def stdout_for_report(taken: bool) -> Iterator[None]:
    """With a report on stdout, stdout carries that report only: while the command runs, fd 1 is
    our stderr, so the program's own output goes there."""
    if not taken:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def emit_streams(report, streams: dict[str, Path | None]) -> None:
    from ..delivery.report import report_text
    from ..files import write_atomic

    for option, path in streams.items():
        text = report_text(report, REPORT_KINDS[option])
        if path is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            write_atomic(path, text)
