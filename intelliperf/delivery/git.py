"""The validated winner as a commit on its own branch, made in a separate worktree.

The user's working tree and index are never touched: the commit is built in a temporary
`git worktree` checked out at the base, and only the branch ref is left behind. Pushing sends
the token (when there is one) through git's environment, never its command line. Repository
work goes through GitPython (typed repositories, refs, index, config and errors; git runs
underneath), imported only when delivery is asked for, so a machine without git still diagnoses.
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..models import Report
from .github import pr_title
from .report import bottleneck_claim, format_time, speedup_text

if TYPE_CHECKING:
    import git as gp

BOT_NAME, BOT_EMAIL = "intelliperf", "intelliperf@users.noreply.github.com"


@dataclass
class Repo:
    root: Path  # the repository's top level
    head_branch: str | None  # None: detached HEAD
    base: str  # what the fix is committed on: --base, else the checked-out branch
    repo: gp.Repo


def gitpython():
    """The `git` package (GitPython); UsageError when the git binary it drives is missing."""
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # a missing git is our error, not an import-time one
    import git as gp

    try:
        gp.Git().version_info  # noqa: B018  (runs `git version` once)
    except (gp.GitCommandNotFound, OSError) as exc:
        raise UsageError("git is not installed", hint="Install git to use --branch / --create-pr.") from exc
    return gp


def find_repo(path: Path):
    """The GitPython Repo holding `path`; None when it is in no repository."""
    gp = gitpython()
    try:
        return gp.Repo(path, search_parent_directories=True)
    except (gp.InvalidGitRepositoryError, gp.NoSuchPathError):
        return None


def git(repo, *args: str, env: dict | None = None, secret: str | None = None, timeout_s: float | None = None) -> str:
    """A git command through GitPython; a failure is a UsageError with git's message (never the token)."""
    gp = gitpython()
    try:
        return repo.git.execute(["git", *args], env=env, kill_after_timeout=timeout_s)
    except gp.GitCommandError as exc:
        message = str(exc.stderr or exc.stdout or "").strip().removeprefix("stderr:").strip().strip("'").strip()
        if secret:
            message = message.replace(secret, "***")
        verb = next((a for a in args if a[:1] != "-" and "=" not in a), "")  # past any -c name=value
        raise UsageError(f"git {verb} failed: {message}") from None


def open_repo(project: Path, base: str | None) -> Repo:
    """The git repository holding `project`; refuses what --branch cannot work from."""
    repo = find_repo(project)
    if repo is None or repo.bare:
        raise UsageError(
            f"--branch needs a git repository: {project} is not inside one",
            hint="Run `git init` and commit your code first, or drop --branch/--create-pr "
            "(the patch file is written either way).",
        )
    branch = None if repo.head.is_detached else repo.active_branch.name
    if branch is None and base is None:
        raise UsageError(
            "HEAD is detached, so there is no branch to base the fix on",
            hint="Pass --base BRANCH (e.g. --base main), or check out a branch.",
        )
    git(repo, "rev-parse", "--verify", "--quiet", f"{base or 'HEAD'}^{{commit}}")
    root = Path(str(repo.working_tree_dir)).resolve()
    return Repo(root=root, head_branch=branch, base=base or str(branch), repo=repo)


def branch_name(report: Report) -> str:
    """intelliperf/<formula>/<kernel>: one branch per kernel and formula, so a rerun updates it."""
    kernel = report.optimization.kernel if report.optimization else report.selected or "kernel"
    parts = [re.sub(r"[^A-Za-z0-9_-]+", "-", part).strip("-") or "x" for part in (report.formula, kernel)]
    return "intelliperf/" + "/".join(parts)


def check_files(repo: Repo, files: list[str], base: str | None) -> list[str]:
    """Refuse when a file to patch has uncommitted changes (the patch was made against the working
    copy, so it would not apply to the base); return notes about other uncommitted changes."""
    dirty = git(repo.repo, "status", "--porcelain", "--untracked-files=no", "--", *files)
    if dirty:
        raise UsageError(
            f"uncommitted changes in the files the fix changes:\n{dirty}",
            hint="The validated patch was made against your working copy: commit (or stash) those "
            "changes, then run again.",
        )
    if base and git(repo.repo, "rev-parse", f"{base}^{{commit}}") != git(repo.repo, "rev-parse", "HEAD^{commit}"):
        changed = git(repo.repo, "diff", "--name-only", f"{base}", "HEAD", "--", *files)
        if changed:
            raise UsageError(
                f"--base {base} differs from HEAD in the files the fix changes: {changed}",
                hint="Check out the base branch and run again, or pass the branch you ran on.",
            )
    others = git(repo.repo, "status", "--porcelain", "--untracked-files=no")
    return [f"the run used uncommitted changes that are not in the branch:\n{others}"] if others else []


def commit_message(report: Report) -> str:
    opt = report.won()
    attempt = opt.winning_attempt()
    before, after = attempt.before, attempt.after
    lines = [
        pr_title(report),
        "",
        f"{attempt.title} ({attempt.rewriter} rewriter, attempt {attempt.number} of {len(opt.attempts)}).",
        "",
    ]
    if before and after and before.metric is not None and after.metric is not None:
        how = ("modelled" if after.metric_modelled else "measured") + (
            " in the candidate's own process" if after.metric_source == "candidate-process" else ""
        )
        lines.append(f"bottleneck: {bottleneck_claim(opt)} ({how})")
    if before and after and before.kernel_time_s and after.kernel_time_s:
        lines.append(
            f"kernel time: {format_time(before.kernel_time_s)} -> {format_time(after.kernel_time_s)} "
            f"({before.time_source})"
        )
    lines.append(f"speedup: {speedup_text(opt.speedup)} ({opt.speedup.method if opt.speedup else 'not measured'})")
    if attempt.verdict and attempt.verdict.checks:
        lines += ["", "Checked:", *[f"- {c}" for c in attempt.verdict.checks]]
    done = "validated" if opt.speedup else "checked correct (speed not measured)"
    lines += ["", f"Found and {done} by intelliperf {report.tool_version} on {opt.hardware.get('device', '?')}."]
    return "\n".join(lines) + "\n"


def commit_winner(repo: Repo, report: Report, project: Path, branch: str, base: str | None) -> str:
    """Commit the winner's files on `branch` (created or moved to base + this commit); returns the sha."""
    gp = gitpython()
    opt = report.won()
    start = base or "HEAD"
    if repo.head_branch == branch:
        raise UsageError(
            f"you are on {branch}, the branch intelliperf would rewrite", hint="Check out your base branch first."
        )
    bot = None if _has_identity(repo.repo) else gp.Actor(BOT_NAME, BOT_EMAIL)
    with tempfile.TemporaryDirectory(prefix="intelliperf-worktree-") as tmp:
        tree = Path(tmp) / "tree"
        git(repo.repo, "worktree", "add", "--quiet", "--detach", str(tree), start)
        try:
            work = gp.Repo(tree)
            try:
                prefix = project.resolve().relative_to(repo.root)
                for rel, copy in opt.files.items():
                    (tree / prefix / rel).write_text(Path(copy).read_text())
                work.index.add([str(prefix / rel) for rel in opt.files])
                sha = work.index.commit(commit_message(report), author=bot, committer=bot, skip_hooks=True).hexsha
            finally:
                work.close()  # GitPython's `git cat-file` processes end with it, not when it is collected
        finally:
            git(repo.repo, "worktree", "remove", "--force", str(tree))
    repo.repo.create_head(branch, sha, force=True)
    return sha


def _has_identity(repo) -> bool:
    reader = repo.config_reader()
    return all(reader.get_value("user", key, default=None) for key in ("name", "email"))


def remote_url(repo: Repo, remote: str) -> str:
    try:
        return git(repo.repo, "remote", "get-url", remote)
    except UsageError as exc:
        raise UsageError(f"no git remote named {remote!r}", hint="Pass --remote NAME (see `git remote -v`).") from exc


def _has_auth_header(repo: Repo) -> bool:
    """actions/checkout leaves its own http.<url>.extraheader; a second Authorization header would clash."""
    reader = repo.repo.config_reader()
    return any(
        "authorization" in str(reader.get_value(section, "extraheader", default="")).lower()
        for section in reader.sections()
        if section.startswith("http")
    )


def _auth_env(repo: Repo, remote: str, token: str | None) -> dict:
    """git's environment for talking to the remote: an https remote gets the token as an HTTP header
    through GIT_CONFIG_* variables, not argv, unless the checkout already holds credentials; git
    never waits for a password on a terminal."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    if token and remote_url(repo, remote).startswith(("https://", "http://")) and not _has_auth_header(repo):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
        env.update(
            {
                "GIT_CONFIG_COUNT": str(count + 1),
                f"GIT_CONFIG_KEY_{count}": "http.extraheader",
                f"GIT_CONFIG_VALUE_{count}": f"AUTHORIZATION: basic {basic}",
            }
        )
    return env


def check_remote(repo: Repo, remote: str, token: str | None) -> None:
    """Before the run: the remote answers git, with the credentials the push will use, so that the
    push after the run is not the first contact (a refusal then would cost the whole run)."""
    try:
        git(repo.repo, "ls-remote", remote, "HEAD", env=_auth_env(repo, remote, token), secret=token, timeout_s=60)
    except UsageError as exc:
        raise UsageError(
            f"cannot reach the git remote {remote!r}: {exc.message}",
            hint="Check `git remote -v`, the network and the token's access; nothing was run or pushed.",
        ) from None


def push(repo: Repo, remote: str, branch: str, token: str | None) -> None:
    """Force-push the branch (it is intelliperf's own: a rerun replaces its commit)."""
    git(
        repo.repo,
        "push",
        "--quiet",
        "--force",
        remote,
        f"refs/heads/{branch}:refs/heads/{branch}",
        env=_auth_env(repo, remote, token),
        secret=token,
    )
