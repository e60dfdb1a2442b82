"""The commonest JSONL line, read with one pattern match per member: a flat object of plain members.

`{a: 1, "b": "x", c: true}`: each key a strict string or a bare word, each value a strict string
without escapes or control characters, a short number (no exponent: never too big for a float),
`true`, `false` or `null`. A reply of such lines costs the general readers a fixed setup per line
(a lenient rewrite with its repair log, then json.loads; a streaming parser), far more than the
line itself. For these lines the lenient reader (`lenient.py`) and the streaming parser
(`incremental.py`) both give exactly the value read here, and the lenient reader one
`unquoted_key` repair per bare key (tests hold all three to it). Any other line is read the
general way.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["FlatObject", "read_flat_object"]

_WS: Final = r"[ \t\r]*+"
_OPEN: Final = re.compile(r"\{[ \t\r]*+(\}?)")
# One member and what follows it, `,` or the closing `}`. Groups: quoted key, bare key, value, follower.
# A value must be followed by blanks and one of those: `1.5e3`, `truex` or `01` is not a value here.
_MEMBER: Final = re.compile(
    r'(?:"([^"\\\x00-\x1f]*+)"|([\w$]++))' + _WS + ":" + _WS
    + r'("[^"\\\x00-\x1f]*+"|-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,16})?+|true|false|null)'
    + _WS + r"([,}])" + _WS
)
_WORDS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}

# The object's value, (offset, key) of each unquoted key in order, and the offset just past its `}`.
FlatObject = tuple[dict[str, Any], list[tuple[int, str]], int]


def read_flat_object(text: str, start: int = 0, stop: int | None = None) -> FlatObject | None:
    """The flat object starting at `start` (its `{`) and closing before `stop`; None when the text
    there is anything else (the caller reads it the general way)."""
    if stop is None:
        stop = len(text)
    opened = _OPEN.match(text, start, stop)
    if opened is None:
        return None
    value: dict[str, Any] = {}
    bare: list[tuple[int, str]] = []
    if opened.group(1):
        return value, bare, opened.end()
    pos = opened.end()
    member = _MEMBER.match
    while (found := member(text, pos, stop)) is not None:
        quoted, key, raw, follower = found.groups()
        if quoted is not None:
            key = quoted
        else:
            bare.append((found.start(2), key))
        first = raw[0]
        if first == '"':
            value[key] = raw[1:-1]
        elif first == "t" or first == "f" or first == "n":
            value[key] = _WORDS[raw]
        else:
            value[key] = float(raw) if "." in raw else int(raw)
        if follower == "}":
            return value, bare, found.end(4)
        pos = found.end()
    return None
