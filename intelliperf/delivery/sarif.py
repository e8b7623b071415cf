"""Findings as SARIF 2.1.0, the format GitHub code scanning reads (`--sarif FILE`).

One result per present finding: the formula is the rule, the severity the level, the
explanation the message, and each pinpointed source line a location (the kernel's `def` line
when the finding names none). Paths are relative to the run's working directory where they lie
under it, so code scanning can place them in the repository.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..models import Finding, Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"high": "error", "medium": "warning", "low": "note", "none": "none"}


def to_sarif(report: Report) -> dict:
    from .. import __version__

    results = [_result(report, d.kernel, f) for d in report.diagnoses for f in d.findings if f.present]
    rules = sorted({r["ruleId"] for r in results})
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "intelliperf",
                        "version": __version__,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {"SRCROOT": {"uri": Path(report.run.cwd).resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }


def _rule(name: str) -> dict:
    """A formula as a code-scanning rule: what it finds, and the known fixes as its help."""
    from ..formulas import default_registry

    registry = default_registry()
    formula = registry.get(name) if name in registry.names() else None
    summary = (formula.summary if formula else "") or f"intelliperf formula {name}"
    problem = (formula.problem if formula else "") or summary
    fixes = list(formula.techniques) if formula else []
    help_text = "Known fixes:\n" + "\n".join(f"- {fix}" for fix in fixes) if fixes else problem
    return {
        "id": name,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": problem},
        "help": {"text": help_text, "markdown": help_text},
    }


def _result(report: Report, kernel: str, finding: Finding) -> dict:
    places = [(line.file, line.line, line.detail) for line in finding.lines]
    if not places:
        profile = next((k for k in report.kernels if k.name == kernel), None)
        if profile is not None and profile.file and profile.line:
            places = [(profile.file, profile.line, f"the kernel {kernel}")]
    result: dict[str, Any] = {
        "ruleId": finding.formula,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{kernel}: {finding.explanation}"},
        "locations": [_location(report, file, line, detail) for file, line, detail in places],
        "properties": {"kernel": kernel, "modelled": finding.modelled, "evidence": finding.evidence_backend or ""},
    }
    if finding.metric is not None:
        result["properties"]["metric"] = {
            "name": finding.metric.name,
            "value": finding.metric.value,
            "unit": finding.metric.unit,
        }
    return result


def _location(report: Report, file: str, line: int, detail: str) -> dict:
    root = Path(report.run.cwd).resolve()
    path = Path(file).resolve()
    inside = path == root or root in path.parents
    artifact = (
        {"uri": Path(os.path.relpath(path, root)).as_posix(), "uriBaseId": "SRCROOT"}
        if inside
        else {"uri": path.as_uri()}
    )
    location = {"physicalLocation": {"artifactLocation": artifact, "region": {"startLine": max(line, 1)}}}
    if detail:
        location["message"] = {"text": detail}
    return location
