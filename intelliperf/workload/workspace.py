"""The project's copies and the confined runs in them: shared by validation (the reference and
each candidate run in a copy) and the region-timer pass (the instrumented kernel in a copy)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import env as names
from .head_start import HeadStart
from .runner import Tail, spawn
from .sandbox import Sandbox

IGNORED_IN_COPIES = (".git", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".intelliperf")


def within(path: Path, folder: Path) -> bool:
    """`path` is `folder` or lies below it (both resolved)."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def in_copy(command: list[str], root: Path, copy: Path) -> list[str]:
    """The command with absolute paths into the project pointed at the copy, where the copy has them
    (a virtual environment inside the project is not copied: its interpreter stays where it is)."""

    def mapped(arg: str) -> str:
        if not (Path(arg).is_absolute() and within(Path(arg), root)):
            return arg
        there = copy / Path(arg).resolve().relative_to(Path(root).resolve())
        return str(there) if there.exists() else arg

    return [mapped(arg) for arg in command]


def copy_project(root: Path, changes: dict[str, str], into: Path, exclude: tuple[Path, ...] = ()) -> Path:
    """A copy of `root` in `into` (new, or an empty folder) with `changes` ({relative path: new text})
    applied; the folders in `exclude` (e.g. the tool's own output folder inside the project) are left out."""
    patterns = shutil.ignore_patterns(*IGNORED_IN_COPIES)
    skipped = {Path(p).resolve() for p in exclude}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(patterns(folder, names)) | {n for n in names if (Path(folder) / n).resolve() in skipped}

    empty = into.is_dir() and not any(into.iterdir())  # made ahead for a started Python to bind (head_start)
    shutil.copytree(root, into, ignore=ignore, symlinks=True, dirs_exist_ok=empty)
    for rel, text in changes.items():
        target = (into / rel).resolve()
        if into.resolve() not in target.parents:
            raise ValueError(f"a candidate may only change files inside the project, not {rel!r}")
        target.write_text(text)
    return into


@dataclass(frozen=True)
class Confinement:
    """Where a sandboxed process runs: its folder, its own $HOME (made), the seed of every generator in it, and
    the folders it may write and read besides the project's code (`Sandbox.wrap`)."""

    cwd: Path
    home: Path
    seed: int
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()

    def env(self, box: Sandbox, env: dict) -> dict:
        return confined_env(box, env, self.home, self.seed)

    def binds(self) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
        """The folders it writes ($HOME among them) and reads."""
        return (*self.writable, self.home), self.readable


def confined(
    box: Sandbox,
    command: list[str],
    room: Confinement,
    *,
    env: dict,
    timeout_s: float | None = None,
    ahead: HeadStart | None = None,
):
    """Run `command` in the sandbox, in `room` with a fresh $HOME (Triton's cache, the program's dot-files); in
    the Python `ahead` started for it where that fits the run (`HeadStart.fits`), else in a fresh one."""
    env = room.env(box, env)  # first: it creates $HOME, which wrap() binds only if it exists
    writable, readable = room.binds()
    result = ahead.go(box, command, room.cwd, env, writable, readable, timeout_s) if ahead is not None else None
    if result is not None:
        return result
    return spawn(
        box.wrap(command, cwd=room.cwd, writable=writable, readable=readable),
        cwd=str(room.cwd),
        env=env,
        timeout_s=timeout_s,
        echo=Tail(),
    )


def confined_env(box: Sandbox, env: dict, home: Path, seed: int) -> dict:
    """The allow-listed environment with its own $HOME (created) and every generator seeded alike."""
    home.mkdir(parents=True, exist_ok=True)
    return box.env(env) | {
        "HOME": str(home),
        "TMPDIR": "/tmp",
        names.SEED: str(seed),
        "PYTHONHASHSEED": str(seed),
        "TRITON_CACHE_DIR": str(home / "triton-cache"),
    }
