"""The pull request: its body (the evidence) and the few GitHub REST calls that open or update it.

Only the standard library: the API base is configurable (GitHub Enterprise: https://HOST/api/v3),
the token comes from GITHUB_TOKEN / GH_TOKEN and appears in no message, report or log.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Literal

from ..errors import UsageError
from ..models import Report
from ..redact import scrub
from .report import bottleneck_claim, format_time, measure_text, speedup_text

DEFAULT_API = "https://api.github.com"
BODY_LIMIT = 65_536  # characters GitHub accepts in a pull request body
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")


def token_from_env() -> str | None:
    return next((os.environ[v] for v in TOKEN_VARIABLES if os.environ.get(v)), None)


def repo_from_url(url: str) -> str | None:
    """owner/name from a GitHub remote URL (https, ssh or scp form); None for anything else."""
    m = re.match(r"^(?:https?://[^/]+/|ssh://git@[^/]+/|git@[^:]+:)([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    return f"{m[1]}/{m[2]}" if m else None


@dataclass
class PullRequest:
    number: int
    url: str
    action: Literal["created", "updated"]


class GitHub:
    def __init__(self, api: str, token: str, repo: str, timeout_s: float = 30) -> None:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise UsageError(f"--github-repo {repo!r} is not OWNER/NAME", hint="e.g. --github-repo octo/kernels")
        self.api, self.token, self.repo, self.timeout_s = api.rstrip("/"), token, repo, timeout_s

    def call(self, method: str, path: str, body: dict | None = None):
        request = urllib.request.Request(
            f"{self.api}{path}",
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
                "User-Agent": "intelliperf",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500].replace(self.token, "***")
            hint = {
                401: "Check the token in GITHUB_TOKEN / GH_TOKEN.",
                403: "The token needs the pull-requests: write and contents: write permissions.",
                404: "Check --github-repo and --github-api (GitHub Enterprise: https://HOST/api/v3).",
            }
            raise UsageError(
                f"GitHub API {method} {path} answered {exc.code}: {detail}", hint=hint.get(exc.code, "")
            ) from None
        except (urllib.error.URLError, TimeoutError) as exc:
            raise UsageError(
                f"cannot reach the GitHub API at {self.api}: {getattr(exc, 'reason', exc)}",
                hint="Check --github-api and the network.",
            ) from None

    def check_access(self) -> None:
        """Before the run: the API answers, the token is good, and it may push to the repository
        (GitHub says so for user tokens; an app's token, as in a workflow, gets no `permissions`)."""
        found = self.call("GET", f"/repos/{self.repo}") or {}
        if (found.get("permissions") or {}).get("push") is False:
            raise UsageError(
                f"the token in GITHUB_TOKEN / GH_TOKEN cannot push to {self.repo}",
                hint="It needs the contents: write and pull-requests: write permissions.",
            )

    def open_or_update(self, branch: str, base: str, title: str, body: str, labels: list[str]) -> PullRequest:
        """One pull request per branch: update the open one if there is one, else open it."""
        owner = self.repo.split("/")[0]
        found = self.call("GET", f"/repos/{self.repo}/pulls?state=open&head={owner}:{branch}") or []
        if found:
            number = found[0]["number"]
            pr = self.call("PATCH", f"/repos/{self.repo}/pulls/{number}", {"title": title, "body": body})
            action: Literal["created", "updated"] = "updated"
        else:
            pr = self.call(
                "POST", f"/repos/{self.repo}/pulls", {"title": title, "body": body, "head": branch, "base": base}
            )
            action = "created"
        if labels:
            self.call("POST", f"/repos/{self.repo}/issues/{pr['number']}/labels", {"labels": labels})
        return PullRequest(number=pr["number"], url=pr["html_url"], action=action)


def pr_title(report: Report) -> str:
    opt = report.won()
    faster = f", {opt.speedup.estimate:.2f}x faster" if opt.speedup else ""
    return f"intelliperf: {opt.formula or report.formula} fix for {opt.kernel}{faster}"


def pr_body(report: Report) -> str:
    """What a reviewer needs: the bottleneck, the measured result, how correctness was checked."""
    opt = report.won()
    attempt = opt.winning_attempt()
    formula = opt.formula or report.formula
    present = [f for f in report.diagnosis(opt.kernel).findings if f.present]
    finding = next((f for f in present if f.formula == formula), present[0])
    out = [f"## `{opt.kernel}`: {formula}", "", finding.explanation, ""]
    out += [f"- `{line.file}:{line.line}` `{line.code.strip()}`: {line.detail}" for line in finding.lines[:10]]
    metric = f"`{finding.metric.name}` ({finding.metric.better} is better)" if finding.metric else "metric"
    modelled = attempt.after and attempt.after.metric_modelled
    own = ""
    if attempt.after and attempt.after.metric_source != "profile":
        own = " (after: in the candidate's own process)"
    out += [
        "",
        "## Result",
        "",
        "| | before → after |",
        "|---|---|",
        f"| {metric}{' — modelled' if modelled else ''}{own} | "
        f"{measure_text(attempt.before, attempt.after, 'metric')} |",
        f"| kernel time | {measure_text(attempt.before, attempt.after, 'kernel_time_s')} |",
        f"| speedup ({int((opt.speedup.confidence if opt.speedup else 0.95) * 100)} % interval) | "
        f"{speedup_text(opt.speedup)} |",
        "",
        f"Bottleneck: {bottleneck_claim(opt)}.",
        "",
        f"Timing: {opt.speedup.method if opt.speedup else 'not measured (no GPU)'}; device "
        f"{opt.hardware.get('device', '?')}; Triton {report.run.versions.get('triton', '?')}, torch "
        f"{report.run.versions.get('torch', '?')}.",
        "",
        "## Correctness",
        "",
    ]
    out += [f"- {c}" for c in (attempt.verdict.checks if attempt.verdict else [])] or ["- (no checks recorded)"]
    out += [
        "",
        "## How it was found",
        "",
        f"- rewriter `{attempt.rewriter}`, attempt {attempt.number} of {len(opt.attempts)}: {attempt.title}",
        f"- command: `{' '.join(report.run.command)}`",
        f"- baseline kernel time {format_time(opt.baseline.kernel_time_s) if opt.baseline.kernel_time_s else '?'} "
        f"({opt.baseline.time_source})",
        f"- candidate code ran in: {opt.sandbox or 'a sandbox'}",
        "- the change itself is this pull request's diff",
        "",
    ]
    if opt.sandbox and opt.sandbox.startswith("off"):
        out = [
            "> **Warning:** this fix was validated with the sandbox off (`--no-sandbox`): candidate code ran with "
            "the permissions of the run.",
            "",
            *out,
        ]
    return scrub(_with_report(out, report))


def _with_report(out: list[str], report: Report) -> str:
    head = "\n".join(out)
    data = report.model_dump_json(indent=1)
    wrap = "<details><summary>Full intelliperf report (JSON)</summary>\n\n```json\n{}\n```\n{}</details>\n"
    room = BODY_LIMIT - len(head) - len(wrap) - 200
    note = ""
    if len(data) > room:
        data = data[: max(room, 0)]
        note = (
            f"\n_Truncated to GitHub's {BODY_LIMIT:,}-character limit; the full report.json is in the run's "
            "output folder (or the workflow's artifacts)._\n"
        )
    return head + "\n" + wrap.format(data, note)
