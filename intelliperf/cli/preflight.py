"""Checks made before anything runs, so that a mistake costs seconds and leaves nothing behind:
every place an output goes can be written, and the model endpoint the run will call answers.
Standard library only.
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import ModelError, UsageError

CONNECT_TIMEOUT_S = 5.0  # one try: a server that is up accepts a connection in milliseconds


def is_stdout(path: str | os.PathLike) -> bool:
    """`-`, or a name of the file our stdout already is (/dev/stdout, /dev/fd/1, `> FILE`'s FILE)."""
    if os.fspath(path) == "-":
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except OSError:
        return False


def is_stream(path: str | os.PathLike) -> bool:
    """Stdout, or an existing FIFO, device or socket: written in place, once, never replaced."""
    if is_stdout(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # nothing there yet
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_output(option: str, path: str | os.PathLike | None, *, folder: bool = False) -> None:
    """Refuse an output location that cannot be written, before the run instead of after it. Missing
    folders are created on the way (as the reports do), so the nearest existing one is what must take
    a new file; it is tried with a file that vanishes at once (permission bits say nothing to root,
    and nothing about a read-only mount)."""
    if path is None or is_stream(path):
        return
    given = os.fspath(path)
    if folder and os.path.exists(given) and not os.path.isdir(given):
        raise UsageError(f"{option} {given} is a file; it takes a folder (created if missing)")
    if not folder and os.path.isdir(given):
        raise UsageError(
            f"{option} {given} is a folder; it takes a file name",
            hint=f"Pass a file path, e.g. {option} {Path(given) / 'report.json'}.",
        )
    # A file is replaced from beside where it really is (a link's target), so that folder must take files.
    place = given if folder else os.path.dirname(os.path.realpath(given))
    existing = os.path.abspath(place)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(
            f"{option} {given} cannot be created: {existing} is a file, not a folder",
            hint=f"Pick another path for {option}.",
        )
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise UsageError(
            f"{option} {given} cannot be written: {existing}: {exc.strerror or exc}",
            hint=f"Pick a folder you can write to for {option}.",
        ) from None


def check_model_endpoint(api_base: str) -> None:
    """One TCP connection to the model endpoint (or to the proxy that reaches it), so that a wrong
    --api-base fails in seconds, before the profile, instead of after it and its retries."""
    url = urlsplit(api_base)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UsageError(
            f"--api-base {api_base!r} is not an http(s) URL", hint="e.g. --api-base http://localhost:8000/v1"
        )
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(url.scheme)
    via = ""
    if proxy and not urllib.request.proxy_bypass(host):
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        host, port, via = parts.hostname or host, parts.port or 80, f" through the proxy {parts.hostname}"
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ModelError(
            f"cannot reach the model endpoint {api_base}{via}: {exc.strerror or exc}",
            hint="Check --api-base (or INTELLIPERF_API_BASE) and that the server is up; nothing was run.",
        ) from None
