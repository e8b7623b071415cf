"""What leaves a run: the console, report files, SARIF, the winner patch, git branches and pull
requests. Its modules are the API; the package re-exports nothing."""

__all__ = [
    "console",
    "git",
    "github",
    "publish",
    "report",
    "sarif",
]
