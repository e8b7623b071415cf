"""Reports on disk: JSON (with a published schema) and Markdown."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..files import output_folder, write_atomic
from ..models import Finding, Measure, Optimization, Regions, Report, Speedup
from ..redact import scrub

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "report.schema.json"


def report_schema() -> dict:
    return Report.model_json_schema()


def write_reports(
    report: Report,
    *,
    output: str | Path | None = None,
    markdown: str | Path | None = None,
    sarif: str | Path | None = None,
) -> None:
    for kind, path in (("json", output), ("markdown", markdown), ("sarif", sarif)):
        if path is not None:
            write_text_file(Path(path), report_text(report, kind))


def report_text(report: Report, kind: str) -> str:
    """The report as `kind` (json, markdown or sarif), secrets removed: what a file or stdout gets."""
    if kind == "json":
        return scrub(report.model_dump_json(indent=2) + "\n")
    if kind == "markdown":
        return scrub(render_markdown(report))
    import json

    from .sarif import to_sarif

    return scrub(json.dumps(to_sarif(report), indent=2) + "\n")


def write_text_file(path: Path, text: str) -> None:
    try:
        output_folder(path.parent)
        write_atomic(str(path), scrub(text))  # every file written: secrets removed, whoever made the text
    except OSError as exc:  # checked before the run; this is what changed since
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}", hint="Check that its folder exists and can be written."
        ) from None


def format_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


def render_markdown(report: Report) -> str:
    run = report.run
    out = [
        f"# intelliperf {'optimization' if report.optimization else 'diagnosis'}: `{report.formula}`",
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
        out.append(
            f"| {rank} | `{k.name}` | {k.launches} | {format_time(k.total_time_s)} | "
            f"{format_time(k.mean_time_s)} | {k.share:.1%} | {where} |"
        )
    out += ["", "## Findings", ""]
    if report.selected:
        out.append(f"Bottleneck found first in **`{report.selected}`**.")
    else:
        out.append(f"None of the diagnosed kernels ({', '.join(report.top)}) shows the bottleneck.")
    for diagnosis in report.diagnoses:
        out += ["", f"### {diagnosis.rank}. `{diagnosis.kernel}`", ""]
        for finding in diagnosis.findings:
            out += _finding_markdown(finding)
        for ev in diagnosis.evidence:
            if ev.regions is not None:
                out += regions_markdown(ev.regions)
    if report.optimization is not None:
        out += optimization_markdown(report.optimization)
    if report.stages:
        out += ["", "## Time per stage", "", "| stage | seconds |", "|---|---:|"]
        out += [f"| {stage} | {seconds:.2f} |" for stage, seconds in report.stages.items()]
    if report.notes:
        out += ["", "## Notes", ""] + [f"- {note}" for note in report.notes]
    return "\n".join(out) + "\n"


def measure_text(before: Measure | None, after: Measure | None, attr: str) -> str:
    def one(m: Measure | None) -> str:
        value = getattr(m, attr) if m else None
        if value is None:
            return "?"
        return format_time(value) if attr == "kernel_time_s" else f"{value:g}"

    text = f"{one(before)} → {one(after)}"
    if attr == "kernel_time_s" and before and "interpreter" in before.time_source:
        text += " (interpreter wall)"
    return text


def bottleneck_claim(opt: Optimization) -> str:
    """What the winner did to the bottleneck, as the formula says when asked again of the winner's own run
    (what `diagnose` of the patched program finds): removed, improved but still present, or not improved."""
    attempt, formula = opt.winning_attempt(), f"the {opt.formula} formula" if opt.formula else "the formula"
    before, after = attempt.before or Measure(), attempt.after or Measure()
    unit = f" {after.metric_unit or before.metric_unit}".rstrip()
    name = after.metric_name or before.metric_name or "its metric"
    moved = f"{name} {_number(before.metric)} -> {_number(after.metric)}{unit}"
    if opt.bottleneck_removed is None:
        return f"not re-diagnosed ({formula} had no evidence from the winner's run); {moved}"
    if opt.bottleneck_removed:
        return f"removed: {formula} finds no such bottleneck in the patched program ({moved})"
    state = "improved" if attempt.metric_improved else "not improved"
    return f"{state}, still present ({after.severity or '?'}): {moved}"


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def speedup_text(sp: Speedup | None) -> str:
    return f"{sp.estimate:.2f}x [{sp.low:.2f}, {sp.high:.2f}]" if sp else "not measured"


def optimization_markdown(opt: Optimization) -> list[str]:
    verdict = {
        "won": f"**validated win: attempt {opt.winner}**"
        if opt.speedup is not None
        else f"**correct fix: attempt {opt.winner}** (speed not measured without a GPU)",
        "no-win": "no validated win",
        "running": "running",
        "interrupted": "**interrupted**",
        "failed": "**failed**",
    }[opt.status]
    out = [
        "",
        f"## Optimization of `{opt.kernel}`: {verdict}",
        "",
        f"- rewriters: {', '.join(opt.rewriters)}; budget: "
        + ", ".join(f"{k} {v}" for k, v in opt.budget.items() if v is not None),
        f"- hardware: {opt.hardware.get('device', '?')}",
        f"- baseline: metric {opt.baseline.metric if opt.baseline.metric is not None else '?'}"
        f"{' (modelled)' if opt.baseline.metric_modelled else ''}, kernel time "
        f"{format_time(opt.baseline.kernel_time_s) if opt.baseline.kernel_time_s else '?'} "
        f"({opt.baseline.time_source})",
    ]
    if opt.error:
        out.append(f"- stopped by: {opt.error}")
    if opt.winner is not None:
        out.append(f"- speedup (validators' interleaved timing): {speedup_text(opt.speedup)}")
        out.append(f"- bottleneck: {bottleneck_claim(opt)}")
        out.append(f"- patch: `{opt.patch}`" + (" — applied to the project (--in-place)" if opt.applied else ""))
        if not opt.applied:
            cpu = str(opt.hardware.get("device", "")).startswith("no GPU")
            run = "; without a GPU, run the patched program with `TRITON_INTERPRET=1`, as intelliperf did"
            out.append(f"- to apply it: `git apply {opt.patch}` in the project folder" + (run if cpu else ""))
    if opt.tokens:
        out.append(f"- model tokens: {opt.tokens}")
    out += [
        "",
        "| # | rewriter | candidate | status | metric | kernel time | speedup | seconds |",
        "|---:|---|---|---|---|---|---|---:|",
    ]
    for a in opt.attempts:
        seconds = a.wall_s()
        out.append(
            f"| {a.number} | {a.rewriter} | {a.title} | {a.status} | "
            f"{measure_text(a.before, a.after, 'metric')} | "
            f"{measure_text(a.before, a.after, 'kernel_time_s')} | "
            f"{speedup_text(a.verdict.speedup if a.verdict else None)} | {seconds:.1f} |"
        )
    for a in opt.attempts:
        out += ["", f"### Attempt {a.number}: {a.rewriter} — {a.title} ({a.status})", ""]
        if a.rationale:
            out += [a.rationale, ""]
        if a.reasons:
            out += ["Reasons:", "", *a.reasons.splitlines(), ""]
        if a.verdict and a.verdict.checks:
            out += ["Checks:", "", *[f"- {c}" for c in a.verdict.checks], ""]
        if a.seconds:
            out.append("Seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in a.seconds.items()))
        if a.diff:
            out += ["", "```diff", a.diff.rstrip("\n"), "```"]
    if opt.notes:
        out += ["", "Loop notes:", ""] + [f"- {n}" for n in opt.notes]
    return out


def warps_recorded(r: Regions) -> str:
    """How many warps of each CTA the timers recorded, and which when Proton sampled them."""
    if not r.recorded_warps:
        return f"{r.warps_per_cta} warps"
    return f"warp {', '.join(map(str, r.recorded_warps))} (the first of each warp group)"


def _cycles(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def regions_markdown(r: Regions) -> list[str]:
    """The `regions` section: what the region timers measured in one launch of a kernel."""
    out = [
        "",
        f"#### Regions of `{r.kernel}` (region timers, {r.ctas} CTAs x {warps_recorded(r)}, cycles per warp)",
        "",
    ]
    if r.iteration_cycles:
        out.append(
            f"Main loop (line {r.loop_line}): {r.loop_iterations:g} iterations, {r.iteration_cycles:,.0f} "
            f"cycles each; {r.exposed_memory_share:.0%} in memory statements, {r.compute_share:.0%} in "
            f"compute, {r.unattributed_share:.0%} between statements. Overlap of memory and compute regions "
            f"across a CTA's recorded warps: {r.overlap or 0:.0%}."
        )
    elif r.loop_cycles_per_warp and r.exposed_memory_share is not None:
        out.append(
            f"Main loop (line {r.loop_line}): {r.loop_cycles_per_warp:,.0f} cycles per warp; "
            f"{r.exposed_memory_share:.0%} in memory statements, {r.compute_share or 0:.0%} in compute, "
            f"{r.unattributed_share or 0:.0%} between statements (Proton's per-scope totals: no per-iteration "
            "figures, overlap or timeline; `intelliperf regions` writes the trace)."
        )
    if r.overhead is not None:
        out.append(f"Instrumentation overhead (measured): {r.overhead:+.1%} kernel time.")
    out += [
        "",
        "| region | kind | lines | cycles/warp | per execution | share of kernel | share of loop |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for x in r.regions:
        lines = f"{x.first_line}-{x.last_line}" if x.first_line else ""
        out.append(
            f"| `{x.name}` | {x.kind} | {lines} | {x.cycles_per_warp:,.0f} | {_cycles(x.cycles_per_execution)} | "
            f"{_pct(x.share_of_kernel)} | {_pct(x.share_of_loop)} |"
        )
    if r.critical_path:
        first = r.critical_path[0]
        out.append(
            f"\nCritical path: CTA {first['cta']} warp {first['warp']}: "
            + ", ".join(f"{c['region']} {c['cycles']:,}" for c in r.critical_path[:6])
        )
    if r.warp_group_wait_cycles:
        out.append(
            "\nWarp groups waiting on each other (cycles): "
            + ", ".join(f"{k} {v:,.0f}" for k, v in r.warp_group_wait_cycles.items())
        )
    for problem in r.problems:
        out.append(f"\n**Not to be trusted as is:** {problem}")
    if r.files.get("png"):
        out.append(f"\n![timeline]({r.files['png']})")
    if r.files.get("timeline"):
        out.append(f"\nTimeline for Perfetto (ui.perfetto.dev) or chrome://tracing: `{r.files['timeline']}`")
    return out


def _pct(x: float | None) -> str:
    return f"{x:.1%}" if x is not None else ""


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
