"""`--formula auto`: which diagnosed bottleneck `optimize` fixes first.

Every registered formula is asked of the top kernels (as `diagnose` does by default); each bottleneck found
weighs its kernel's share of the recorded kernel time times its severity (low 1, medium 2, high 3), and the
heaviest is fixed. The rest are named in the report, for a run of their own (`-f NAME`).
"""

from __future__ import annotations

from .models import Finding, Report

AUTO = "auto"
ASK_ALL = "diagnoseOnly"  # the formula that asks every registered one
SEVERITY_WEIGHT = {"none": 0, "low": 1, "medium": 2, "high": 3}


def ranked_bottlenecks(report: Report) -> list[tuple[float, str, Finding]]:
    """(weight, kernel, finding) of every bottleneck present in the report's diagnoses, heaviest first (the
    kernel's rank, then the formula's name, break ties)."""
    share = {k.name: k.share for k in report.kernels}
    found = [
        (share.get(d.kernel, 0.0) * SEVERITY_WEIGHT[f.severity], d.rank, d.kernel, f)
        for d in report.diagnoses
        for f in d.findings
        if f.present and f.formula != ASK_ALL
    ]
    found.sort(key=lambda item: (-item[0], item[1], item[3].formula))
    return [(weight, kernel, finding) for weight, _, kernel, finding in found]


def chosen_note(ranked: list[tuple[float, str, Finding]]) -> str:
    """What `auto` chose and what it left, for the report."""
    weight, kernel, finding = ranked[0]
    text = (
        f"--formula auto: fixing {finding.formula} in {kernel} ({finding.severity}, weight {weight:.2f}: the "
        "kernel's share of the time x its severity)"
    )
    rest = [f"{f.formula} in {k} ({f.severity}, {w:.2f})" for w, k, f in ranked[1:6]]
    if rest:
        text += "; also found, for a run with -f NAME: " + ", ".join(rest)
    return text
