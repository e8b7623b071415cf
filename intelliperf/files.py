"""Writing files whole: shared by the recorder (inside the user's program), the reports, the
transcripts and the caches. Standard library only, so every layer may use it."""

from __future__ import annotations

import json
import os


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write whole or not at all: a reader never sees half a file, also when the run is interrupted."""
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path: str | os.PathLike, data: dict, indent: int | None = None) -> None:
    write_atomic(path, json.dumps(data, indent=indent))
