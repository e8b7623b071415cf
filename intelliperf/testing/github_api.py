"""A loopback server that speaks the part of GitHub's REST API that --create-pr uses, for tests and
dry runs of the Action:

    with FakeGitHub("octo/kernels", token="t0ken") as api:
        ... intelliperf optimize --create-pr --github-api {api.url} ...
        api.requests  # (method, path, headers, body) of every call, in order
        api.pulls     # number -> the pull request as stored

Routes: GET /repos/O/R (with the token's `permissions`), GET /repos/O/R/pulls?state=open&head=O:BRANCH,
POST /repos/O/R/pulls, PATCH /repos/O/R/pulls/N, POST /repos/O/R/issues/N/labels. A wrong token answers 401, an
unknown repository or route 404, a second open PR for one head 422 (as GitHub does).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from .loopback import LoopbackServer


@dataclass
class Request:
    method: str
    path: str
    headers: Message  # looked up by name in any case, as HTTP has them
    body: dict | None


class FakeGitHub(LoopbackServer):
    def __init__(self, repo: str, token: str, push: bool = True) -> None:
        self.repo, self.token, self.push = repo, token, push  # push: what GET /repos/O/R says the token may
        self.requests: list[Request] = []
        self.pulls: dict[int, dict] = {}
        super().__init__(self._handler())

    @property
    def url(self) -> str:
        return self.root

    def answer(self, method: str, path: str, body: dict | None) -> tuple[int, object]:
        body = body or {}
        url = urlsplit(path)
        base = f"/repos/{self.repo}"
        if method == "GET" and url.path.rstrip("/") == base:
            return 200, {"full_name": self.repo, "permissions": {"pull": True, "push": self.push}}
        if not url.path.startswith(base + "/"):
            return 404, {"message": "Not Found"}
        route = url.path[len(base) :]
        if method == "GET" and route == "/pulls":
            query = parse_qs(url.query)
            head = query.get("head", [""])[0].split(":")[-1]
            state = query.get("state", ["open"])[0]
            return 200, [p for p in self.pulls.values() if p["head"]["ref"] == head and p["state"] == state]
        if method == "POST" and route == "/pulls":
            if any(p["head"]["ref"] == body["head"] and p["state"] == "open" for p in self.pulls.values()):
                return 422, {"message": "Validation Failed", "errors": [{"message": "A pull request already exists"}]}
            number = len(self.pulls) + 1
            self.pulls[number] = {
                "number": number,
                "state": "open",
                "title": body["title"],
                "body": body["body"],
                "head": {"ref": body["head"]},
                "base": {"ref": body["base"]},
                "labels": [],
                "html_url": f"https://github.example/{self.repo}/pull/{number}",
            }
            return 201, self.pulls[number]
        if m := re.fullmatch(r"/pulls/(\d+)", route):
            pr = self.pulls.get(int(m[1]))
            if method != "PATCH" or pr is None:
                return 404, {"message": "Not Found"}
            pr.update({k: body[k] for k in ("title", "body", "state") if k in body})
            return 200, pr
        if (m := re.fullmatch(r"/issues/(\d+)/labels", route)) and method == "POST" and int(m[1]) in self.pulls:
            pr = self.pulls[int(m[1])]
            pr["labels"] = sorted({*pr["labels"], *body["labels"]})
            return 200, [{"name": n} for n in pr["labels"]]
        return 404, {"message": f"no route {method} {url.path}"}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                with server._lock:
                    server.requests.append(Request(self.command, self.path, self.headers, body))
                    if self.headers.get("Authorization") != f"Bearer {server.token}":
                        status, payload = 401, {"message": "Bad credentials"}
                    else:
                        status, payload = server.answer(self.command, self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _serve

        return Handler
