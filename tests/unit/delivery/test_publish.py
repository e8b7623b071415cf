"""--branch / --create-pr with real components: a git repository in a temp dir, a bare repository
as its remote, and a loopback server speaking GitHub's pull-request API."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import SMALL, run_cli
from git_repos import TOKEN, git, user_repository

from intelliperf.delivery import github
from intelliperf.delivery.publish import Publish, deliver, prepare
from intelliperf.errors import UsageError
from intelliperf.models import Report
from intelliperf.testing.github_api import FakeGitHub

pytestmark = pytest.mark.slow  # every test here runs programs or validations (the fast tier skips them)

BRANCH = "intelliperf/atomicContention/contended_sum_kernel"
# A local edit the user has not committed, in a file the fix does not change; it also records the
# GitHub token as every run of the program sees it (it must never see one).
PROBE = (
    "\nimport os as _os\nif _os.environ.get('ENV_PROBE'):\n"
    "    open(_os.environ['ENV_PROBE'], 'a').write(repr(_os.environ.get('GITHUB_TOKEN')) + '\\n')\n"
)


def _snapshot(project: Path) -> dict:
    """Everything a user would notice: every file's bytes, the index, status, HEAD and its branch."""
    files = {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(project).parts
    }
    return {
        "files": files,
        "index": git(project, "ls-files", "--stage"),
        "status": git(project, "status", "--porcelain"),
        "head": git(project, "rev-parse", "HEAD"),
        "branch": git(project, "branch", "--show-current"),
    }


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("delivery")
    project, remote = user_repository(tmp)
    (project / "_harness.py").write_text((project / "_harness.py").read_text() + PROBE)
    probe, out = tmp / "env_probe.txt", tmp / "out"
    before = _snapshot(project)
    with FakeGitHub("octo/kernels", TOKEN) as api:
        env = {**os.environ, "GITHUB_TOKEN": TOKEN, "ENV_PROBE": str(probe)}
        done = run_cli(
            "optimize",
            "--out-dir",
            str(out),
            "--create-pr",
            "--github-repo",
            "octo/kernels",
            "--github-api",
            api.url,
            "--pr-label",
            "performance",
            "--pr-label",
            "intelliperf",
            "--",
            sys.executable,
            "contended_sum.py",
            *SMALL,
            cwd=project,
            env=env,
        )
        yield {
            "done": done,
            "project": project,
            "remote": remote,
            "api": api,
            "out": out,
            "before": before,
            "after": _snapshot(project),
            "probe": probe,
            "tmp": tmp,
        }


def test_create_pr_pushes_a_commit_and_opens_a_pull_request_with_the_evidence(published):
    done, api, remote, out = published["done"], published["api"], published["remote"], published["out"]
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    delivery = report["delivery"]
    assert delivery["branch"] == BRANCH and delivery["base"] == "main" and delivery["pr_action"] == "created"
    assert delivery["pr_url"] == "https://github.example/octo/kernels/pull/1" and delivery["pr_url"] in done.stdout
    assert any("uncommitted changes that are not in the branch" in n and "_harness.py" in n for n in delivery["notes"])

    # The branch in the remote: one commit on top of main holding exactly the validated patch.
    main = git(remote, "rev-parse", "main")
    assert git(remote, "rev-parse", f"{BRANCH}^") == main and git(remote, "rev-parse", BRANCH) == delivery["commit"]
    changed = [line for line in git(remote, "diff", main, BRANCH).splitlines() if line[:1] in "+-"]
    patch = [line for line in (out / "winner.patch").read_text().splitlines() if line[:1] in "+-"]
    assert changed == patch and any("tl.sum(" in line for line in changed)
    message = git(remote, "log", "-1", "--format=%B", BRANCH)
    assert message.startswith("intelliperf: atomicContention fix for contended_sum_kernel")
    assert "reduce-then-atomic" in message and "Checked:" in message
    assert "bottleneck: removed: the atomicContention formula" in message and "65536 -> 64 atomic" in message
    assert "checked correct (speed not measured)" in message and "validated" not in message
    assert "dispatches" in message

    # The API calls: the repository and the token's access (before the run), look for an open PR, open
    # one, label it; the token only in the Authorization header.
    assert [(r.method, r.path.split("?")[0]) for r in api.requests] == [
        ("GET", "/repos/octo/kernels"),
        ("GET", "/repos/octo/kernels/pulls"),
        ("POST", "/repos/octo/kernels/pulls"),
        ("POST", "/repos/octo/kernels/issues/1/labels"),
    ]
    assert "head=octo:" + BRANCH in api.requests[1].path
    create = api.requests[2].body
    assert (create["head"], create["base"]) == (BRANCH, "main")
    body = create["body"]
    for needle in (
        "## `contended_sum_kernel`: atomicContention",
        "contended_sum.py:",
        "atomic_updates_per_address",
        "65536 → 64",
        "## Correctness",
        "dispatches",
        "rewriter `recipes`, attempt 1 of 1",
        "<details><summary>Full intelliperf report (JSON)</summary>",
    ):
        assert needle in body, needle
    assert len(body) <= github.BODY_LIMIT
    assert all(TOKEN not in json.dumps(r.body) and TOKEN not in r.path for r in api.requests)
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in api.requests)
    assert api.pulls[1]["labels"] == ["intelliperf", "performance"]


def test_the_users_tree_is_untouched_and_the_token_goes_nowhere(published):
    assert published["after"] == published["before"]  # files byte for byte, index, status, HEAD, branch
    assert git(published["project"], "branch", "--list", BRANCH)  # the only thing added: the fix's branch
    assert git(published["project"], "worktree", "list").count("\n") == 0  # the temporary worktree is gone
    seen = published["probe"].read_text().splitlines()
    assert seen and set(seen) == {"None"}  # every run of the program (recording, candidates, replays)
    done = published["done"]
    assert TOKEN not in done.stdout and TOKEN not in done.stderr
    for path in published["out"].rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_rerun_updates_the_same_pull_request(published, monkeypatch):
    api, project = published["api"], published["project"]
    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    ready = prepare(
        Publish(create_pr=True, github_repo="octo/kernels", github_api=api.url, labels=["performance"]), project
    )
    again = deliver(ready, report)
    assert (again.pr_number, again.pr_action) == (1, "updated") and len(api.pulls) == 1
    assert [r.method for r in api.requests[-3:]] == ["GET", "PATCH", "POST"]
    assert git(published["remote"], "rev-parse", BRANCH) == again.commit


def test_a_conflicting_local_change_in_the_patched_file_is_refused(published):
    project = published["project"]
    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    kernel_file = project / "contended_sum.py"
    original = kernel_file.read_bytes()
    kernel_file.write_bytes(original + b"# edited after the run\n")
    try:
        with pytest.raises(UsageError, match="uncommitted changes in the files the fix changes") as info:
            deliver(prepare(Publish(), project), report)
        assert "contended_sum.py" in str(info.value) and "commit (or stash)" in info.value.hint
    finally:
        kernel_file.write_bytes(original)


def test_refusals_come_before_any_run(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = [(plain, ["--branch"], {}, "needs a git repository")]
    project, _ = user_repository(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in github.TOKEN_VARIABLES}
    cases += [
        (project, ["--create-pr", "--github-repo", "o/r"], env, "needs a GitHub token in GITHUB_TOKEN"),
        (project, ["--create-pr"], {**env, "GITHUB_TOKEN": TOKEN}, "cannot tell the GitHub repository"),
        (
            project,
            ["--create-pr", "--remote", "upstream", "--github-repo", "o/r"],
            {**env, "GITHUB_TOKEN": TOKEN},
            "no git remote named 'upstream'",
        ),
    ]
    for cwd, options, extra, message in cases:
        done = run_cli(
            "optimize",
            *options,
            "--",
            sys.executable,
            "missing_program.py",
            cwd=cwd,
            env={**os.environ, **extra} if extra else None,
        )
        assert done.returncode == 2 and message in done.stderr, (options, done.stderr)
        assert "Traceback" not in done.stderr and TOKEN not in done.stderr
    git(project, "checkout", "-q", "--detach")
    detached = run_cli("optimize", "--branch", "--", sys.executable, "missing_program.py", cwd=project)
    assert detached.returncode == 2 and "HEAD is detached" in detached.stderr and "--base" in detached.stderr
    # no git binary on PATH (GitPython drives it): a clear refusal, not an import-time traceback
    no_git = {k: v for k, v in os.environ.items() if not k.startswith("GIT_PYTHON")} | {"PATH": "/nonexistent"}
    done = run_cli(
        "optimize", "--branch", "--no-sandbox", "--", sys.executable, "missing_program.py", cwd=project, env=no_git
    )
    assert done.returncode == 2 and "git is not installed" in done.stderr and "Traceback" not in done.stderr


def _closed_port() -> int:
    """A loopback port nothing listens on: a connection to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_api_is_refused_before_the_run_and_pushes_nothing(tmp_path):
    """The API used to be called first after the run, after the force-push: the branch was in the
    remote, the pull request was not, and the run's minute was lost."""
    project, remote = user_repository(tmp_path)
    out = tmp_path / "out"
    started = time.monotonic()
    done = run_cli(
        "optimize",
        "--out-dir",
        str(out),
        "--create-pr",
        "--github-repo",
        "octo/kernels",
        "--github-api",
        f"http://127.0.0.1:{_closed_port()}",
        "--",
        sys.executable,
        "contended_sum.py",
        *SMALL,
        cwd=project,
        env={**os.environ, "GITHUB_TOKEN": TOKEN},
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-3000:]
    assert "cannot reach the GitHub API at http://127.0.0.1:" in done.stderr and "--github-api" in done.stderr
    assert "Traceback" not in done.stderr and TOKEN not in done.stderr
    assert git(remote, "for-each-ref", "--format=%(refname)") == "refs/heads/main"  # nothing pushed
    assert not out.exists() and "profiling" not in done.stderr  # refused before the program ran
    assert elapsed < 60, elapsed


def test_a_token_that_may_not_push_and_a_silent_remote_are_refused_before_the_run(tmp_path, monkeypatch):
    project, remote = user_repository(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    plan = Publish(create_pr=True, github_repo="octo/kernels")
    with FakeGitHub("octo/kernels", TOKEN, push=False) as api:
        plan.github_api = api.url
        with pytest.raises(UsageError, match="cannot push to octo/kernels") as info:
            prepare(plan, project)
        assert "contents: write" in (info.value.hint or "")
    with FakeGitHub("octo/kernels", TOKEN) as api:
        plan.github_api = api.url
        prepare(plan, project)  # both ends answer
        git(project, "remote", "set-url", "origin", str(tmp_path / "moved.git"))
        with pytest.raises(UsageError, match="cannot reach the git remote 'origin'") as info:
            prepare(plan, project)
        assert "nothing was run or pushed" in (info.value.hint or "")
    assert git(remote, "for-each-ref", "--format=%(refname)") == "refs/heads/main"


def test_remote_urls_name_the_repository():
    for url in (
        "https://github.com/octo/kernels.git",
        "https://github.com/octo/kernels",
        "git@github.com:octo/kernels.git",
        "ssh://git@ghe.example.com/octo/kernels.git",
    ):
        assert github.repo_from_url(url) == "octo/kernels", url
    assert github.repo_from_url("/srv/git/kernels.git") is None


def test_api_errors_are_clear_and_keep_the_token_out(published):
    api = github.GitHub(published["api"].url, "wrong-token-value", "octo/kernels")
    with pytest.raises(UsageError, match="answered 401") as info:
        api.open_or_update("b", "main", "t", "body", [])
    assert "wrong-token-value" not in str(info.value) and "GITHUB_TOKEN" in info.value.hint
    missing = github.GitHub(published["api"].url, TOKEN, "octo/elsewhere")
    with pytest.raises(UsageError, match="answered 404"):
        missing.open_or_update("b", "main", "t", "body", [])


def test_a_large_report_is_truncated_to_the_body_limit(published):
    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    report.notes = ["x" * 1000] * 200  # 200 KB of notes
    body = github.pr_body(report)
    assert len(body) <= github.BODY_LIMIT and "Truncated to GitHub's 65,536-character limit" in body
    assert body.rstrip().endswith("</details>")


def test_branch_only_from_a_detached_head_builds_on_the_base(published):
    project, remote = published["project"], published["remote"]
    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    git(project, "checkout", "-q", "--detach")
    try:
        done = deliver(prepare(Publish(branch="perf/sum", base="main"), project), report)
        assert (done.branch, done.base, done.remote, done.pr_url) == ("perf/sum", "main", None, None)
        assert git(project, "rev-parse", "perf/sum^") == git(project, "rev-parse", "main")
        assert "reduce-then-atomic" in git(project, "log", "-1", "--format=%B", "perf/sum")
        assert "perf/sum" not in git(remote, "branch", "--list")  # --branch alone pushes nothing
    finally:
        git(project, "checkout", "-q", "main")


def test_the_pr_body_says_how_candidate_code_ran_and_warns_without_a_sandbox(published, monkeypatch):
    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    assert report.optimization.sandbox.startswith("bubblewrap")
    assert "candidate code ran in: bubblewrap" in github.pr_body(report)
    report.optimization.sandbox = "off (--no-sandbox): candidate code ran with the user's permissions"
    monkeypatch.setenv("HF_TOKEN", "hf_in_a_note_123")
    report.notes.append("a crash said hf_in_a_note_123")
    body = github.pr_body(report)
    assert body.startswith("> **Warning:** this fix was validated with the sandbox off")
    assert "hf_in_a_note_123" not in body and "[redacted HF_TOKEN]" in body


def test_the_pr_and_the_report_say_what_the_re_diagnosis_found(published):
    """The formula asked again of the winner's own run decides the claim, the same sentence in the pull
    request and the Markdown report: "removed" where it finds no such bottleneck; where it still finds one,
    however far the metric moved, "improved, still present" with the severity and the numbers."""
    from intelliperf.delivery.report import report_text

    report = Report.model_validate_json((published["out"] / "report.json").read_text())
    opt = report.optimization
    after = opt.winning_attempt().after
    assert opt.bottleneck_removed is True and after.present is False  # reduce-then-atomic: the reduce form
    removed = "removed: the atomicContention formula finds no such bottleneck in the patched program"
    assert removed in github.pr_body(report) and f"- bottleneck: {removed}" in report_text(report, "markdown")
    opt.bottleneck_removed, after.present, after.severity = False, True, "medium"
    body, markdown = github.pr_body(report), report_text(report, "markdown")
    still = "improved, still present (medium): atomic_updates_per_address 65536 -> 64 atomic updates per address"
    assert still in body and still in markdown and "Bottleneck: removed" not in body
