"""Redaction of secrets from anything we print, store or raise: one function, `redact`.

It knows every API key a provider was configured with (`remember_secret`, called when a model is
built), the values of the well-known key variables in the environment, and the credentials of a
URL (`https://user:password@host`). Errors, batch output, test reports and recordings pass their
text through it. It imports only its neighbour `escape`, so any module can use it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from typing import Any

from .escape import json_dumps

# Variables whose values are keys whatever their name says; plus any *_API_KEY / *_TOKEN / *_SECRET.
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
            "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "HF_TOKEN")
_KEY_NAME = re.compile(r"(?:API_KEY|_TOKEN|_SECRET|_PASSWORD)$", re.IGNORECASE)
MIN_SECRET = 8  # shorter values would blank out ordinary words and numbers, and are not real keys anyway
MASK = "***"
# scheme://user:password@host or scheme://token@host: everything between `//` and `@` is a credential.
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^\s/@?#]+)@")

_secrets: set[str] = set()
_lock = threading.Lock()


def remember_secret(value: str | None) -> None:
    """Redact `value` from now on (an API key, a header value, a URL password); short values are ignored."""
    if value and len(value) >= MIN_SECRET:
        with _lock:
            _secrets.add(value)


def known_secrets() -> list[str]:
    """Every secret to hide now, longest first, so a key containing another is masked whole."""
    found = set(_secrets)
    for name, value in os.environ.items():
        if (name in KEY_VARS or _KEY_NAME.search(name)) and len(value) >= MIN_SECRET:
            found.add(value)
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every known secret and every URL credential replaced by `***`."""
    if not text:
        return text
    for secret in known_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    return text


def redact_data(value: Any, secrets: list[str] | None = None) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with `redact` applied to every string in it."""
    secrets = known_secrets() if secrets is None else secrets  # read the environment once, not per string
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_data(v, secrets) for v in value)
    return value


@functools.lru_cache(maxsize=256)
def _changed_by_json(secret: str) -> bool:
    """Whether JSON writes `secret` escaped (a quote, a backslash, a control character)."""
    return json.dumps(secret, ensure_ascii=False)[1:-1] != secret


def redacted_json(value: Any, secrets: list[str] | None = None, **options: Any) -> str:
    """`value` as JSON with every secret masked first: masked after encoding, a secret holding `"` or
    `\\` is written escaped and never matches. Objects JSON cannot hold are written as their redacted `str`."""
    secrets = known_secrets() if secrets is None else secrets
    if not any(map(_changed_by_json, secrets)):
        # The usual case, and 4x cheaper: a secret JSON writes verbatim is masked as well in the text.
        return redact(json_dumps(value, default=str, **options), secrets)
    try:
        masked = redact_data(value, secrets)
    except RecursionError:  # a circular value: json.dumps would raise ValueError, and callers expect that
        raise ValueError("the value is circular or nested too deeply to write as JSON") from None
    return json_dumps(masked, default=lambda o: redact(str(o), secrets), **options)


def unmasked_json(value: Any, secrets: list[str]) -> str | None:
    """`value`'s JSON (as `redacted_json` writes it) when nothing in it needs masking, else None (then
    mask it with `redact_data` / `redacted_json`). One encoding instead of a walk and an encoding: a
    string holding a secret holds it verbatim in the JSON too (a secret JSON would escape is never
    vouched for here), and URL credentials need an `@`, which JSON never escapes."""
    if any(map(_changed_by_json, secrets)):
        return None
    try:
        text = json_dumps(value, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    if "@" in text or any(secret in text for secret in secrets):
        return None
    return text


def url_credentials(url: str) -> list[str]:
    """The user and password of a URL's userinfo, to remember as secrets."""
    match = _USERINFO.search(url)
    if not match:
        return []
    user, _, password = match["userinfo"].partition(":")
    return [part for part in (password, user) if part]


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_ENDS_USERINFO = frozenset("/@?#")


def unsafe_tail(text: str, secrets: list[str] | None = None) -> int:
    """How many characters at the end of `text` (already redacted) could be the start of a secret that
    the next piece of a stream completes: the longest end that begins a known secret, or a URL whose
    credentials may follow. A stream holds them back until the next piece shows what they are."""
    secrets = known_secrets() if secrets is None else secrets
    held = _open_url(text)
    for secret in secrets:
        first = secret[0]
        start = max(len(text) - len(secret) + 1, 0)
        while (start := text.find(first, start)) != -1 and len(text) - start > held:
            if secret.startswith(text[start:]):
                held = len(text) - start
                break
            start += 1
    return held


def _open_url(text: str) -> int:
    """The end of `text` that a URL's credentials could still complete (`redact` masks `scheme://user:pw@`
    only when it sees it whole): an open `scheme://userinfo`, or a scheme that `://` may follow (from
    its last letter, which is all the pattern needs to see)."""
    window = text[-4096:]
    at = window.rfind("://")
    if at != -1 and not any(c in _ENDS_USERINFO or c.isspace() for c in window[at + 3:]):
        start = at
        while start > 0 and window[start - 1] in _SCHEME_CHARS:
            start -= 1
        return len(window) - start
    end = len(text) - (2 if text.endswith(":/") else 1 if text.endswith(":") else 0)
    for position in range(end - 1, max(end - 64, -1), -1):
        if text[position] not in _SCHEME_CHARS:
            return 0
        if text[position].isalpha():
            return len(text) - position
    return 0
