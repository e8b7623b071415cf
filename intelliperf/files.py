"""Writing files whole: shared by the recorder (inside the user's program), the reports, the
transcripts and the caches. Standard library only, so every layer may use it."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write whole or not at all: a reader never sees half a file, also when the run is interrupted.

    What the user put at `path` stays what it is: a symbolic link is written through (the file it
    points to is replaced, the link stays), and a FIFO, a device or a stream this process already
    holds (`/dev/stdout`) is written in place, where replacing it would cut off whoever reads it."""
    if _in_place(path):
        with open(path, "w") as f:
            f.write(text)
        return
    target = os.path.realpath(path)
    tmp = f"{target}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, target)


def _in_place(path: str | os.PathLike) -> bool:
    """Whether `path` (followed through links) is a FIFO, a device, or the file our stdout or stderr is."""
    try:
        found = os.stat(path)
    except OSError:
        return False  # nothing there yet
    if not stat.S_ISREG(found.st_mode):
        return True
    for fd in (1, 2):
        try:
            if os.path.samestat(found, os.fstat(fd)):
                return True
        except OSError:
            pass  # that stream is closed
    return False


def write_json(path: str | os.PathLike, data: dict, indent: int | None = None) -> None:
    write_atomic(path, json.dumps(data, indent=indent))


class NotRegularFile(OSError):
    """A file another process was to write is a link, a device or a folder instead."""


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of the regular file at `path`, never following a symbolic link: what a sandboxed
    process wrote is read where it is, not where it points (an output linked to the reference's
    ground truth would otherwise be compared with itself)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if os.path.islink(path):
            raise NotRegularFile(f"{os.fspath(path)} is a symbolic link, not the file that was to be written") from None
        raise exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


IGNORE_ALL = "# intelliperf's output, not sources: git ignores this folder (delete this file to track it)\n*\n"


def output_folder(folder: Path) -> None:
    """Make an output folder. One that intelliperf creates ignores itself in git (a `.gitignore`
    inside, as mypy and pytest do with their caches), so reports never end up in a commit; a
    folder that already exists is the user's and stays as it is. Where several folders are made
    (`out/runs/case`), the outermost one made holds it."""
    if folder.is_dir():
        return
    made = folder
    while not made.parent.exists() and made.parent != made:
        made = made.parent
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # an output folder that cannot hold it still works
        (made / ".gitignore").write_text(IGNORE_ALL)
