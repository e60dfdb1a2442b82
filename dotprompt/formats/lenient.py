"""Rewrite almost-JSON into strict JSON, recording every change as a Repair.

Runs only when strict parsing failed, so clean output never pays for it. It reads tokens from
the value's first character to the end of the top-level value and repairs what is safe to repair:
trailing commas, `//` and `/* */` comments, single-quoted strings, unquoted keys, Python's
`True`/`False`/`None`, raw control characters inside strings. Anything else it leaves for
json.loads to reject. It stops early at an unexpected character or a mismatched bracket; the
value is then incomplete and the caller completes it like a truncated one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

from .limits import MAX_NESTING_DEPTH, TooDeepError
from .textpos import LineCursor
from .types import Repair

_TOKEN: Final = re.compile(
    r"""
      (?P<ws>[ \t\r\n]+)
    | (?P<string>"[^"\\]*(?:\\.[^"\\]*)*")
    | (?P<squote>'[^'\\]*(?:\\.[^'\\]*)*')
    | (?P<comment>//[^\n]*|/\*.*?\*/)
    | (?P<punct>[{}\[\]:,])
    | (?P<atom>[\w.+\-$]+)
    | (?P<open_string>"[^"\\]*(?:\\.[^"\\]*)*\\?\Z)
    | (?P<open_squote>'[^'\\]*(?:\\.[^'\\]*)*\\?\Z)
    | (?P<open_comment>/\*.*\Z)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROL: Final = re.compile(r"[\x00-\x1f]")
_SQUOTE_BODY: Final = re.compile(r"\\(.)|\"", re.DOTALL)
_PY_LITERALS: Final = {"True": "true", "False": "false", "None": "null"}
_CLOSERS: Final = {"}": "{", "]": "["}


@dataclass
class Rewrite:
    """Strict JSON text for the value at `start`, and what it took to get there."""

    text: str
    repairs: list[Repair]
    end: int  # offset in the original text just past the value (or where reading stopped)
    complete: bool  # False: the value is truncated; `open_containers` were still open
    open_containers: int = 0
    stopped_by: str | None = None  # the unexpected character that ended reading early
    open_string: bool = False  # the text ended inside a string value: the caller closes it


@dataclass
class _Rewriter:
    source: str
    out: list[str] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    previous: str = ""  # the last significant token: a bracket, `,`, `:`, or "value"
    comma_at: int = -1  # index in `out` of the comma just read, for trailing-comma removal
    value_end: int = -1  # offset just past the last value read
    finished: bool = False
    open_string: bool = False
    lines: LineCursor | None = None

    def note(self, kind: str, detail: str, offset: int) -> None:
        if self.lines is None:
            self.lines = LineCursor(self.source)
        self.repairs.append(Repair(kind, f"{detail} at {self.lines.where(offset)}"))

    def value(self) -> None:
        self.previous = "value"
        self.finished = not self.stack

    def punct(self, char: str, offset: int) -> bool:
        """Handle one bracket, comma or colon; False when it cannot belong here (stop reading)."""
        if char in "{[":
            if len(self.stack) >= MAX_NESTING_DEPTH:
                raise TooDeepError(offset)
            self.stack.append(char)
        elif char in "}]":
            if not self.stack or self.stack[-1] != _CLOSERS[char]:
                return False
            if self.previous == ",":
                self.out[self.comma_at] = ""
                self.note("trailing_comma", f"removed a trailing comma before {char!r}", offset)
            self.stack.pop()
            self.out.append(char)
            self.value()
            return True
        elif char == ",":
            self.comma_at = len(self.out)
        self.out.append(char)
        self.previous = char
        return True

    def atom(self, token: str, offset: int) -> None:
        if self.stack and self.stack[-1] == "{" and self.previous in ("{", ","):
            self.out.append(json.dumps(token))
            self.note("unquoted_key", f"quoted the key {token!r}", offset)
            self.previous = "key"
            return
        if token in _PY_LITERALS:
            self.note("python_literal", f"replaced Python {token} with {_PY_LITERALS[token]}", offset)
            token = _PY_LITERALS[token]
        self.out.append(token)
        self.value()

    def string(self, token: str, offset: int, *, single: bool, closed: bool) -> None:
        if single:
            token = _requote(token, closed=closed)
            self.note("single_quotes", "turned a single-quoted string into a double-quoted one", offset)
        if _CONTROL.search(token):
            token = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", token)
            self.note("control_character", "escaped a raw control character inside a string", offset)
        self.out.append(token)
        if not closed:  # truncated inside the string: the caller completes the value
            self.open_string = not (self.stack and self.stack[-1] == "{" and self.previous in ("{", ","))
            return
        if self.stack and self.stack[-1] == "{" and self.previous in ("{", ","):
            self.previous = "key"
        else:
            self.value()


def _requote(token: str, *, closed: bool) -> str:
    """'it\\'s "x"' -> "it's \\"x\\"": unescape single quotes, escape double quotes."""
    body = token[1:-1] if closed else token[1:]
    body = _SQUOTE_BODY.sub(lambda m: ("'" if m.group(1) == "'" else m.group()) if m.group(1) is not None else '\\"', body)
    return '"' + body + ('"' if closed else "")


def rewrite_json(text: str, start: int, stop: int) -> Rewrite:
    """Strict JSON for the value starting at `start`, reading no further than `stop`."""
    rw = _Rewriter(text)
    pos = start
    while pos < stop and not rw.finished:
        match = _TOKEN.match(text, pos, stop)
        if match is None:  # unreachable: `other` matches any character
            break
        kind, token = match.lastgroup, match.group()
        if kind == "other" or (kind == "punct" and not rw.punct(token, pos)):
            return _truncated(rw, pos, stopped_by=token)
        _dispatch(rw, kind, token, pos)
        pos = match.end()
        if rw.previous == "value" and kind not in ("ws", "comment", "open_comment"):
            rw.value_end = pos
    if rw.finished:
        return Rewrite("".join(rw.out), rw.repairs, pos, True)
    return _truncated(rw, pos, stopped_by=None)


def _truncated(rw: _Rewriter, pos: int, stopped_by: str | None) -> Rewrite:
    if rw.previous == "value" and (stopped_by is not None or pos > rw.value_end):
        # Something followed the last number or word, so it is whole: a comma tells the completer
        # to keep it (it drops a number the text ended in, which may have had more digits).
        rw.out.append(",")
    return Rewrite("".join(rw.out), rw.repairs, pos, False, len(rw.stack), stopped_by, rw.open_string and stopped_by is None)


def _dispatch(rw: _Rewriter, kind: str | None, token: str, pos: int) -> None:
    if kind == "ws":
        rw.out.append(token)
    elif kind in ("comment", "open_comment"):
        rw.out.append(" ")
        rw.note("comment", "removed a comment", pos)
    elif kind == "atom":
        rw.atom(token, pos)
    elif kind in ("string", "squote", "open_string", "open_squote"):
        rw.string(token, pos, single=kind in ("squote", "open_squote"), closed=kind in ("string", "squote"))
