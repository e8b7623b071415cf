"""Reports on disk: JSON (with a published schema) and Markdown."""

from __future__ import annotations

import os
from pathlib import Path

from ..models import Finding, Report

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "report.schema.json"


def report_schema() -> dict:
    return Report.model_json_schema()


def write_reports(report: Report, *, output: str | Path | None = None, markdown: str | Path | None = None) -> None:
    if output is not None:
        _write_atomic(Path(output), report.model_dump_json(indent=2) + "\n")
    if markdown is not None:
        _write_atomic(Path(markdown), render_markdown(report))


def _write_atomic(path: Path, text: str) -> None:
    # A reader never sees half a report, also when the run is interrupted while writing.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def format_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


def render_markdown(report: Report) -> str:
    run = report.run
    out = [
        f"# intelliperf diagnosis: `{report.formula}`",
        "",
        f"- command: `{' '.join(run.command)}`",
        f"- device: {run.device} ({run.mode}); kernel times are {run.time_source}",
        f"- {run.launches} launches of {len(report.kernels)} kernel(s) in {run.processes} process(es); "
        f"run took {run.duration_s:.2f} s",
        f"- versions: {', '.join(f'{k} {v}' for k, v in sorted(run.versions.items()))}",
        "",
        "## Kernels by total time",
        "",
        "| rank | kernel | launches | total | mean | share | source |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for rank, k in enumerate(report.kernels, start=1):
        where = f"{Path(k.file).name}:{k.line}" if k.file else "?"
        out.append(f"| {rank} | `{k.name}` | {k.launches} | {format_time(k.total_time_s)} | "
                   f"{format_time(k.mean_time_s)} | {k.share:.1%} | {where} |")
    out += ["", "## Findings", ""]
    if report.selected:
        out.append(f"Bottleneck found first in **`{report.selected}`**.")
    else:
        out.append(f"None of the diagnosed kernels ({', '.join(report.top)}) shows the bottleneck.")
    for diagnosis in report.diagnoses:
        out += ["", f"### {diagnosis.rank}. `{diagnosis.kernel}`", ""]
        for finding in diagnosis.findings:
            out += _finding_markdown(finding)
    if report.notes:
        out += ["", "## Notes", ""] + [f"- {note}" for note in report.notes]
    return "\n".join(out) + "\n"


def _finding_markdown(finding: Finding) -> list[str]:
    verdict = f"**{finding.severity}**" if finding.present else "not found"
    lines = [f"- `{finding.formula}`: {verdict}. {finding.explanation}"]
    if finding.metric:
        m = finding.metric
        source = " (modelled on CPU)" if finding.modelled else ""
        lines.append(f"  - {m.name} = {m.value:g} {m.unit}, {m.better} is better{source}")
    for src in finding.lines:
        lines += ["", f"  `{src.file}:{src.line}`: {src.detail}", "", "  ```python"]
        lines += [f"  {'>' if n == src.line else ' '} {n:4d} {text}" for n, text in src.context]
        lines.append("  ```")
    return lines
