"""Media URLs as providers need them."""

from __future__ import annotations

import base64
from urllib.parse import unquote_to_bytes

from ..errors import UsageError


def parse_data_url(url: str) -> tuple[str, str]:
    """(media type, base64 payload) of a `data:` URL."""
    header, comma, payload = url[len("data:"):].partition(",")
    if not comma:
        raise UsageError(f"media URL {url[:60]!r} is not a valid data: URL (expected data:<type>;base64,<data>)")
    params = header.split(";")
    if "base64" in params[1:]:
        return params[0] or "application/octet-stream", payload
    return params[0] or "text/plain", base64.b64encode(unquote_to_bytes(payload)).decode("ascii")
