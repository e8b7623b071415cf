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

from pathlib import Path

from intelliperf.errors import UsageError
from intelliperf.plugins import Registry

from .base import Candidate, HardwareFacts, PastAttempt, Rewriter, RewriteRequest
from .llm import LLMRewriter
from .search import SearchRewriter
from .source import CodeUnit
from .transcript import ReplayRewriter, Transcript

ENTRY_POINT_GROUP = "intelliperf.rewriters"  # the built-ins register here too (pyproject.toml)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Candidate",
    "CodeUnit",
    "HardwareFacts",
    "PastAttempt",
    "RewriteRequest",
    "Rewriter",
    "Transcript",
    "make_rewriters",
    "rewriter_registry",
]


def _check(cls: object) -> str | None:
    if not (isinstance(cls, type) and issubclass(cls, Rewriter)):
        return "it is not a subclass of intelliperf.rewriters.Rewriter"
    if cls.name == "auto":
        return "`auto` chooses among the others: no rewriter may take its name"
    return None


def rewriter_registry() -> Registry[Rewriter]:
    """The rewriters by name: the built-ins and the installed plug-ins, and the plug-ins that failed."""
    return Registry("rewriter", ENTRY_POINT_GROUP, _check).load_entry_points()


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
    if choice == "auto":
        return make_rewriters("llm" if model else "recipes", model=model, llm_options=llm_options) + (
            [] if model else [SearchRewriter()]
        )
    registry = rewriter_registry()
    cls = registry.find(choice)  # a plug-in that failed to load is an error that says why
    if cls is None:
        raise UsageError(f"--rewriter must be one of {', '.join(['auto', *registry.names()])}, got {choice!r}")
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
