"""Loopback stand-ins for the machine's edges, for tests and demos: an OpenAI-compatible model
server and a GitHub API. Its modules are the API."""

__all__ = [
    "github_api",
    "loopback",
    "openai_server",
]
