"""Shared by the format tests: generated JSON documents written the many ways a model may write
them, random chunking, and the "snapshots only grow" check."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25,
)
ROOTS = st.lists(VALUES, max_size=6) | st.dictionaries(st.text(max_size=8), VALUES, max_size=6)
PROSE = st.text(alphabet=st.characters(blacklist_characters="{[`"), max_size=30)
FENCES = st.sampled_from(["", "```json\n", "```\n", "``` JSON\n", "Here:\n```json\n"])
TAILS = st.text(max_size=30)
SEEDS = st.integers(min_value=0, max_value=2**32)  # for random.Random: whitespace, escapes, chunk sizes

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f", "/": "\\/"}


class Writer:
    """Serialises a value as valid JSON with random whitespace, escapes and number spellings."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def ws(self) -> str:
        return "".join(self.rng.choice(" \t\n\r") for _ in range(self.rng.choice((0, 0, 0, 1, 2, 5))))

    def dump(self, value: Any) -> str:
        if isinstance(value, dict):
            members = [f"{self.ws()}{self.string(k)}{self.ws()}:{self.ws()}{self.dump(v)}{self.ws()}" for k, v in value.items()]
            return "{" + (",".join(members) or self.ws()) + "}"
        if isinstance(value, list):
            return "[" + (",".join(self.ws() + self.dump(v) + self.ws() for v in value) or self.ws()) + "]"
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, bool) or value is None:
            return json.dumps(value)
        if isinstance(value, int):
            return self.rng.choice((str(value), str(value), f"{value}.0", f"{value}e0", f"{value}E+2"))
        text = json.dumps(value)
        return text.replace("e", "E") if self.rng.random() < 0.3 else text

    def string(self, text: str) -> str:
        return '"' + "".join(self.char(ch) for ch in text) + '"'

    def char(self, ch: str) -> str:
        if ch not in _SHORT_ESCAPES and ord(ch) >= 0x20 and self.rng.random() < 0.8:
            return ch
        if ch in _SHORT_ESCAPES and self.rng.random() < 0.5:
            return _SHORT_ESCAPES[ch]
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            return self.hex(0xD800 + (code >> 10)) + self.hex(0xDC00 + (code & 0x3FF))
        return self.hex(code)

    def hex(self, code: int) -> str:
        digits = f"{code:04x}"
        return "\\u" + (digits.upper() if self.rng.random() < 0.5 else digits)


def split(text: str, rng: random.Random) -> Iterator[str]:
    """Chunks of random sizes, mostly small, sometimes empty or large."""
    pos = 0
    while pos < len(text):
        size = rng.choice((0, 1, 1, 2, 3, 5, 8, 13, 40))
        yield text[pos : pos + size]
        pos += size


def assert_grows(before: Any, after: Any, path: str = "$") -> None:
    """`after` only extends `before`: entries other than the last (the only one that can be open)
    are equal, the last one grows, strings only extend, scalars never change."""
    if before is None and path == "$":
        return
    if isinstance(before, dict):
        assert isinstance(after, dict), path
        keys = list(before)
        assert list(after)[: len(keys)] == keys, f"{path}: keys changed"
        for key in keys[:-1]:
            assert after[key] == before[key], f"{path}.{key}: a complete member changed"
        if keys:
            assert_grows(before[keys[-1]], after[keys[-1]], f"{path}.{keys[-1]}")
    elif isinstance(before, list):
        assert isinstance(after, list), path
        assert len(after) >= len(before), f"{path}: items lost"
        complete = max(len(before) - 1, 0)
        assert after[:complete] == before[:complete], f"{path}: a complete item changed"
        if before:
            assert_grows(before[-1], after[len(before) - 1], f"{path}[{len(before) - 1}]")
    elif isinstance(before, str):
        assert isinstance(after, str) and after.startswith(before), f"{path}: {before!r} -> {after!r}"
    else:
        assert type(after) is type(before) and after == before, f"{path}: {before!r} -> {after!r}"
