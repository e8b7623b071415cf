"""`intelliperf` on the command line: parse options, call the Python API, print the result.

Heavy imports (torch, triton, pydantic models) happen inside the commands, so `--help` is
instant. Every IntelliPerfError becomes a message and its exit code, never a traceback.

The modules: `app` (the typer app, consoles, global flags), `options` (shared options),
`outputs` (where reports go), `interrupt` (Ctrl-C), one module per command group (`diagnosis`,
`optimize`, `evaluate`, `listings`), `commands` (their order), `help_format` (how --help reads)
`entry` (`main`, the console script) and `action` (the GitHub Action's entry script, which
runs `main`).
"""

from .app import EVAL_INCOMPLETE_EXIT, NO_WIN_EXIT
from .entry import main

__all__ = ["EVAL_INCOMPLETE_EXIT", "NO_WIN_EXIT", "main"]
