"""Show pinpointed kernel lines in the user's own source, with a few lines around them."""

from __future__ import annotations

import linecache

from .models import SourceLine

CONTEXT_LINES = 3


def source_line(file: str, line: int, detail: str = "", context: int = CONTEXT_LINES) -> SourceLine:
    """The line's code and its neighbours, read now so the report stays readable later."""
    linecache.checkcache(file)
    around = [(n, linecache.getline(file, n).rstrip("\n")) for n in range(max(1, line - context), line + context + 1)]
    while around and not around[-1][1] and around[-1][0] > line:
        around.pop()
    return SourceLine(file=file, line=line, code=linecache.getline(file, line).strip(), detail=detail, context=around)
