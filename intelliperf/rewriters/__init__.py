"""Rewriters: turn a pinpointed finding into a candidate kernel (and launcher).

| name    | when                          |
|---------|-------------------------------|
| llm     | a model is configured (DSPy, any OpenAI-compatible endpoint; extra `intelliperf[llm]`) |
| recipes | offline: textbook transforms per formula |
| search  | offline: launch/compile knobs, pinned in the launcher |
| replay  | a saved transcript of model answers (CI, tests) |

`auto` is llm when a model is configured, otherwise recipes then search. Third-party rewriters
register under the entry-point group `intelliperf.rewriters` (name = the class's `name`) and
are chosen by that name with `--rewriter`.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

from intelliperf.errors import UsageError

from .base import Candidate, HardwareFacts, PastAttempt, Rewriter, RewriteRequest
from .llm import LLMRewriter
from .recipes import RecipeRewriter
from .search import SearchRewriter
from .source import CodeUnit
from .transcript import ReplayRewriter, Transcript

REWRITERS: dict[str, type[Rewriter]] = {
    r.name: r for r in (LLMRewriter, RecipeRewriter, SearchRewriter, ReplayRewriter)
}
CHOICES = ("auto", *REWRITERS)
ENTRY_POINT_GROUP = "intelliperf.rewriters"

__all__ = [
    "CHOICES",
    "ENTRY_POINT_GROUP",
    "REWRITERS",
    "Candidate",
    "CodeUnit",
    "HardwareFacts",
    "PastAttempt",
    "RewriteRequest",
    "Rewriter",
    "Transcript",
    "make_rewriters",
    "plugins",
]


def make_rewriters(
    choice: str | Rewriter,
    *,
    model: str | None = None,
    llm_options: dict | None = None,
    transcript: Path | None = None,
) -> list[Rewriter]:
    """The rewriters to run, in order, for `--rewriter choice` (a built-in or a plug-in's name); an
    API caller may hand over a Rewriter instance instead."""
    if isinstance(choice, Rewriter):
        return [choice]
    if choice not in CHOICES:
        found, broken = plugins()
        if choice in broken:
            raise UsageError(
                f"the rewriter plug-in {choice!r} failed to load: {broken[choice]}",
                hint=f"Fix the package that registers it under the entry-point group {ENTRY_POINT_GROUP}.",
            )
        if choice not in found:
            raise UsageError(f"--rewriter must be one of {', '.join([*CHOICES, *found])}, got {choice!r}")
        return [found[choice]()]
    if choice == "auto":
        return make_rewriters("llm" if model else "recipes", model=model, llm_options=llm_options) + (
            [] if model else [SearchRewriter()]
        )
    cls = REWRITERS[choice]
    if cls is LLMRewriter:
        if not model:
            raise UsageError(
                "--rewriter llm needs a model",
                hint="Pass --model NAME (and --api-base URL for a server other than OpenAI's), or set "
                "INTELLIPERF_MODEL.",
            )
        return [LLMRewriter(LLMRewriter.Options(model=model, **(llm_options or {})))]
    if cls is ReplayRewriter:
        if transcript is None:
            raise UsageError("--rewriter replay needs --transcript FILE (saved by an earlier --rewriter llm run)")
        return [ReplayRewriter(ReplayRewriter.Options(transcript=transcript))]
    return [cls()]


def plugins() -> tuple[dict[str, type[Rewriter]], dict[str, str]]:
    """({name: class} of the installed rewriter plug-ins, {name: why it failed to load})."""
    found: dict[str, type[Rewriter]] = {}
    broken: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
            if not (isinstance(cls, type) and issubclass(cls, Rewriter)):
                raise TypeError("it is not a subclass of intelliperf.rewriters.Rewriter")
            if ep.name in CHOICES:
                raise ValueError(f"{ep.name!r} is a built-in rewriter's name")
            if getattr(cls, "name", None) != ep.name:
                raise ValueError(f"the class's name is {getattr(cls, 'name', None)!r}, the entry point's {ep.name!r}")
            found[ep.name] = cls
        except Exception as exc:  # a broken third-party plug-in must not hide the others
            broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
    return found, broken
