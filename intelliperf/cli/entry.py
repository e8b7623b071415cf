"""`main`: run the command line, turning every IntelliPerfError into its message and exit code.

Ctrl-C ends the run with one line (what was written by then) and exit code 130.
"""

from __future__ import annotations

import signal
import sys
import threading
from functools import partial

import typer
from rich.markup import escape

from ..errors import IntelliPerfError
from . import config
from .app import err
from .help_format import click_command
from .interrupt import ctrl_c


def _options(command) -> set[str]:
    """The names of a command's options (what `[tool.intelliperf]` may set), not its positional arguments."""
    return {p.name for p in command.params if p.param_type_name == "option" and p.name}


def _check_default(group, command: str, name: str, value: object) -> None:
    """A default from the config file, converted as the option converts its flag's value."""
    from typer import _click  # typer's own click, whose parameters these are

    cmd = group.commands[command]
    param = next(p for p in cmd.params if p.name == name)
    try:
        param.process_value(_click.Context(cmd), value)
    except _click.exceptions.BadParameter as exc:
        raise ValueError(exc.message) from None


def main(argv: list[str] | None = None) -> int:
    import warnings

    # Triton 3.9 warns in every process that TRITON_DEFAULT_FP_FUSION is unset; the default stays as it is.
    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset", category=UserWarning)
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        # Help and usage errors in a log or a pipe: click's plain lines, not rich boxes hard-wrapped at 80 columns.
        typer.core.HAS_RICH = False
    main_thread = threading.current_thread() is threading.main_thread()  # only it may set a signal handler
    previous = signal.signal(signal.SIGINT, ctrl_c.handler) if main_thread else None
    try:
        code = _run(argv)
        # After a Ctrl-C, whatever ended the run (typer's exit 130, an error the interruption caused)
        # was said on the muted stderr: the one line, and 130.
        return ctrl_c.finish() if ctrl_c.stderr is not None else code
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


GLOBAL_FLAGS = ("-v", "--verbose", "-q", "--quiet")


def global_flags_first(argv: list[str]) -> list[str]:
    """`-v`/`-q` anywhere before `--` (after the subcommand too, as ruff and pytest take them) moved to the
    front, where the root command reads them; the program's own arguments after `--` are left as they are."""
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in GLOBAL_FLAGS]
    return flags + [a for a in argv[:end] if a not in GLOBAL_FLAGS] + argv[end:]


def _run(argv: list[str] | None) -> int:
    argv = global_flags_first(sys.argv[1:] if argv is None else argv)
    try:
        group = click_command()
        # [tool.intelliperf] in pyproject.toml: defaults under the command line's own flags
        defaults = config.default_map(
            {name: _options(cmd) for name, cmd in group.commands.items()}, check=partial(_check_default, group)
        )
        group(args=argv, prog_name="intelliperf", default_map=defaults)  # click/typer handle usage errors (exit 2)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except KeyboardInterrupt:  # one that came before typer's own handling of it
        return ctrl_c.finish()
    except IntelliPerfError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False)  # [brackets] are text
        if exc.hint:
            err.print(escape(exc.hint), style="dim", highlight=False)
        return exc.exit_code
    return 0
