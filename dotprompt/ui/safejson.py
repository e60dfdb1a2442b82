"""Every answer of the API: JSON that is redacted, bounded, and inert as HTML.

Values come from prompt files, inputs, model replies and the run log, any of which may be hostile.
Each string passes through the package's redaction (no API key or URL credential leaves the server);
values deeper than MAX_DEPTH, strings longer than MAX_STRING and containers longer than MAX_ITEMS are
cut with a note saying so (a huge reply must not freeze the page, a deep one must not overflow the
JSON encoder); `<`, `>` and `&` are written as `\\u003c` and so on, so no answer is markup even to a
browser that ignored its content type.
"""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.responses import Response

from .._util.redact import known_secrets, redact
from .limits import UI_MAX_DEPTH as MAX_DEPTH
from .limits import UI_MAX_ITEMS as MAX_ITEMS
from .limits import UI_MAX_STRING as MAX_STRING

__all__ = ["CUT", "MAX_DEPTH", "MAX_ITEMS", "MAX_STRING", "SafeJSON", "clean", "dumps"]

CUT = "… [cut by the workbench: {} not shown]"


def clean(value: Any, secrets: list[str] | None = None) -> Any:
    """`value` as plain JSON data: redacted and cut to the bounds above."""
    return _clean(value, known_secrets() if secrets is None else secrets, 0)


def _clean(value: Any, secrets: list[str], depth: int) -> Any:
    if isinstance(value, str):
        return _string(value, secrets)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN or infinity
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_DEPTH:
        return f"[deeper than {MAX_DEPTH} levels: not shown]"
    if isinstance(value, dict):
        items = list(value.items())
        out = {_string(str(k), secrets): _clean(v, secrets, depth + 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["…"] = CUT.format(f"{len(items) - MAX_ITEMS:,} more keys")
        return out
    if isinstance(value, list | tuple):
        out_list = [_clean(v, secrets, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            out_list.append(CUT.format(f"{len(value) - MAX_ITEMS:,} more items"))
        return out_list
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return _clean(dump(mode="json", by_alias=True, exclude_none=True), secrets, depth)
    return _string(str(value), secrets)


def _string(text: str, secrets: list[str]) -> str:
    text = redact(text, secrets)
    if len(text) > MAX_STRING:
        return text[:MAX_STRING] + CUT.format(f"{len(text) - MAX_STRING:,} more characters")
    return text


def dumps(value: Any, secrets: list[str] | None = None) -> str:
    """Cleaned JSON text with the HTML-significant characters escaped."""
    text = json.dumps(clean(value, secrets), ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class SafeJSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")
