"""Running the user's program: the runner, the sandbox, the workspace, device pinning, head
starts and definitions-only loading. Its modules are the API."""

__all__ = [
    "definitions",
    "devices",
    "head_start",
    "runner",
    "sandbox",
    "workspace",
]
