"""--branch / --create-pr: checked before the run (so a mistake costs seconds, not a whole
optimization), carried out after it when there is a validated winner."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..models import Delivery, Report
from . import git, github


@dataclass
class Publish:
    """What the user asked for: a branch, and maybe a pull request."""

    branch: str | None = None  # branch name; None: intelliperf/<formula>/<kernel>
    base: str | None = None  # default: the current branch
    create_pr: bool = False
    remote: str = "origin"
    github_repo: str | None = None  # default: $GITHUB_REPOSITORY, else the remote's URL
    github_api: str | None = None  # default: $GITHUB_API_URL, else api.github.com
    labels: list[str] = field(default_factory=list)


@dataclass
class Ready:
    plan: Publish
    repo: git.Repo
    project: Path
    api: github.GitHub | None


def prepare(plan: Publish, project: Path) -> Ready:
    """Refuse now what would fail after the run: no repository, detached HEAD without --base,
    no token, no remote, no GitHub repository name, an API or a remote that does not answer, a
    token that may not push."""
    repo = git.open_repo(project, plan.base)
    try:
        api = None
        if plan.create_pr:
            token = github.token_from_env()
            if not token:
                raise UsageError(
                    "--create-pr needs a GitHub token in GITHUB_TOKEN or GH_TOKEN",
                    hint="export GITHUB_TOKEN=... (in a workflow: the github-token input).",
                )
            url = git.remote_url(repo, plan.remote)
            name = plan.github_repo or os.environ.get("GITHUB_REPOSITORY") or github.repo_from_url(url)
            if not name:
                raise UsageError(
                    f"cannot tell the GitHub repository from remote {plan.remote!r} ({url})",
                    hint="Pass --github-repo OWNER/NAME.",
                )
            api = github.GitHub(plan.github_api or os.environ.get("GITHUB_API_URL") or github.DEFAULT_API, token, name)
            # Both ends contacted now: a refusal after the run would come after the push, or cost the run.
            api.check_access()
            git.check_remote(repo, plan.remote, token)
    finally:
        repo.repo.close()  # its `git cat-file` processes end now; GitPython starts them again when needed
    return Ready(plan=plan, repo=repo, project=project, api=api)


def deliver(ready: Ready, report: Report) -> Delivery:
    """Commit the winner on its branch (in a separate worktree), push it and open or update the PR."""
    plan, repo, opt = ready.plan, ready.repo, report.won()
    try:
        prefix = ready.project.resolve().relative_to(repo.root)
        notes = git.check_files(repo, [str(prefix / rel) for rel in opt.files], plan.base)
        branch = plan.branch or git.branch_name(report)
        sha = git.commit_winner(repo, report, ready.project, branch, plan.base)
        base = repo.base
        done = Delivery(branch=branch, base=base, commit=sha, notes=notes)
        if ready.api is not None:
            git.push(repo, plan.remote, branch, ready.api.token)
            done.remote = plan.remote
            pr = ready.api.open_or_update(branch, base, github.pr_title(report), github.pr_body(report), plan.labels)
            done.pr_number, done.pr_url, done.pr_action = pr.number, pr.url, pr.action
    finally:
        repo.repo.close()  # GitPython's `git cat-file` processes end here, not whenever it is collected
    return done
