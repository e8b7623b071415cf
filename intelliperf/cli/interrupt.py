"""Ctrl-C: the program's traceback muted, and one line saying which reports were written by then."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CtrlC:
    """Ctrl-C reaches the program intelliperf runs as well (one process group), and the traceback
    that program prints would pass through on our stderr. From the first Ctrl-C on, fd 2 goes to
    /dev/null; main() then says one line on a copy of it: what was written by then (`note`)."""

    stderr: int | None = None  # the copy of fd 2, once interrupted
    note: Callable[[], str] = lambda: "no report was written"

    def handler(self, signum, frame) -> None:
        if self.stderr is None:  # no flush here: the handler may run inside a write to stderr
            self.stderr = os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        raise KeyboardInterrupt

    def watch(self, *paths: Path | None, say: str = "written so far: {}") -> None:
        """The note names those of `paths` written from now on (a file from an earlier run is not this run's)."""

        def stamp(path: Path) -> tuple[int, int] | None:
            try:
                found = os.stat(path)
            except OSError:
                return None
            return found.st_ino, found.st_mtime_ns

        before = {path: stamp(path) for path in paths if path is not None}

        def note() -> str:
            written = [str(path) for path, was in before.items() if stamp(path) not in (None, was)]
            return say.format(", ".join(written)) if written else "no report was written"

        self.note = note

    def finish(self) -> int:
        line = f"intelliperf: interrupted: {self.note()}\n"
        if self.stderr is None:
            sys.stderr.write(line)
            return 130
        os.write(self.stderr, line.encode())
        os.dup2(self.stderr, 2)
        os.close(self.stderr)
        self.stderr = None
        return 130


ctrl_c = CtrlC()
