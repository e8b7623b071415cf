"""A user's git repository in a temp dir, with a bare repository as its remote."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import EXAMPLES

TOKEN = "ghs_test_token_do_not_leak_0123456789"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def user_repository(tmp_path: Path) -> tuple[Path, Path]:
    """The examples committed on `main` and pushed to `origin` (a bare repository): (project, remote)."""
    project, remote = tmp_path / "project", tmp_path / "remote.git"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns("__pycache__"))
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "init", "-q", "-b", "main")
    git(project, "add", ".")
    git(project, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "kernels")
    git(project, "remote", "add", "origin", str(remote))
    git(project, "push", "-q", "origin", "main")
    return project, remote
