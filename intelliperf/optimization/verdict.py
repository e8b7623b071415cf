"""An attempt judged: accepted, rejected or timed out, from the validators' verdict and the formula's
metric before and after; and the best of the accepted ones."""

from __future__ import annotations

from ..models import Attempt, Finding, KernelProfile, Measure, Problem, Speedup, Verdict
from .session import Session

IMPROVEMENT = 0.01  # the metric must move by more than 1 % in its better direction


def decide(s: Session, attempt: Attempt) -> None:
    verdict = attempt.verdict
    assert verdict is not None  # decided after validation
    problems = list(verdict.problems)
    said = _timed_against_profile(verdict.speedup, getattr(s, "profile", None))
    if said and said not in verdict.notes:
        verdict.notes.append(said)
    metric = s.formula.metric
    if verdict.correct and attempt.chosen is None:  # a sweep's metric is not measured: its choice's will be
        was, now = attempt.before or Measure(), attempt.after or Measure()
        before, after = was.metric, now.metric
        better = s.finding.metric.better if s.finding.metric else "lower"
        if before is not None and after is None and now.bottleneck_absent:
            attempt.metric_improved = True  # what the metric counts is gone from the kernel
        elif before is None or after is None:
            attempt.metric_improved = None
            unmeasured = f"the candidate's {metric or 'metric'} could not be measured"
            problems.append(Problem(kind="metric", message=unmeasured))
        elif was.metric_name and now.metric_name and was.metric_name != now.metric_name:
            attempt.metric_improved = None  # e.g. region timers gave one, the static view the other
            problems.append(
                Problem(
                    kind="metric",
                    message=f"the candidate's metric was {now.metric_name}, the original's {was.metric_name}: they "
                    "do not compare (its evidence differed: did the region-timer run fail?)",
                )
            )
        else:
            attempt.metric_improved = (
                after < before * (1 - IMPROVEMENT) if better == "lower" else after > before * (1 + IMPROVEMENT)
            )
            if not attempt.metric_improved:
                named = now.metric_name or was.metric_name or metric or "the formula's metric"
                problems.append(
                    Problem(
                        kind="metric",
                        message=f"correct, but {named} did not improve: {before:g} -> {after:g} ({better} is better)",
                    )
                )
    if verdict.faster is not None:  # timed on a GPU: a correct candidate that is faster wins, metric or not
        won = verdict.correct and verdict.accepted
    else:  # no time (CPU): the formula's modelled metric is the only evidence the kernel got better
        won = verdict.correct and verdict.speedup is None and attempt.metric_improved is True
    if attempt.chosen is not None:  # a sweep screens configs; the one it found is tried next, pinned
        won = False
        screened = (
            f"a screen, not a fix: its autotuner chose {_config_text(attempt.chosen)}, "
            "which the search tries next as a pinned config"
            if attempt.chosen
            else "a screen, not a fix: which config its autotuner chose could not be read from the candidate's run"
        )
        problems.insert(0, Problem(kind="sweep", message=screened))
    attempt.status = "accepted" if won else "timed-out" if timed_out(verdict) else "rejected"
    attempt.set_problems(problems)


def _timed_against_profile(speedup: Speedup | None, profile: KernelProfile | None) -> str | None:
    """The reference's timed call next to the profiled kernel's mean time: the launcher may launch more
    than the kernel, but a gap past 2x says the timing is not what the program runs."""
    if speedup is None or profile is None or not profile.mean_time_s:
        return None
    profiled_ms = profile.mean_time_s * 1e3
    text = (
        f"the reference's timed call took {speedup.reference_ms:.4g} ms ({speedup.method}); the profiled "
        f"kernel {profiled_ms:.4g} ms per launch"
    )
    ratio = speedup.reference_ms / profiled_ms
    if ratio > 2 or ratio < 0.5:
        text += (
            f": {ratio:.2g}x apart, so what was timed differs from what the program ran (other kernels in the "
            "launcher, host work, or another workload)"
        )
    return text


def _config_text(config: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items() if k != "kwargs" and v is not None)


def timed_out(verdict: Verdict) -> bool:
    """Killed at a time limit and nothing else found: the candidate was not judged, neither way."""
    return bool(verdict.problems) and all(p.kind == "timeout" for p in verdict.problems)


def removed(attempt: Attempt) -> bool | None:
    """Whether the formula, asked again of the attempt's own run (as `diagnose` asks it), finds the bottleneck
    gone; None where that run gave it no evidence."""
    if attempt.after is None or attempt.after.present is None:
        return None
    return not attempt.after.present


def rank(attempt: Attempt, finding: Finding) -> tuple[bool, bool, float, float]:
    """Best of the accepted: one whose re-diagnosis finds the bottleneck gone first, then one that improved the
    metric, then the measured speedup, then the metric (CPU runs have no speedup)."""
    speedup = attempt.verdict.speedup.estimate if attempt.verdict and attempt.verdict.speedup else 0.0
    metric = attempt.after.metric if attempt.after and attempt.after.metric is not None else 0.0
    lower = finding.metric is None or finding.metric.better == "lower"
    return removed(attempt) is True, attempt.metric_improved is True, speedup, -metric if lower else metric
