"""Defaults from the project's `pyproject.toml`, table `[tool.intelliperf]`, for the CLI (and so the Action).

    [tool.intelliperf]
    device = "cpu"                 # every command that takes --device
    [tool.intelliperf.optimize]
    formula = "memoryAccess"       # optimize's --formula
    max-attempts = 3

Keys are option names without the dashes (`max-attempts` or `max_attempts`); a command's own table
wins over the top level, and a flag on the command line wins over both. The file is the first
`pyproject.toml` found from the current folder upwards, as ruff and black find theirs. A key that
no command takes, or a value its option does not take, is an error (exit 2) that names the file,
before anything runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError

TABLE = "intelliperf"


def find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _read(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover  (3.10: the tomli backport, a dependency there)
        import tomli as tomllib
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="Fix the file's TOML syntax.") from None


def default_map(
    commands: dict[str, set[str]],
    start: Path | None = None,
    check: Callable[[str, str, object], object] | None = None,
) -> dict[str, dict]:
    """{command: {parameter: value}} for click's `default_map`, from `[tool.intelliperf]`.
    `commands` names each command's parameters (python names); `check(command, parameter, value)`
    raises ValueError for a value the option does not take, which becomes an error naming the file."""
    path = find_pyproject(start or Path.cwd())
    if path is None:
        return {}
    table = _read(path).get("tool", {}).get(TABLE)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.{TABLE}] must be a table")
    shared = {_name(k): v for k, v in table.items() if not isinstance(v, dict)}
    own = {k: {_name(kk): vv for kk, vv in v.items()} for k, v in table.items() if isinstance(v, dict)}
    unknown_commands = sorted(set(own) - set(commands))
    if unknown_commands:
        raise UsageError(
            f"{path}: [tool.{TABLE}.{unknown_commands[0]}] is not a command",
            hint=f"Commands: {', '.join(sorted(commands))}.",
        )
    taken = set().union(*commands.values()) if commands else set()
    for key in shared:
        if key not in taken:
            raise UsageError(f"{path}: no command takes `{key}` ([tool.{TABLE}])", hint="Use an option's long name.")
    for command, values in own.items():
        for key in values:
            if key not in commands[command]:
                raise UsageError(
                    f"{path}: `intelliperf {command}` takes no option `{key}` ([tool.{TABLE}.{command}])",
                    hint=f"Its options: {', '.join(sorted(commands[command]))}.",
                )
    out: dict[str, dict] = {}
    for command, params in commands.items():
        values = {k: v for k, v in shared.items() if k in params} | own.get(command, {})
        if values:
            out[command] = values
    if check is not None:
        _check_values(out, own, path, check)
    return out


def _check_values(out: dict[str, dict], own: dict[str, dict], path: Path, check: Callable) -> None:
    for command, values in out.items():
        for key, value in values.items():
            try:
                check(command, key, value)
            except ValueError as exc:
                where = f"[tool.{TABLE}.{command}]" if key in own.get(command, {}) else f"[tool.{TABLE}]"
                raise UsageError(
                    f"{path}: `{key} = {value!r}` ({where}) is not a value `intelliperf {command}` takes: {exc}",
                    hint="Fix the value in the file, or give the option on the command line.",
                ) from None


def _name(key: str) -> str:
    return key.lstrip("-").replace("-", "_")
