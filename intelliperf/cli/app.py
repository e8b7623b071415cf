"""The typer app every command hangs on, the two consoles, the global flags and progress lines.

The root callback sets the verbosity (`-v`, `-q`); `progress` prints a stage line on stderr
under it. The exit codes the commands add to the errors' own are named here.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import typer
from rich.console import Console
from rich.text import Text

from ..errors import UsageError

app = typer.Typer(
    help="An automated GPU performance engineer for Triton kernels.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # the commands inherit it
)
# NO_COLOR (no-color.org): no escape codes at all, bold included (rich's own reading drops colours only).
_PLAIN = bool(os.environ.get("NO_COLOR"))


def _console(stderr: bool, **options) -> Console:
    return Console(stderr=stderr, color_system=None, **options) if _PLAIN else Console(stderr=stderr, **options)


# Progress and errors in a log or a pipe: whole lines, never hard-wrapped mid-sentence at 80 columns.
err = _console(True) if Console(stderr=True).is_terminal else _console(True, soft_wrap=True)
# Piped output (CI logs, files) gets room for the kernel table instead of rich's 80 columns.
out = _console(False) if Console().is_terminal else _console(False, width=120)


COMMAND_SETTINGS = {"allow_interspersed_args": False}
NO_WIN_EXIT = 6  # optimize found the bottleneck but no candidate passed validation within the budget
EVAL_INCOMPLETE_EXIT = 8  # eval spent its token or time budget before every case ran


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        out.print(f"intelliperf {__version__}", highlight=False)
        raise typer.Exit()


@dataclass
class _Verbosity:
    quiet: bool = False
    verbose: bool = False
    started: float = 0.0


_verbosity = _Verbosity()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Progress lines with the seconds since the start, and debug messages."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines: results, warnings and errors only."),
) -> None:
    """An automated GPU performance engineer for Triton kernels."""
    import logging
    import time

    if verbose and quiet:
        raise UsageError("--verbose and --quiet contradict each other", hint="Pass one of them.")
    _verbosity.quiet, _verbosity.verbose, _verbosity.started = quiet, verbose, time.monotonic()
    logger = logging.getLogger("intelliperf")
    logger.setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    if verbose and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("intelliperf %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)


def progress(stage: str) -> None:
    import time

    from ..redact import scrub

    if _verbosity.quiet:
        return
    elapsed = f"[{time.monotonic() - _verbosity.started:6.1f} s] " if _verbosity.verbose else ""
    err.print(Text(scrub(f"intelliperf: {elapsed}{stage}"), style="dim"))
