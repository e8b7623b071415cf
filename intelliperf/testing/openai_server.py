"""A loopback OpenAI-compatible server with scripted answers, for tests and CI dry runs.

    with ScriptedServer([Reply(content="..."), Reply(status=429), Reply(delay_s=5)]) as server:
        ... point the client at server.url (".../v1") ...
        server.requests  # every chat-completion request body received, in order

It speaks the subset the `llm` rewriter uses: `POST /v1/chat/completions` (non-streaming) and
`GET /v1/models`. Each chat request takes the next scripted reply; when the script is used
up it answers 500, so a test that asks more than it scripted fails loudly.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler

from .loopback import LoopbackServer


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0  # sleep before answering (a client timeout shorter than this sees a timeout)
    headers: dict = field(default_factory=dict)
    prompt_tokens: int = 100
    completion_tokens: int = 50


class ScriptedServer(LoopbackServer):
    def __init__(self, replies: list[Reply], model: str = "scripted-model") -> None:
        self.replies = list(replies)
        self.model = model
        self.requests: list[dict] = []
        self.headers: list[Message] = []  # each request's, looked up by name in any case (as HTTP has them)
        super().__init__(self._handler())

    @property
    def url(self) -> str:
        return self.root + "/v1"

    def prompts(self) -> list[str]:
        """The text of every request's messages, one string per request."""
        return ["\n".join(str(m.get("content", "")) for m in r.get("messages", [])) for r in self.requests]

    def _next(self, body: dict, headers: Message) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self.replies.pop(0) if self.replies else Reply(status=500, content="script used up")

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server._next(body, self.headers)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    self._send(
                        reply.status,
                        {
                            "error": {
                                "message": reply.content or f"status {reply.status}",
                                "type": "scripted",
                                "code": reply.status,
                            }
                        },
                        reply.headers,
                    )
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", server.model),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply.content},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    },
                    reply.headers,
                )

        return Handler
