"""Secrets, by name and by value: which variables no program run gets, and `scrub` for every text
intelliperf writes or sends.

A variable is a secret when its name says so (KEY, TOKEN, PASSWORD, ...), when it is named by
--api-key-env, or when its value looks like one whatever its name: a URL carrying a password, a
token with a known provider prefix, a private key, a JWT, or a long random-looking string. Every
other variable reaches the program as the user set it, in the profile and in every sandboxed run
alike, so a program configured by its environment runs the same workload everywhere.

Output tails, reports, transcripts, prompts and PR bodies have the values of secrets replaced by
`[redacted NAME]`. Standard library only.
"""

from __future__ import annotations

import os
import re

# A name with one of these words is a secret.
SECRET_WORDS = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION", re.IGNORECASE)
# Not secrets but capabilities: a socket path that hands the program the user's agents.
CAPABILITY_NAMES = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"})
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s@:]*:[^/\s@]+@", re.IGNORECASE)
_TOKEN_PREFIX = re.compile(
    r"^(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abprs]-|AKIA|ASIA|AIza|hf_|"
    r"npm_|pypi-|dop_v1_|SG\.)[A-Za-z0-9_\-.]{8,}"
)
_JWT = re.compile(r"^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.")
_OPAQUE = re.compile(r"^[A-Za-z0-9+/=_\-]{32,}$")  # one long word of token characters
PATH_STARTS = ("/", "./", "../", "~")
MIN_LENGTH = 6  # shorter values ("1", "true") would redact ordinary words
_named: set[str] = set()


def looks_secret(name: str) -> bool:
    return bool(SECRET_WORDS.search(name))


def looks_secret_value(value: str) -> bool:
    """A value that is a credential whatever the variable is called. A long random-looking word counts
    only with upper case, lower case and digits mixed (a hex digest does not) and not where it is a path
    (`/tmp/run-3/v-True/candidate`: a folder intelliperf or the program passes on)."""
    value = value.strip()
    if _URL_PASSWORD.search(value) or "-----BEGIN" in value:
        return True
    if _TOKEN_PREFIX.match(value) or _JWT.match(value):
        return True
    return bool(
        _OPAQUE.match(value)
        and not value.startswith(PATH_STARTS)  # a path's characters are a token's too
        and re.search(r"[a-z]", value)
        and re.search(r"[A-Z]", value)
        and re.search(r"[0-9]", value)
    )


def also(*names: str | None) -> None:
    """Treat these variables as secrets too (e.g. the one --api-key-env names)."""
    _named.update(n for n in names if n)


def _secret_by_name(name: str, deny: tuple[str, ...]) -> bool:
    return name in deny or name in _named or looks_secret(name)


def is_secret(name: str, value: str = "", deny: tuple[str, ...] = ()) -> bool:
    """Whether no program run may see this variable."""
    return _secret_by_name(name, deny) or name in CAPABILITY_NAMES or looks_secret_value(value)


def without_secrets(env: dict[str, str], deny: tuple[str, ...] = (), keep: tuple[str, ...] = ()) -> dict[str, str]:
    """`env` minus its secrets; `keep` (--sandbox-env) passes a variable whose value only looks like one,
    never one whose name says it is a secret or one named in `deny`."""

    def passes(name: str, value: str) -> bool:
        if name in keep and not _secret_by_name(name, deny):
            return True
        return not is_secret(name, value, deny)

    return {k: v for k, v in env.items() if passes(k, v)}


def secret_values(env: dict[str, str] | None = None) -> dict[str, str]:
    """{value: name} of the secrets in `env` (default: this process's environment), longest first."""
    names = os.environ if env is None else env
    found = {v: k for k, v in names.items() if is_secret(k, v) and len(v.strip()) >= MIN_LENGTH}
    found.update(_credentials(names))
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def _credentials(env) -> dict[str, str]:
    """The password inside a URL-valued variable, so an error message quoting it redacts it too."""
    out = {}
    for name, value in env.items():
        for match in _URL_PASSWORD.finditer(value):
            password = match.group(0).rsplit(":", 1)[-1].rstrip("@")
            if len(password) >= MIN_LENGTH:
                out[password] = name
    return out


def scrub(text: str, env: dict[str, str] | None = None) -> str:
    for value, name in secret_values(env).items():
        if value in text:
            text = text.replace(value, f"[redacted {name}]")
    return text
