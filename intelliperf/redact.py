"""Secrets by value: every text intelliperf writes or sends passes through `scrub`.

Candidate code never sees a secret (the sandbox's environment is an allow-list), but the
user's own program, a crash message or a model's answer can still carry one. So output tails,
reports, transcripts, prompts and PR bodies have the values of secret-looking variables (and
of the variable named by --api-key-env) replaced by `[redacted NAME]`. Standard library only.
"""

from __future__ import annotations

import os
import re

# A name with one of these words is a secret (the sandbox's allow-list never passes one either).
SECRET_WORDS = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION", re.IGNORECASE)
MIN_LENGTH = 6  # shorter values ("1", "true") would redact ordinary words
_named: set[str] = set()


def looks_secret(name: str) -> bool:
    return bool(SECRET_WORDS.search(name))


def also(*names: str | None) -> None:
    """Treat these variables as secrets too (e.g. the one --api-key-env names)."""
    _named.update(n for n in names if n)


def secret_values(env: dict[str, str] | None = None) -> dict[str, str]:
    """{value: name} of the secrets in `env` (default: this process's environment), longest first."""
    names = os.environ if env is None else env
    found = {v: k for k, v in names.items() if (k in _named or looks_secret(k)) and len(v.strip()) >= MIN_LENGTH}
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def scrub(text: str, env: dict[str, str] | None = None) -> str:
    for value, name in secret_values(env).items():
        if value in text:
            text = text.replace(value, f"[redacted {name}]")
    return text
