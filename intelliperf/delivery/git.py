"""The validated winner as a commit on its own branch, made in a separate worktree.

The user's working tree and index are never touched: the commit is built in a temporary
`git worktree` checked out at the base, and only the branch ref is left behind. Pushing sends
the token (when there is one) through git's environment, never its command line.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..models import Report
from .github import pr_title
from .report import format_time, speedup_text

BOT_NAME, BOT_EMAIL = "intelliperf", "intelliperf@users.noreply.github.com"


@dataclass
class Repo:
    root: Path  # the repository's top level
    head_branch: str | None  # None: detached HEAD


def run_git(cwd: Path, *args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """git as it answered, failures included (FileNotFoundError when git is not installed)."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, input=stdin)


def git(cwd: Path, *args: str, env: dict | None = None, secret: str | None = None, stdin: str | None = None) -> str:
    """Run git; a failure is a UsageError with git's message (and never the token)."""
    try:
        done = run_git(cwd, *args, env=env, stdin=stdin)
    except FileNotFoundError as exc:
        raise UsageError("git is not installed", hint="Install git to use --branch / --create-pr.") from exc
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip()
        if secret:
            message = message.replace(secret, "***")
        verb = next((a for a in args if a[:1] != "-" and "=" not in a), "")  # past any -c name=value
        raise UsageError(f"git {verb} failed: {message}")
    return done.stdout.strip()


def open_repo(project: Path, base: str | None) -> Repo:
    """The git repository holding `project`; refuses what --branch cannot work from."""
    try:
        top = git(project, "rev-parse", "--show-toplevel")
    except UsageError as exc:
        raise UsageError(f"--branch needs a git repository: {project} is not inside one",
                         hint="Run `git init` and commit your code first, or drop --branch/--create-pr "
                              "(the patch file is written either way).") from exc
    root = Path(top).resolve()
    head = run_git(root, "symbolic-ref", "-q", "--short", "HEAD")
    branch = head.stdout.strip() if head.returncode == 0 else None
    if branch is None and base is None:
        raise UsageError("HEAD is detached, so there is no branch to base the fix on",
                         hint="Pass --base BRANCH (e.g. --base main), or check out a branch.")
    git(root, "rev-parse", "--verify", "--quiet", f"{base or 'HEAD'}^{{commit}}")
    return Repo(root=root, head_branch=branch)


def branch_name(report: Report) -> str:
    """intelliperf/<formula>/<kernel>: one branch per kernel and formula, so a rerun updates it."""
    kernel = report.optimization.kernel if report.optimization else report.selected or "kernel"
    parts = [re.sub(r"[^A-Za-z0-9_-]+", "-", part).strip("-") or "x" for part in (report.formula, kernel)]
    return "intelliperf/" + "/".join(parts)


def check_files(repo: Repo, files: list[str], base: str | None) -> list[str]:
    """Refuse when a file to patch has uncommitted changes (the patch was made against the working
    copy, so it would not apply to the base); return notes about other uncommitted changes."""
    dirty = git(repo.root, "status", "--porcelain", "--untracked-files=no", "--", *files)
    if dirty:
        raise UsageError(f"uncommitted changes in the files the fix changes:\n{dirty}",
                         hint="The validated patch was made against your working copy: commit (or stash) those "
                              "changes, then run again.")
    if base and git(repo.root, "rev-parse", f"{base}^{{commit}}") != git(repo.root, "rev-parse", "HEAD^{commit}"):
        changed = git(repo.root, "diff", "--name-only", f"{base}", "HEAD", "--", *files)
        if changed:
            raise UsageError(f"--base {base} differs from HEAD in the files the fix changes: {changed}",
                             hint="Check out the base branch and run again, or pass the branch you ran on.")
    others = git(repo.root, "status", "--porcelain", "--untracked-files=no")
    return [f"the run used uncommitted changes that are not in the branch:\n{others}"] if others else []


def commit_message(report: Report) -> str:
    opt = report.optimization
    attempt = opt.attempts[opt.winner - 1]
    before, after = attempt.before, attempt.after
    metric = next((f.metric for f in report.diagnosis(opt.kernel).findings if f.present and f.metric), None)
    lines = [pr_title(report), "",
             f"{attempt.title} ({attempt.rewriter} rewriter, attempt {attempt.number} of {len(opt.attempts)}).", ""]
    if metric and before and after and before.metric is not None and after.metric is not None:
        how = "modelled" if after.metric_modelled else "measured"
        lines.append(f"{metric.name}: {before.metric:g} -> {after.metric:g} ({how})")
    if before and after and before.kernel_time_s and after.kernel_time_s:
        lines.append(f"kernel time: {format_time(before.kernel_time_s)} -> {format_time(after.kernel_time_s)} "
                     f"({before.time_source})")
    lines.append(f"speedup: {speedup_text(opt.speedup)} ({opt.speedup.method if opt.speedup else 'not measured'})")
    if attempt.verdict and attempt.verdict.checks:
        lines += ["", "Checked:", *[f"- {c}" for c in attempt.verdict.checks]]
    lines += ["", f"Found and validated by intelliperf {report.tool_version} on {opt.hardware.get('device', '?')}."]
    return "\n".join(lines) + "\n"


def commit_winner(repo: Repo, report: Report, project: Path, branch: str, base: str | None) -> str:
    """Commit the winner's files on `branch` (created or moved to base + this commit); returns the sha."""
    opt = report.optimization
    start = base or "HEAD"
    if repo.head_branch == branch:
        raise UsageError(f"you are on {branch}, the branch intelliperf would rewrite",
                         hint="Check out your base branch first.")
    identity = [] if _has_identity(repo.root) else ["-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}"]
    with tempfile.TemporaryDirectory(prefix="intelliperf-worktree-") as tmp:
        tree = Path(tmp) / "tree"
        git(repo.root, "worktree", "add", "--quiet", "--detach", str(tree), start)
        try:
            prefix = project.resolve().relative_to(repo.root)
            for rel, copy in opt.files.items():
                target = tree / prefix / rel
                target.write_text(Path(copy).read_text())
                git(tree, "add", "--", str(prefix / rel))
            git(tree, *identity, "commit", "--quiet", "--no-verify", "-F", "-", stdin=commit_message(report))
            sha = git(tree, "rev-parse", "HEAD")
        finally:
            git(repo.root, "worktree", "remove", "--force", str(tree))
    git(repo.root, "branch", "--force", branch, sha)
    return sha


def _has_identity(root: Path) -> bool:
    return all(run_git(root, "config", key).returncode == 0
               for key in ("user.name", "user.email"))


def remote_url(repo: Repo, remote: str) -> str:
    try:
        return git(repo.root, "remote", "get-url", remote)
    except UsageError as exc:
        raise UsageError(f"no git remote named {remote!r}",
                         hint="Pass --remote NAME (see `git remote -v`).") from exc


def _has_auth_header(repo: Repo) -> bool:
    """actions/checkout leaves its own http.<url>.extraheader; a second Authorization header would clash."""
    found = run_git(repo.root, "config", "--get-regexp", r"^http\..*extraheader$")
    return "authorization" in found.stdout.lower()


def push(repo: Repo, remote: str, branch: str, token: str | None) -> None:
    """Force-push the branch (it is intelliperf's own: a rerun replaces its commit). An https
    remote gets the token as an HTTP header through GIT_CONFIG_* variables, not argv, unless the
    checkout already holds credentials."""
    env = dict(os.environ)
    if token and remote_url(repo, remote).startswith(("https://", "http://")) and not _has_auth_header(repo):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
        env.update({"GIT_CONFIG_COUNT": str(count + 1), f"GIT_CONFIG_KEY_{count}": "http.extraheader",
                    f"GIT_CONFIG_VALUE_{count}": f"AUTHORIZATION: basic {basic}", "GIT_TERMINAL_PROMPT": "0"})
    git(repo.root, "push", "--quiet", "--force", remote, f"refs/heads/{branch}:refs/heads/{branch}", env=env,
        secret=token)
