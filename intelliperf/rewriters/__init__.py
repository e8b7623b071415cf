"""Rewriters: turn a pinpointed finding into a candidate kernel (and launcher).

| name    | when                          |
|---------|-------------------------------|
| llm     | a model is configured (DSPy, any OpenAI-compatible endpoint; extra `intelliperf[llm]`) |
| recipes | offline: textbook transforms per formula |
| search  | offline: launch/compile knobs, pinned in the launcher |
| replay  | a saved transcript of model answers (CI, tests) |

`auto` is llm when a model is configured, otherwise recipes then search.
"""

from __future__ import annotations

from pathlib import Path

from intelliperf.errors import UsageError

from .base import Candidate, HardwareFacts, PastAttempt, Rewriter, RewriteRequest
from .llm import LLMRewriter
from .recipes import RecipeRewriter
from .search import SearchRewriter
from .source import CodeUnit
from .transcript import ReplayRewriter, Transcript

REWRITERS: dict[str, type[Rewriter]] = {r.name: r for r in (LLMRewriter, RecipeRewriter, SearchRewriter,
                                                           ReplayRewriter)}
CHOICES = ("auto", *REWRITERS)

__all__ = ["CHOICES", "REWRITERS", "Candidate", "CodeUnit", "HardwareFacts", "PastAttempt", "RewriteRequest",
           "Rewriter", "Transcript", "make_rewriters"]


def make_rewriters(choice: str, *, model: str | None = None, llm_options: dict | None = None,
                   transcript: Path | None = None) -> list[Rewriter]:
    """The rewriters to run, in order, for `--rewriter choice`."""
    if choice not in CHOICES:
        raise UsageError(f"--rewriter must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "auto":
        return make_rewriters("llm" if model else "recipes", model=model, llm_options=llm_options) + (
            [] if model else [SearchRewriter()])
    cls = REWRITERS[choice]
    if cls is LLMRewriter:
        if not model:
            raise UsageError("--rewriter llm needs a model",
                             hint="Pass --model NAME (and --api-base URL for a server other than OpenAI's), or set "
                                  "INTELLIPERF_MODEL.")
        return [LLMRewriter(LLMRewriter.Options(model=model, **(llm_options or {})))]
    if cls is ReplayRewriter:
        if transcript is None:
            raise UsageError("--rewriter replay needs --transcript FILE (saved by an earlier --rewriter llm run)")
        return [ReplayRewriter(ReplayRewriter.Options(transcript=transcript))]
    return [cls()]
