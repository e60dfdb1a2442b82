"""A streaming JSON parser whose work per `feed` is proportional to the new text.

Re-parsing the whole buffer on every chunk (what Genkit and partial-json-parser users do) costs
O(n) per chunk and O(n²) per message: about 9 ms per chunk at 54 KB. This parser keeps its
position, a stack of live Python containers, and at most a dozen characters of carried-over text
(an escape sequence split across chunks), so every character is examined once.

What a snapshot holds (`feed`'s return value, the live root):
- open containers, extended in place as members arrive;
- an open string's prefix so far (strings only ever grow);
- never a value that could still change: a number, `true`/`false`/`null` appears only once a
  delimiter ends it, and an object member only once its key is complete and its value started.
Values that are complete are never mutated afterwards, so only the open spine (the containers on
the current path) changes; `snapshot_copy()` copies just that spine.

`feed_lazy` is what a streamed run calls once per chunk: it records in O(1) where the spine stands
(a shared frame per open container, the innermost one's length, the open string's length, the
count of duplicate-key overwrites) and builds the snapshot only when it is read. A duplicate key
is the one change that is not an append, so its old value is logged for older snapshots.

Reading every chunk's snapshot would still copy the whole spine each time: quadratic for a big
flat object or array. The copies are built by `snapshots.py`, which extends the last one nobody
holds any more (reference counts say so) into the next: linear in all. `copied` counts the work.

Arrays and objects nested past MAX_NESTING_DEPTH stop the parser (`too_deep`); the final parse
reports the error. Long strings, numbers and keys are held as a few pieces (merged as they
grow), so a megabyte string in one-character chunks costs neither a join per chunk nor a million
list entries.

Input handling, chosen so that the parser never raises:
- text before the first `{` or `[` is skipped (prose, a ```json fence line);
- after the top-level value closes, everything is ignored (a closing fence, trailing prose);
- a backtick outside a string ends parsing: the fence closed before the value did (truncated);
- tolerated as in JSON5: trailing commas, `//` and `/* */` comments, single-quoted strings,
  unquoted keys, unknown escapes (`\\q` gives `q`), raw control characters inside strings;
- any other unexpected character is skipped; a malformed number or word (`tru`, `1.2.3`,
  `None`) is dropped with its object member; a mismatched close bracket closes up to the matching
  open container, or is skipped when there is none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final, Protocol, cast

from ..base import LazyValue
from .limits import MAX_NESTING_DEPTH
from .snapshots import Frame, SpineCopies

__all__ = ["IncrementalJsonParser", "LazySnapshot"]

# Parser states. Plain ints: they index the handler table in the hot loop.
_SEEK: Final = 0  # before the top-level value
_VALUE: Final = 1  # a value may start here (also `]` right after `[` or `,`)
_KEY: Final = 2  # an object key may start here (also `}` right after `{` or `,`)
_COLON: Final = 3  # after a key
_AFTER: Final = 4  # after a value inside a container: `,` or a close bracket
_STRING: Final = 5  # inside a string, key or value
_ATOM: Final = 6  # inside a number or a bare word (true, false, null)
_BARE_KEY: Final = 7  # inside an unquoted object key
_LINE_COMMENT: Final = 8
_BLOCK_COMMENT: Final = 9
_DONE: Final = 10  # the top-level value closed, or a closing fence cut it short


class _Matches(Protocol):
    """A pattern whose `match` cannot fail where it is called: it matches the empty string (the `*` runs),
    or (the junk runs) it is called on a character that its state's handler does not act on."""

    def match(self, string: str, pos: int = ..., /) -> re.Match[str]: ...


_WS: Final = cast(_Matches, re.compile(r"[ \t\n\r]*"))
_WS_CHARS: Final = " \t\n\r"
_START: Final = re.compile(r"[{\[]")
_STRING_RUN: Final = {'"': re.compile(r'[^"\\]+'), "'": re.compile(r"[^'\\]+")}
_STRICT_RUN: Final = re.compile(r'[^"\\\x00-\x1f]+')  # while the text read is strict JSON: no raw control character
# A string with no escape (nor, double-quoted, raw control character) that closes within the chunk: taken in one step.
_WHOLE_STRING: Final = {'"': re.compile(r'"([^"\\\x00-\x1f]*)"'), "'": re.compile(r"'([^'\\]*)'")}
_JSON_BLANKS: Final = " \t\n\r"  # what json.loads allows around a value
_ATOM_RUN: Final = cast(_Matches, re.compile(r"[\w.+\-]*"))
_KEY_RUN: Final = cast(_Matches, re.compile(r"[\w$]*"))
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_HEX4: Final = re.compile(r"[0-9a-fA-F]{4}")
_HEX_PREFIX: Final = re.compile(r"[0-9a-fA-F]{0,3}")
# Characters each state between tokens skips (`_punctuation`): whitespace and anything its handler
# would not act on, so a run of junk (`{{{{` inside an object) is one step, not one per character.
_JUNK_RUNS: Final = cast("dict[int, _Matches]", {
    _VALUE: re.compile(r"[^\"'{\[\]}\w.+\-/`]+"),
    _KEY: re.compile(r"[^\"'}\]\w$/`]+"),
    _COLON: re.compile(r"[^:}\]/`]+"),
    _AFTER: re.compile(r"[^,}\]/`]+"),
})
# What may still become `\uDC00`..`\uDFFF` once more text arrives.
_LOW_SURROGATE_PREFIX: Final = re.compile(r"\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]?)?)?)?")

_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
# json.loads reads NaN and Infinity too; a snapshot shows them (and numbers too large for a float) as
# null, as the final parse replaces them (formats/finite.py): a partial output is never a value the
# final output could not be.
_WORDS: Final[dict[str, Any]] = {
    "true": True, "false": False, "null": None, "NaN": None, "Infinity": None, "-Infinity": None,
}
_INVALID: Final = object()
_MAX_PIECES: Final = 32  # pieces of an open string before the newest ones are merged



def _add(parts: list[str], piece: str) -> None:
    """Append a piece, merging so the list stays short and each character is copied O(log n) times."""
    parts.append(piece)
    if len(parts) > _MAX_PIECES:
        parts[-_MAX_PIECES // 2 :] = ["".join(parts[-_MAX_PIECES // 2 :])]
        while len(parts) > 1 and len(parts[-1]) >= len(parts[-2]):
            last = parts.pop()
            parts[-1] += last


class LazySnapshot(LazyValue):
    """The value as it stood after one feed, built when `.value` is read (a read may give the very
    object an earlier read gave, when nothing changed in between: outputs are shared, read-only)."""

    # The parser is held here, not by its frames: then nothing the parser holds points back at it
    # once its value closes (see `_close`), and it is freed as soon as the last snapshot is, without
    # waiting for the cycle collector while the final parse builds the value again. (A sixth slot
    # costs no memory: the object takes the same 80-byte block.)
    __slots__ = ("_frame", "_inner_len", "_parser", "_string", "_string_len", "_version")

    def __init__(self, parser: IncrementalJsonParser) -> None:
        self._parser = parser
        self._frame = parser._frame
        self._inner_len = len(parser._stack[-1])
        self._string = parser._string_serial if parser._string_open else None
        self._string_len = parser._parts_len if parser._string_open else 0
        self._version = parser._version

    def same_as(self, parser: IncrementalJsonParser) -> bool:
        """True when `parser` stands where this snapshot was taken."""
        return (self._frame is parser._frame and self._inner_len == len(parser._stack[-1])
                and self._version == parser._version
                and self._string is (parser._string_serial if parser._string_open else None)
                and self._string_len == (parser._parts_len if parser._string_open else 0))

    @property
    def value(self) -> Any:
        frame = self._frame
        assert frame is not None  # a snapshot is taken only while a container is open (`feed`)
        parser = self._parser  # straight to the builder: this runs once per streamed chunk
        return parser._copies.build(frame, self._inner_len, self._string, self._string_len, self._version,
                                    parser._at, parser)


def _run_end(pattern: re.Pattern[str] | _Matches, text: str, pos: int) -> int:
    """Where a run of `pattern` (which may match empty) starting at `pos` ends."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


def _atom_value(token: str) -> Any:
    """The value of a complete number or word, the way json.loads reads it; `_INVALID` otherwise."""
    if token.isdigit() and token.isascii() and (token[0] != "0" or len(token) == 1) and len(token) < 4000:
        return int(token)  # the common case, without the pattern (4000: under int()'s digit limit)
    match = _NUMBER.fullmatch(token)
    if match is None:
        return _WORDS.get(token, _INVALID)
    try:
        if not (match.group(1) or match.group(2)):
            return int(token)
        number = float(token)
    except ValueError:  # an integer past Python's digit limit: json.loads refuses it too
        return _INVALID
    return number if math.isfinite(number) else None


class IncrementalJsonParser:
    """Feed text as it arrives; get the JSON value parsed so far. See the module docstring."""

    def __init__(self) -> None:
        self._root: Any = None
        self._stack: list[Any] = []  # open containers, root first
        self._slots: list[Any] = []  # where each open container sits in its parent (None for the root)
        self._state = _SEEK
        self._resume = _SEEK  # the state a comment returns to
        self._carry = ""  # an incomplete escape (or `/`, `*`) held back for the next chunk
        self._key: str = ""  # the key of the member whose value comes next
        self._parts: list[str] = []  # pieces of the open string, key or atom
        self._quote = '"'
        self._run = _STRING_RUN['"']
        self._in_key = False
        self._string_open = False  # an open *value* string sits in the snapshot
        self._string_slot: Any = None
        self._dirty = False  # the open string grew since it was last published
        self._complete = False
        self._last: LazySnapshot | None = None
        self.too_deep = False  # nesting passed MAX_NESTING_DEPTH: reading stopped there
        self._strict = True  # everything read so far is strict JSON (`strict`)
        self._frame: Frame | None = None  # the innermost open container
        self._parts_len = 0  # characters in `_parts` while a value string is open
        self._string_serial: tuple[Any, int] | None = None  # (slot, number) of the open value string
        self._strings = 0
        self._version = 0  # duplicate-key overwrites so far
        self._overwritten: dict[int, list[tuple[int, Any, Any]]] = {}  # id(dict) -> (version, key, old value)
        self._at = 0  # characters fed so far: the open-string copy budget grows with it
        self._copies = SpineCopies(self._overwritten)  # the outputs built, extended while nobody holds them

    # -- public -------------------------------------------------------------------------------

    def feed(self, text: str) -> Any:
        """Append new text; return the live root value so far (None until `{` or `[` arrives).

        Publishing the open string's prefix joins it: a long string fed in many small pieces is
        quadratic here. `advance` and `feed_lazy` never join."""
        self.advance(text)
        if self._dirty:
            self._publish_string()
        return self._root

    def advance(self, text: str) -> None:
        """Append new text without publishing the open string (the live tree shows an older prefix)."""
        self._at += len(text)
        if self._carry:
            text = self._carry + text
            self._carry = ""
        handlers = _HANDLERS
        pos, end = 0, len(text)
        while pos < end:
            pos = handlers[self._state](self, text, pos)

    def feed_lazy(self, text: str) -> Any:
        """Append new text; return the value so far as a LazySnapshot, or the value itself when it
        can no longer change (None before the value starts, the root once it is complete)."""
        self._at += len(text)
        if self._carry:
            text = self._carry + text
            self._carry = ""
        handlers = _HANDLERS
        pos, end = 0, len(text)
        while pos < end:  # `advance`, inlined: this runs once per streamed chunk
            pos = handlers[self._state](self, text, pos)
        if not self._stack:
            return self._root
        last = self._last
        if last is None or not last.same_as(self):  # a chunk that changed nothing shares the record
            last = self._last = LazySnapshot(self)
        return last

    @property
    def value(self) -> Any:
        """The live root value (the same object `feed` returns)."""
        return self._root

    @property
    def done(self) -> bool:
        """True once the top-level value has closed: the snapshot is the whole document."""
        return self._complete

    @property
    def strict(self) -> bool:
        """True while the text read is strict JSON: a `{` or `[` value, with nothing but JSON's blanks
        before and after it, that json.loads reads without error, and nothing this parser tolerates
        (no JSON5 liberty, no character skipped, nothing dropped, no number it shows as null). Once
        `done` as well, `value` is what json.loads gives the text (tests check it): the final parse
        need not read it again."""
        return self._strict

    @property
    def copied(self) -> int:
        """Container members and open-string characters copied into outputs so far: what building
        them cost. Linear in the text when each output extends the last one (see `SpineCopies.build`)."""
        return self._copies.copied

    @property
    def settled(self) -> int:
        """How many leading entries of the root container are final (all but an open last one)."""
        if self._root is None:
            return 0
        open_last = len(self._stack) > 1 or (len(self._stack) == 1 and self._string_open)
        return len(self._root) - open_last

    def snapshot_copy(self) -> Any:
        """A snapshot later feeds will not change: copies of the open containers only.

        Complete values are shared with the live tree; they are never mutated again.
        """
        if not self._stack:
            return self._root
        string = self._string_serial if self._string_open else None
        return self._copies.build(self._frame, len(self._stack[-1]), string, self._parts_len if string else 0,
                                  self._version, self._at, self)

    def open_string_text(self, serial: Any) -> str | None:
        """The whole text so far of the open value string numbered `serial` (its pieces joined once,
        so the next call costs nothing), or None once that string has closed."""
        if not (self._string_open and self._string_serial is serial):
            return None
        joined = "".join(self._parts)
        self._parts = [joined]
        return joined

    # -- containers ---------------------------------------------------------------------------

    def _put(self, value: Any) -> Any:
        """Add a value to the innermost open container; return its slot (index or key)."""
        top = self._stack[-1]
        if type(top) is list:
            top.append(value)
            return len(top) - 1
        if self._key in top:  # not an append: older lazy snapshots need the value it replaces
            self._version += 1
            self._overwritten.setdefault(id(top), []).append((self._version, self._key, top[self._key]))
        top[self._key] = value
        return self._key

    def _open(self, bracket: str) -> None:
        if len(self._stack) >= MAX_NESTING_DEPTH:
            self.too_deep = True
            self._strict = False
            self._state = _DONE
            return
        container: Any = {} if bracket == "{" else []
        if self._stack:
            top = self._stack[-1]
            if type(top) is list:  # `_put`, inlined for the common case
                top.append(container)
                slot: Any = len(top) - 1
            else:
                slot = self._put(container)
            self._slots.append(slot)
            self._frame = Frame(container, self._frame, slot, len(top))
        else:
            self._root = container
            self._slots.append(None)
            self._frame = Frame(container, None, None, 0)
        self._stack.append(container)
        self._state = _KEY if bracket == "{" else _VALUE

    def _close(self, bracket: str) -> None:
        """Close the innermost container of that kind; a stray bracket with none open is skipped."""
        kind = dict if bracket == "}" else list
        stack = self._stack
        if stack and type(stack[-1]) is kind:  # the common case: the innermost container
            self._frame = self._frame.parent if self._frame is not None else None
            stack.pop()
            self._slots.pop()
        else:
            self._strict = False  # a mismatched bracket
            depth = len(stack)
            while depth and type(stack[depth - 1]) is not kind:
                depth -= 1
            if not depth:
                return
            for _ in range(len(stack) - depth + 1):
                self._frame = self._frame.parent if self._frame is not None else None
            del stack[depth - 1 :]
            del self._slots[depth - 1 :]
        if stack:
            self._state = _AFTER
        else:
            self._state = _DONE
            self._complete = True  # the copies stay: a chunk's output may still be read after the value closed
            self._last = None  # `feed_lazy` hands out the root from now on; the snapshot held would be a cycle

    # -- state handlers: each takes (text, pos) and returns the next position -----------------

    def _seek(self, text: str, pos: int) -> int:
        match = _START.search(text, pos)
        if self._strict and text[pos : len(text) if match is None else match.start()].strip(_JSON_BLANKS):
            self._strict = False  # prose or a fence before the value
        if match is None:
            return len(text)
        self._open(match.group())
        return match.end()

    def _value(self, text: str, pos: int) -> int:
        char = text[pos]
        if char in _WS_CHARS:
            pos = _WS.match(text, pos).end()
            if pos == len(text):
                return pos
            char = text[pos]
        if char == '"' or char == "'":
            if char == "'":
                self._strict = False
            whole = _WHOLE_STRING[char].match(text, pos)
            if whole is not None:  # no snapshot can see it open: put the finished string
                self._put(whole.group(1))
                pos = whole.end()
                if pos < len(text) and text[pos] == ",":  # the comma after it, as `_after` takes it
                    self._state = _KEY if type(self._stack[-1]) is dict else _VALUE
                    return pos + 1
                self._state = _AFTER
                return pos
            self._begin_string(char, key=False)
        elif char == "{" or char == "[":
            self._open(char)
        elif char == "]" or char == "}":  # `[]`, a trailing comma, or `{"a": }` (the key is dropped)
            if char == "}" or self._stack[-1]:  # only `[]` is strict (a comma before `]` leaves the list non-empty)
                self._strict = False
            self._close(char)
            pos += 1
            if self._state == _AFTER and pos < len(text) and text[pos] == ",":
                self._state = _KEY if type(self._stack[-1]) is dict else _VALUE
                return pos + 1
            return pos
        else:
            end = _ATOM_RUN.match(text, pos).end()
            if end == pos:
                return self._punctuation(text, pos)
            if end == len(text):  # the number may go on in the next chunk
                self._parts = [text[pos:end]]
                self._state = _ATOM
                return end
            token = text[pos:end]
            value = _atom_value(token)
            if (value is None and token != "null") or value is _INVALID:
                self._strict = False  # dropped, or shown as null: not what json.loads reads
            if value is not _INVALID:
                top = self._stack[-1]
                if type(top) is list:  # `_put`, inlined for the common case
                    top.append(value)
                else:
                    self._put(value)
            if text[end] == ",":
                self._state = _KEY if type(self._stack[-1]) is dict else _VALUE
                return end + 1
            self._state = _AFTER
            return end
        return pos + 1

    def _object_key(self, text: str, pos: int) -> int:
        char = text[pos]
        if char in _WS_CHARS:
            pos = _WS.match(text, pos).end()
            if pos == len(text):
                return pos
            char = text[pos]
        if char == '"' or char == "'":
            if char == "'":
                self._strict = False
            whole = _WHOLE_STRING[char].match(text, pos)
            if whole is not None:
                self._key = whole.group(1)
                pos = whole.end()
                if pos < len(text) and text[pos] == ":":  # the colon after it, as `_colon` takes it
                    self._state = _VALUE
                    return pos + 1
                self._state = _COLON
                return pos
            self._begin_string(char, key=True)
        elif char == "}" or char == "]":
            if char == "]" or self._stack[-1]:  # only `{}` is strict (after a comma, the object holds a member)
                self._strict = False
            self._close(char)
        else:
            end = _KEY_RUN.match(text, pos).end()
            if end == pos:
                return self._punctuation(text, pos)
            self._strict = False  # an unquoted key
            if end == len(text):
                self._parts = [text[pos:end]]
                self._state = _BARE_KEY
                return end
            self._key = text[pos:end]
            if text[end] == ":":
                self._state = _VALUE
                return end + 1
            self._state = _COLON
            return end
        return pos + 1

    def _colon(self, text: str, pos: int) -> int:
        char = text[pos]
        if char in _WS_CHARS:
            pos = _WS.match(text, pos).end()
            if pos == len(text):
                return pos
            char = text[pos]
        if char == ":":
            self._state = _VALUE
        elif char == "}" or char == "]":  # a key without a value: dropped
            self._strict = False
            self._close(char)
        else:
            return self._punctuation(text, pos)
        return pos + 1

    def _after(self, text: str, pos: int) -> int:
        char = text[pos]
        if char in _WS_CHARS:
            pos = _WS.match(text, pos).end()
            if pos == len(text):
                return pos
            char = text[pos]
        if char == ",":
            self._state = _KEY if type(self._stack[-1]) is dict else _VALUE
        elif char == "}" or char == "]":
            self._close(char)
            pos += 1
            if self._state == _AFTER and pos < len(text) and text[pos] == ",":  # `[1], [2]`: the comma too
                self._state = _KEY if type(self._stack[-1]) is dict else _VALUE
                return pos + 1
            return pos
        else:
            return self._punctuation(text, pos)
        return pos + 1

    def _punctuation(self, text: str, pos: int) -> int:
        """Comments, a closing fence, or a character to skip, in any state between tokens."""
        self._strict = False
        char = text[pos]
        if char == "`":
            self._state = _DONE
            return len(text)
        if char != "/":
            return _JUNK_RUNS[self._state].match(text, pos).end()
        if pos + 1 == len(text):
            self._carry = "/"  # a comment or a stray slash: the next chunk decides
            return pos + 1
        follower = text[pos + 1]
        if follower == "/" or follower == "*":
            self._resume = self._state
            self._state = _LINE_COMMENT if follower == "/" else _BLOCK_COMMENT
            return pos + 2
        return pos + 1

    def _line_comment(self, text: str, pos: int) -> int:
        newline = text.find("\n", pos)
        if newline < 0:
            return len(text)
        self._state = self._resume
        return newline + 1

    def _block_comment(self, text: str, pos: int) -> int:
        close = text.find("*/", pos)
        if close >= 0:
            self._state = self._resume
            return close + 2
        if text.endswith("*"):
            self._carry = "*"  # maybe the first half of `*/`
        return len(text)

    def _done(self, text: str, pos: int) -> int:
        if self._strict and text[pos:].strip(_JSON_BLANKS):
            self._strict = False  # text after the value
        return len(text)

    # -- strings --------------------------------------------------------------------------------

    def _begin_string(self, quote: str, *, key: bool) -> None:
        self._quote = quote
        if quote == "'":
            self._strict = False
        self._run = _STRICT_RUN if self._strict else _STRING_RUN[quote]
        self._parts = []
        self._parts_len = 0
        self._in_key = key
        self._state = _STRING
        if not key:
            self._string_slot = self._put("")  # an open string shows in the snapshot from its first quote
            self._string_open = True
            self._strings += 1
            self._string_serial = (self._string_slot, self._strings)

    def _string(self, text: str, pos: int) -> int:
        run = self._run.match(text, pos)
        if run is not None:
            piece = run.group()
            _add(self._parts, piece)
            self._parts_len += len(piece)
            self._dirty = True
            pos = run.end()
            if pos == len(text):
                return pos
        if text[pos] == "\\":
            return self._escape(text, pos)
        if text[pos] != self._quote:  # a raw control character (the strict run stops at it): kept, not strict
            self._strict = False
            self._run = _STRING_RUN[self._quote]
            return pos
        self._end_string()  # the closing quote
        return pos + 1

    def _end_string(self) -> None:
        value = "".join(self._parts)
        self._parts = []
        if self._in_key:
            self._key = value
            self._state = _COLON
            return
        self._stack[-1][self._string_slot] = value
        self._string_open = False
        self._dirty = False
        self._state = _AFTER

    def _publish_string(self) -> None:
        """Show the open string's prefix: once per feed, not once per piece."""
        self._dirty = False
        if not self._string_open:
            return
        prefix = "".join(self._parts)
        self._parts = [prefix]
        self._stack[-1][self._string_slot] = prefix

    def _escape(self, text: str, pos: int) -> int:
        if pos + 1 == len(text):
            self._carry = "\\"
            return pos + 1
        char = text[pos + 1]
        if char == "u":
            return self._unicode_escape(text, pos)
        if char == "'" or char not in _ESCAPES:
            self._strict = False  # `\\'` or an unknown escape: JSON5's, not JSON's
        _add(self._parts, _ESCAPES.get(char, char))
        self._parts_len += 1
        self._dirty = True
        return pos + 2

    def _unicode_escape(self, text: str, pos: int) -> int:
        """`\\uXXXX`, joining a surrogate pair even when the chunks split it anywhere."""
        if _HEX4.match(text, pos + 2) is None:
            if _HEX_PREFIX.fullmatch(text, pos + 2):
                self._carry = text[pos:]  # `\\u12` so far
                return len(text)
            self._strict = False
            return pos + 2  # not an escape: drop the `\\u`
        code = int(text[pos + 2 : pos + 6], 16)
        if 0xD800 <= code < 0xDC00:
            rest = text[pos + 6 : pos + 12]
            if len(rest) < 6 and (not rest or _LOW_SURROGATE_PREFIX.fullmatch(rest)):
                self._carry = text[pos:]  # the low half may still come: hold the high half back
                return len(text)
            low = int(rest[2:], 16) if rest[:2] == "\\u" and _HEX4.fullmatch(rest, 2) else 0
            if 0xDC00 <= low < 0xE000:
                _add(self._parts, chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                self._parts_len += 1
                self._dirty = True
                return pos + 12
        _add(self._parts, chr(code))  # a lone surrogate stays lone, as json.loads keeps it
        self._parts_len += 1
        self._dirty = True
        return pos + 6

    # -- atoms and bare keys ---------------------------------------------------------------------

    def _atom(self, text: str, pos: int) -> int:
        end = _run_end(_ATOM_RUN, text, pos)
        if end > pos:
            _add(self._parts, text[pos:end])
        if end == len(text):
            return end  # the number may go on in the next chunk
        token = "".join(self._parts)
        value = _atom_value(token)
        if (value is None and token != "null") or value is _INVALID:
            self._strict = False  # as in `_value`
        self._parts = []
        self._state = _AFTER
        if value is not _INVALID:
            self._put(value)
        return end

    def _bare_key(self, text: str, pos: int) -> int:  # `_strict` is already False: `_object_key` saw the key start
        end = _run_end(_KEY_RUN, text, pos)
        if end > pos:
            _add(self._parts, text[pos:end])
        if end == len(text):
            return end
        self._key = "".join(self._parts)
        self._parts = []
        self._state = _COLON
        return end


# Indexed by state. Plain functions, not bound methods kept on the instance: no reference cycle,
# so a parser is freed as soon as its stream is (JSONL makes one per line).
_HANDLERS: Final[tuple[Callable[[IncrementalJsonParser, str, int], int], ...]] = (
    IncrementalJsonParser._seek, IncrementalJsonParser._value, IncrementalJsonParser._object_key,
    IncrementalJsonParser._colon, IncrementalJsonParser._after, IncrementalJsonParser._string,
    IncrementalJsonParser._atom, IncrementalJsonParser._bare_key, IncrementalJsonParser._line_comment,
    IncrementalJsonParser._block_comment, IncrementalJsonParser._done,
)
