"""`intelliperf formulas`, `rewriters` and `schema`: what is installed, and the report's JSON Schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from .app import err, out
from .options import OutputFormat


def formulas(
    formula_path: list[Path] = typer.Option([], "--formula-path", help="Also load formulas from this file."),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, or json for scripts."),
) -> None:
    """List the registered formulas and where each comes from."""
    from rich.table import Column, Table

    from ..formulas import default_registry

    registry = default_registry(formula_path)
    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "evidence": list(registry.get(name).evidence),
            "summary": registry.get(name).summary,
            "metric": registry.get(name).metric,
            "options": {key: field.default for key, field in registry.get(name).Options.model_fields.items()},
            "from": registry.source(name),
        }
        for name in registry.names()
    ]
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    else:
        table = Table("evidence", "summary", "options (-O KEY=VALUE)", "from")
        table.columns.insert(0, Column("formula", no_wrap=True))  # a name the user types: never cut at 80 columns
        for row in rows:
            options = ", ".join(f"{key}={value!r}" for key, value in row["options"].items())
            table.add_row(row["name"], ", ".join(row["evidence"]) or "-", row["summary"], options or "-", row["from"])
        out.print(table)
    for name, why in registry.broken.items():
        err.print(f"[yellow]formula plug-in {name!r} failed to load: {why}[/yellow]")


def rewriters(
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, or json for scripts."),
) -> None:
    """List the rewriters --rewriter takes: the built-ins and the installed plug-ins."""
    from rich.table import Column, Table

    from ..rewriters import rewriter_registry

    registry = rewriter_registry()
    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "summary": cls.summary,
            "options": sorted(cls.Options.model_fields),
            "from": registry.source(name),
        }
        for name, cls in sorted(registry.classes().items(), key=lambda item: not registry.built_in(item[0]))
    ]
    broken = registry.broken
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    else:
        table = Table(Column("rewriter", no_wrap=True), "summary", "options", "from")
        for row in rows:
            table.add_row(row["name"], row["summary"], ", ".join(row["options"]) or "-", row["from"])
        out.print(table)
        out.print("auto: llm when a model is configured, otherwise recipes then search.", highlight=False)
    for name, why in broken.items():
        err.print(f"[yellow]rewriter plug-in {name!r} failed to load: {escape(why)}[/yellow]")


def schema() -> None:
    """Print the JSON Schema of the report."""
    from ..delivery.report import report_schema

    print(json.dumps(report_schema(), indent=2))
