"""Rewrite almost-JSON into strict JSON, recording every change as a Repair.

Runs only when strict parsing failed, so clean output never pays for it. It reads tokens from
the value's first character to the end of the top-level value and repairs what is safe to repair:
trailing commas, `//` and `/* */` comments, single-quoted strings, unquoted keys, Python's
`True`/`False`/`None`, raw control characters inside strings. Anything else it leaves for
json.loads to reject. It stops early at an unexpected character or a mismatched bracket; the
value is then incomplete and the caller completes it like a truncated one.

The reader is one loop over one token pattern (each token carries the whitespace before it), so
a megabyte of hostile text is about a million cheap steps. Repairs are logged as (kind, offset,
argument) and only the first MAX_REPORTED_REPAIRS become messages; past them a kind is counted,
and reported as one summary Repair with the count and the first position (`RepairLog`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from ..base import Repair
from .limits import MAX_NESTING_DEPTH, MAX_REPORTED_REPAIRS, TooDeepError
from .textpos import LineCursor

__all__ = ["RepairLog", "Rewrite", "one_kind_repairs", "rewrite_json"]

# A strict string with no raw control character, and a strict number or word: what a container
# may hold for the reader to take it whole.
_STRICT_STRING: Final = r'"[^"\\\x00-\x1f]*+(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*+)*+"'
_SCALAR: Final = (_STRICT_STRING + r"|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?(?![\w.+\-$])"
                  r"|(?:true|false|null)(?![\w.+\-$])")
# The `,` or `:` that follows a value or key, taken with it: half the tokens of `[1, 2, 3]`. Each
# kind's group holds the token with its follower, and the group after it (`<kind>_body`) the token alone.
_FOLLOWER: Final = r"(?:[ \t\r\n]*+[,:])?"
_TOKEN: Final = re.compile(
    r"""
    [ \t\r\n]*
    (?:
      (?P<string>(?P<string_body>"[^"\\]*(?:\\.[^"\\]*)*")FOLLOWER)
    | (?P<flat>(?P<flat_body>  # a container of strict scalars only, maybe with a trailing comma: one token, not dozens
        \[[ \t\r\n]*+(?:(?:SCALAR)[ \t\r\n]*+,[ \t\r\n]*+)*+(?:(?:SCALAR)[ \t\r\n]*+)?\]
      | \{[ \t\r\n]*+(?:STRING[ \t\r\n]*+:[ \t\r\n]*+(?:SCALAR)[ \t\r\n]*+,[ \t\r\n]*+)*+
           (?:STRING[ \t\r\n]*+:[ \t\r\n]*+(?:SCALAR)[ \t\r\n]*+)?\}
      )FOLLOWER)
    | (?P<trailing>,[ \t\r\n]*[}\]])
    | (?P<punct>[{}\[\]:,])
    | (?P<atom>(?P<atom_body>[\w.+\-$]+)FOLLOWER)
    | (?P<squote>(?P<squote_body>'[^'\\]*(?:\\.[^'\\]*)*')FOLLOWER)
    | (?P<comment>//[^\n]*|/\*.*?\*/)
    | (?P<open_string>"[^"\\]*(?:\\.[^"\\]*)*\\?\Z)
    | (?P<open_squote>'[^'\\]*(?:\\.[^'\\]*)*\\?\Z)
    | (?P<open_comment>/\*.*\Z)
    | (?P<other>.)
    | (?P<end>\Z)
    )
    """.replace("SCALAR", _SCALAR).replace("STRING", _STRICT_STRING).replace("FOLLOWER", _FOLLOWER),
    re.VERBOSE | re.DOTALL,
)
# Token kinds by group number: `lastindex` is cheaper to read than `lastgroup`.
_STRING, _FLAT, _TRAILING, _PUNCT, _ATOM, _SQUOTE, _COMMENT, _OPEN_STRING, _OPEN_SQUOTE, _OPEN_COMMENT, _OTHER, _END = (
    _TOKEN.groupindex[name] for name in ("string", "flat", "trailing", "punct", "atom", "squote", "comment", "open_string",
                                         "open_squote", "open_comment", "other", "end"))
assert all(_TOKEN.groupindex[name + "_body"] == index + 1
           for name, index in (("string", _STRING), ("flat", _FLAT), ("atom", _ATOM), ("squote", _SQUOTE)))
_PUNCTUATION: Final = frozenset({_PUNCT, _TRAILING})
_PLAIN: Final = frozenset({_STRING, _ATOM})
_COMMENTS: Final = frozenset({_COMMENT, _OPEN_COMMENT})
_CONTROL: Final = re.compile(r"[\x00-\x1f]")
_CONTROL_ESCAPES: Final = {code: f"\\u{code:04x}" for code in range(0x20)}
_SQUOTE_BODY: Final = re.compile(r"\\(.)|\"", re.DOTALL)
_PY_LITERALS: Final = {"True": "true", "False": "false", "None": "null"}
_OPENERS: Final = {"}": "{", "]": "["}

# Each kind's message for one repair (formatted with its argument), and for a counted summary.
_ONE: Final = {
    "trailing_comma": "removed a trailing comma before {0!r}",
    "unquoted_key": "quoted the key {0!r}",
    "python_literal": "replaced Python {0} with {1}",
    "single_quotes": "turned a single-quoted string into a double-quoted one",
    "control_character": "escaped a raw control character inside a string",
    "comment": "removed a comment",
}
_MANY: Final = {
    "trailing_comma": "removed {0:,} more trailing commas",
    "unquoted_key": "quoted {0:,} more unquoted keys",
    "python_literal": "replaced {0:,} more Python True/False/None words",
    "single_quotes": "turned {0:,} more single-quoted strings into double-quoted ones",
    "control_character": "escaped raw control characters inside {0:,} more strings",
    "comment": "removed {0:,} more comments",
}


class RepairLog:
    """The repairs of one rewrite: the first MAX_REPORTED_REPAIRS as (kind, offset, argument),
    then per kind a count and the first offset. Messages are built once, by `repairs()`."""

    __slots__ = ("_counted", "_listed")

    def __init__(self) -> None:
        self._listed: list[tuple[str, int, Any]] = []
        self._counted: dict[str, list[int]] = {}  # kind -> [count, first offset]

    def add(self, kind: str, offset: int, argument: Any = None) -> None:
        if len(self._listed) < MAX_REPORTED_REPAIRS:
            self._listed.append((kind, offset, argument))
            return
        counted = self._counted.get(kind)
        if counted is None:
            self._counted[kind] = [1, offset]
        else:
            counted[0] += 1

    def repairs(self, text: str, lines: LineCursor | None = None) -> list[Repair]:
        """The messages; `lines` (over `text`) says where each one is, and a caller reading value
        after value of one text (JSONL) passes the same cursor to all of them."""
        lines = lines or LineCursor(text)
        listed = [Repair(kind, f"{_message(kind, argument)} at {lines.where(offset)}") for kind, offset, argument in self._listed]
        if not self._counted:  # the common case: no more repairs than are listed
            return listed
        summaries = [
            Repair(kind, f"{_MANY[kind].format(count)}, the first of them at {lines.where(offset)} "
                         f"(past the first {MAX_REPORTED_REPAIRS} repairs, each kind is counted, not listed)", count)
            for kind, (count, offset) in sorted(self._counted.items(), key=lambda item: item[1][1])
        ]
        return listed + summaries


def one_kind_repairs(kind: str, found: list[tuple[int, Any]], text: str, lines: LineCursor) -> list[Repair]:
    """What a RepairLog given these (offset, argument) repairs of one kind, in order, reports: for a
    reader that finds them without a rewrite (JSONL's flat lines), at a fraction of a log's cost."""
    if len(found) > MAX_REPORTED_REPAIRS:
        log = RepairLog()
        for offset, argument in found:
            log.add(kind, offset, argument)
        return log.repairs(text, lines)
    return [Repair(kind, f"{_message(kind, argument)} at {lines.where(offset)}") for offset, argument in found]


def _message(kind: str, argument: Any) -> str:
    if kind == "python_literal":
        return _ONE[kind].format(argument, _PY_LITERALS[argument])
    return _ONE[kind].format(argument)


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


def _requote(token: str, *, closed: bool) -> str:
    """'it\\'s "x"' -> "it's \\"x\\"": unescape single quotes, escape double quotes."""
    body = token[1:-1] if closed else token[1:]
    if "\\" in body or '"' in body:
        body = _SQUOTE_BODY.sub(lambda m: ("'" if m.group(1) == "'" else m.group()) if m.group(1) is not None else '\\"', body)
    return '"' + body + ('"' if closed else "")


def rewrite_json(text: str, start: int, stop: int, lines: LineCursor | None = None) -> Rewrite:
    """Strict JSON for the value starting at `start`, reading no further than `stop`; `lines` as for
    `RepairLog.repairs`."""
    edits = _Edits()
    edit = edits.flat.extend  # called with (start, end, replacement)
    stack: list[str] = []
    log = RepairLog()
    note = log.add
    previous = ""  # the last significant token: a bracket, `,`, `:`, "key" or "value"
    comma_at = -1  # offset of the comma just read, for trailing-comma removal
    value_end = -1  # offset just past the last value read
    open_string = False
    finished = False  # the top-level value closed
    # tokens are contiguous: each starts where the last ended (Pattern.scanner: undocumented, so typeshed omits it)
    next_token = _TOKEN.scanner(text, start, stop).match  # type: ignore[attr-defined]
    control = _CONTROL.search
    pos = start
    while pos < stop:
        token = next_token()
        kind = token.lastindex
        pos = token.end()
        if kind in _PUNCTUATION:
            char = text[pos - 1]
            if char == ",":
                comma_at = pos - 1
                previous = ","
            elif char == ":":
                previous = ":"
            elif char == "{" or char == "[":
                if len(stack) >= MAX_NESTING_DEPTH:
                    raise TooDeepError(pos - 1)
                stack.append(char)
                previous = char
            else:
                if kind == _TRAILING:  # `,` then a closing bracket
                    comma_at = token.start(kind)
                    previous = ","
                if not stack or stack[-1] != _OPENERS[char]:
                    return _truncated(text, start, edits, stack, log, previous, value_end, pos - 1, char, open_string, lines)
                if previous == ",":
                    edit((comma_at, comma_at + 1, ""))
                    note("trailing_comma", pos - 1, char)
                stack.pop()
                previous = "value"
                value_end = pos
                if not stack:
                    finished = True
                    break
        elif kind == _FLAT:
            if len(stack) >= MAX_NESTING_DEPTH:
                raise TooDeepError(token.start(kind))
            end = token.end(kind + 1)  # past the closing bracket; `pos` is past its follower
            last = end - 2  # the last character before the closing bracket
            while text[last] in " \t\r\n":
                last -= 1
            if text[last] == ",":
                edit((last, last + 1, ""))
                note("trailing_comma", end - 1, text[end - 1])
            value_end = end
            if not stack:
                pos = end
                finished = True
                break
            if pos == end:
                previous = "value"
            else:
                previous = text[pos - 1]
                comma_at = pos - 1
        elif kind in _PLAIN:
            body = token.group(kind + 1)
            end = token.end(kind + 1)
            in_key = bool(stack) and stack[-1] == "{" and (previous == "{" or previous == ",")
            if kind == _ATOM:
                if in_key:
                    note("unquoted_key", end - len(body), body)
                    edit((end - len(body), end, '"' + body + '"'))  # \w, `.`, `+`, `-`, `$`: nothing to escape
                elif body in _PY_LITERALS:
                    note("python_literal", end - len(body), body)
                    edit((end - len(body), end, _PY_LITERALS[body]))
            elif control(body) is not None:
                note("control_character", end - len(body))
                edit((end - len(body), end, body.translate(_CONTROL_ESCAPES)))
            if not in_key:
                value_end = end
                if not stack:
                    pos = end
                    finished = True
                    break
            if pos == end:
                previous = "key" if in_key else "value"
            else:
                previous = text[pos - 1]
                comma_at = pos - 1
        elif kind == _END:
            break
        elif kind == _OTHER:
            return _truncated(text, start, edits, stack, log, previous, value_end, pos - 1, text[pos - 1], open_string,
                              lines)
        elif kind in _COMMENTS:
            note("comment", token.start(kind))
            edit((token.start(kind), pos, " "))
        else:  # single-quoted strings, and strings the text ends inside
            closed = kind == _SQUOTE
            offset = token.start(kind)
            end = token.end(kind + 1) if closed else pos
            body = token.group(kind + 1) if closed else token.group(kind)
            repaired = False
            if kind != _OPEN_STRING:
                body = _requote(body, closed=closed)
                note("single_quotes", offset)
                repaired = True
            if control(body) is not None:
                body = body.translate(_CONTROL_ESCAPES)
                note("control_character", offset)
                repaired = True
            if repaired:
                edit((offset, end, body))
            in_key = bool(stack) and stack[-1] == "{" and (previous == "{" or previous == ",")
            if not closed:  # truncated inside the string: the caller completes the value
                open_string = not in_key
                continue
            if not in_key:
                value_end = end
                if not stack:
                    pos = end
                    finished = True
                    break
            if pos == end:
                previous = "key" if in_key else "value"
            else:
                previous = text[pos - 1]
                comma_at = pos - 1
    if not finished:
        return _truncated(text, start, edits, stack, log, previous, value_end, pos, None, open_string, lines)
    return Rewrite(edits.apply(text, start, pos), log.repairs(text, lines), pos, True)


class _Edits:
    """Replacements in the text, kept in one flat list of plain values (start, end, replacement,
    start, ...): a tuple per edit would be an object the garbage collector walks again and again
    while a hostile reply piles up 100,000s, and one `extend` per edit is cheaper than a method."""

    __slots__ = ("flat",)

    def __init__(self) -> None:
        self.flat: list[Any] = []

    def apply(self, text: str, start: int, end: int) -> str:
        """text[start:end] with the edits made."""
        flat = self.flat
        if len(flat) == 3:  # one edit (the common case of a small value): no sorting, no lists
            return "".join((text[start : flat[0]], flat[2], text[flat[1] : end]))
        starts, ends, texts = flat[0::3], flat[1::3], flat[2::3]
        order: Any = range(len(starts))
        if any(later < earlier for earlier, later in pairwise(starts)):
            # a trailing comma is removed after the comments between it and its bracket
            order = sorted(order, key=starts.__getitem__)
        pieces, kept = [], start
        for index in order:
            pieces.append(text[kept : starts[index]])
            pieces.append(texts[index])
            kept = ends[index]
        pieces.append(text[kept:end])
        return "".join(pieces)


def _truncated(text: str, start: int, edits: _Edits, stack: list[str], log: RepairLog, previous: str,
               value_end: int, pos: int, stopped_by: str | None, open_string: bool,
               lines: LineCursor | None) -> Rewrite:
    body = edits.apply(text, start, pos)
    if previous == "value" and (stopped_by is not None or pos > value_end):
        # Something followed the last number or word, so it is whole: a comma tells the completer
        # to keep it (it drops a number the text ended in, which may have had more digits).
        body += ","
    return Rewrite(body, log.repairs(text, lines), pos, False, len(stack), stopped_by,
                   open_string and stopped_by is None)
