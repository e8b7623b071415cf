"""A campaign's rows and its table: OUT/campaign.json (rewritten as each task finishes, so a cut-off
campaign resumes), campaign.md and, with matplotlib, campaign.png (the peer-timed speedups)."""

from __future__ import annotations

import datetime
import statistics
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import UsageError
from ..files import output_folder, write_atomic

Status = Literal["won", "no-win", "nothing-found", "peer-fails", "error", "unusable"]
WHY = {
    "won": "a validated winner",
    "no-win": "flagged, no candidate was accepted",
    "nothing-found": "no formula flagged a target kernel",
    "peer-fails": "the task's own correctness command fails before any change",
    "error": "intelliperf or the task's process stopped with an error",
    "unusable": "the config.yaml cannot be used as it is",
}


class Row(BaseModel):
    task: str
    status: Status = "error"
    correct_before: bool | None = Field(None, description="the task's own correctness command, before any change")
    diagnosed: list[str] = Field(default_factory=list, description="kernels diagnosed")
    flagged: list[str] = Field(default_factory=list, description="formulas that found their bottleneck")
    fixed: str | None = Field(None, description="the formula whose bottleneck was addressed")
    winner: str | None = None
    intelliperf_speedup: float | None = Field(None, description="the validators' timing of the winner (GPU)")
    peer_correct: bool | None = Field(None, description="the winner, by the task's own correctness command")
    peer_speedup: float | None = Field(None, description="the task's own performance command: baseline / winner")
    peer_times_ms: dict[str, list[float]] = Field(default_factory=dict, description="per case: baseline, winner")
    seconds: float = 0.0
    detail: str = Field("", description="why: the error, the failing command, why nothing was timed")
    out_dir: str = ""


class CampaignReport(BaseModel):
    version: int = 1
    suite: str
    started: str
    device: str
    settings: dict = Field(default_factory=dict)
    tasks: list[str] = Field(default_factory=list, description="every task of the campaign, in order")
    rows: list[Row] = Field(default_factory=list)
    totals: dict = Field(default_factory=dict)


def start(path: Path, resume: bool, fresh: CampaignReport) -> CampaignReport:
    """The report to fill: a fresh one, or with --resume the one at `path` (its rows kept)."""
    if not path.exists():
        if resume:
            raise UsageError(f"--resume: there is no {path} to continue", hint="Drop --resume to start one.")
        return fresh
    if not resume:
        raise UsageError(
            f"{path} already holds a campaign", hint="Pass --resume to continue it, or choose another --out-dir."
        )
    try:
        old = CampaignReport.model_validate_json(path.read_text())
    except ValueError as exc:
        raise UsageError(f"--resume: {path} is not an intelliperf campaign ({str(exc).splitlines()[0]})") from None
    if old.device != fresh.device:
        raise UsageError(f"--resume: {path} ran on {old.device}", hint="Resume with the same --device.")
    old.tasks = list(dict.fromkeys([*old.tasks, *fresh.tasks]))
    old.settings = fresh.settings
    return old


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def totals(rows: list[Row]) -> dict:
    timed = [r.peer_speedup for r in rows if r.peer_speedup]
    return {
        "tasks": len(rows),
        "peer_correct_before": sum(bool(r.correct_before) for r in rows),
        "diagnosed": sum(bool(r.diagnosed) for r in rows),
        "flagged": sum(bool(r.flagged) for r in rows),
        "flagged_by_formula": _by_formula(rows),
        "won": sum(r.status == "won" for r in rows),
        "peer_verified_correct": sum(bool(r.peer_correct) for r in rows),
        "peer_timed": len(timed),
        "geomean_peer_speedup": statistics.geometric_mean(timed) if timed else None,
        "by_status": {s: sum(r.status == s for r in rows) for s in WHY if any(r.status == s for r in rows)},
    }


def _by_formula(rows: list[Row]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        for formula in row.flagged:
            counts[formula] = counts.get(formula, 0) + 1
    return dict(sorted(counts.items()))


def save(report: CampaignReport, out_dir: Path) -> None:
    order = {name: i for i, name in enumerate(report.tasks)}
    report.rows.sort(key=lambda r: order.get(r.task, len(order)))
    report.totals = totals(report.rows)
    output_folder(out_dir)
    write_atomic(out_dir / "campaign.json", report.model_dump_json(indent=1))
    write_atomic(out_dir / "campaign.md", markdown(report))
    plot(report, out_dir / "campaign.png")


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _yes(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "**no**"


def markdown(report: CampaignReport) -> str:
    t = report.totals
    formulas = ", ".join(f"{f} {n}" for f, n in t["flagged_by_formula"].items()) or "none"
    lines = [
        f"# intelliperf campaign: {report.suite} on {report.device}",
        "",
        f"Started {report.started}; {len(report.rows)} of {len(report.tasks)} tasks run; settings: "
        + ", ".join(f"{k}={v}" for k, v in report.settings.items())
        + ".",
        "",
        "| tasks run | runner correct before | diagnosed | flagged (by formula) | won | peer-verified correct | "
        "peer-timed | geomean peer speedup |",
        "|---|---|---|---|---|---|---|---|",
        f"| {t['tasks']} | {t['peer_correct_before']} | {t['diagnosed']} | {t['flagged']} ({formulas}) | {t['won']} | "
        f"{t['peer_verified_correct']} | {t['peer_timed']} | {_x(t['geomean_peer_speedup'])} |",
        "",
        "Statuses: " + "; ".join(f"{s} {n} ({WHY[s]})" for s, n in t["by_status"].items()) + ".",
        "",
        "| task | status | flagged | fixed | winner | peer correct | peer speedup | intelliperf speedup | seconds | "
        "detail |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report.rows:
        detail = r.detail.replace("|", "/").replace("\n", " ")[:240] or "-"
        lines.append(
            f"| {r.task} | {r.status} | {', '.join(r.flagged) or '-'} | {r.fixed or '-'} | {r.winner or '-'} | "
            f"{_yes(r.peer_correct)} | {_x(r.peer_speedup)} | {_x(r.intelliperf_speedup)} | {r.seconds:g} | {detail} |"
        )
    if report.device == "cpu":
        lines += ["", "On the CPU (Triton's interpreter) nothing is timed: the peer's clock needs a GPU."]
    return "\n".join(lines) + "\n"


def plot(report: CampaignReport, path: Path) -> None:
    """The peer-timed speedup per won task (skipped without matplotlib or without a timed win)."""
    rows = [r for r in report.rows if r.peer_speedup]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(rows) + 1.5), 3.5))
    ax.bar(range(len(rows)), [r.peer_speedup or 0.0 for r in rows], color="tab:blue")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(rows)), [r.task for r in rows], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("speedup by the task's own clock")
    geomean = report.totals.get("geomean_peer_speedup")
    ax.set_title(f"{report.suite}: {len(rows)} timed wins" + (f", geomean {geomean:.2f}x" if geomean else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
