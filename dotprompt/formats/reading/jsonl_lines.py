"""The `jsonl` format's reply read, streamed and whole: one JSON object per line (`formats/jsonl.py`
says what each kind of line gives). Here, beside the readers it uses, so that `dotprompt check`,
which asks the format only for its schema check and instructions, loads none of them."""

from __future__ import annotations

from typing import Any, Final

from ...errors import OutputParseError
from ..base import ParsedOutput, Repair
from ..finite import finite_output
from .extract import parse_json_at
from .flatline import read_flat_object
from .incremental import IncrementalJsonParser
from .lenient import one_kind_repairs
from .textpos import LineCursor

__all__ = ["JsonlStream", "parse_jsonl"]

_UNDECIDED: Final = 0  # only whitespace on this line so far
_ITEM: Final = 1  # the line started with `{`
_SKIP: Final = 2  # prose or a fence line, or an object line whose object has closed
# Characters of an object line held back while it may still be a flat object (`flatline.py`),
# read in one match at its closing brace; a longer line goes to a streaming parser.
_PENDING_MAX: Final = 512


class JsonlStream:
    """Each feed returns the objects it completed: a list, often empty. An object is complete at
    its closing brace; the newline is not needed. A line whose object never closes yields nothing
    here; the final `parse_text` completes it and reports the repair."""

    def __init__(self) -> None:
        self._mode = _UNDECIDED
        self._line: IncrementalJsonParser | None = None  # made when the line is not a flat object
        self._pending = ""  # the object line so far, while no parser reads it
        self._items: list[Any] = []  # every object handed out: the final output, while `_strict`
        self._strict = True  # every line so far blank or one strict JSON object (`whole_output`)

    def feed(self, text: str) -> list[Any]:
        items: list[Any] = []
        pos = 0
        while (newline := text.find("\n", pos)) >= 0:
            self._feed_line(text, pos, newline, items)
            if self._mode == _ITEM:  # the line ended before its object closed: the final parse repairs it
                self._strict = False
            self._mode = _UNDECIDED
            pos = newline + 1
        self._feed_line(text, pos, len(text), items)
        if self._strict:
            self._items += items
        return items

    def whole_output(self) -> ParsedOutput | None:
        """The final parse of the text fed, without reading it again, when every line was blank or one
        strict JSON object (quoted keys, nothing after it but blanks): those objects, no repairs. None
        otherwise (the final text is parsed then). The objects are the very ones the chunks handed out."""
        if not self._strict or self._mode == _ITEM:  # a last object never closed: completed by the final parse
            return None
        return ParsedOutput(self._items, [])

    def _feed_line(self, text: str, pos: int, stop: int, items: list[Any]) -> None:
        if self._mode == _UNDECIDED:
            while pos < stop and text[pos] in " \t\r":
                pos += 1
            if pos == stop:
                return
            self._mode = _ITEM if text[pos] == "{" else _SKIP
            self._line, self._pending = None, ""
            if self._mode == _SKIP:  # prose or a fence line: the final parse reports it
                self._strict = False
        if self._mode != _ITEM:
            if self._strict and text[pos:stop].strip(" \t\r"):  # text after an object: reported too
                self._strict = False
            return
        piece = text[pos:stop]
        if self._line is None:
            piece = self._pending + piece
            if "}" in piece[len(self._pending):]:  # a flat object can only have closed at a new brace
                flat = read_flat_object(piece)
                if flat is not None:  # what the streaming parser would give, at the same brace
                    items.append(flat[0])
                    self._mode, self._pending = _SKIP, ""
                    self._strict = self._strict and not flat[1]  # a bare key is an `unquoted_key` repair
                    self._feed_line(piece, flat[2], len(piece), items)  # what follows it on the line
                    return
            elif len(piece) <= _PENDING_MAX:
                self._pending = piece
                return
            self._line, self._pending = IncrementalJsonParser(), ""
        self._line.advance(piece)
        if self._line.done:  # only a closed object is handed out
            items.append(self._line.value)
            self._mode = _SKIP
            self._strict = self._strict and self._line.strict


def parse_jsonl(text: str) -> ParsedOutput:
    """The objects of `text`, one per line, and every repair; a NaN or an infinity is null and reported
    (`finite.py`), as in every other format."""
    return finite_output(_parse_lines(text), text)


def _parse_lines(text: str) -> ParsedOutput:
    items: list[Any] = []
    repairs: list[Repair] = []
    lines = LineCursor(text)  # one for every line: each repair's position costs its own line, not the text before
    offset = 0
    repaired = False  # whether the last object line needed repairs: then the next goes straight to the lenient reader
    for number, line in enumerate(text.split("\n"), start=1):
        repaired = _parse_line(text, offset, line, number, items, repairs, lines, repaired)
        offset += len(line) + 1
    if not items and text and not text.isspace():
        raise OutputParseError("no line holds a JSON object", text=text, format_name="jsonl")
    return ParsedOutput(items, repairs)


def _parse_line(text: str, offset: int, line: str, number: int, items: list[Any], repairs: list[Repair],
                lines: LineCursor, repaired: bool) -> bool:
    """Parse one line into `items` and `repairs`; whether it was an object line that needed repairs
    (`repaired` says so of the last one: unchanged by a line that is not an object)."""
    body = line.strip()
    if not body:
        return repaired
    if body.startswith("```"):
        if not any(r.kind == "extracted_from_fence" for r in repairs):
            repairs.append(Repair("extracted_from_fence", f"ignored the fence line {body!r} at line {number}"))
        return repaired
    if not body.startswith("{"):
        repairs.append(Repair("skipped_line", f"line {number} is not a JSON object: {_short(body)}"))
        return repaired
    start = offset + line.index("{")
    flat = read_flat_object(text, start, offset + len(line))
    if flat is not None:  # the common line, in one match: the value and repairs the readers below give
        value, bare_keys, end = flat
        items.append(value)
        if bare_keys:
            repairs.extend(one_kind_repairs("unquoted_key", bare_keys, text, lines))
        _check_after(text, end, offset + len(line), number, repairs)
        return bool(bare_keys)
    try:
        value, line_repairs, end = parse_json_at(text, start, offset + len(line), format_name="jsonl", lines=lines,
                                                 strict_first=not repaired)
    except OutputParseError as exc:
        repairs.append(Repair("skipped_line", f"line {number} could not be repaired: {exc}"))
        return True
    items.append(value)
    repairs.extend(line_repairs)
    _check_after(text, end, offset + len(line), number, repairs)
    return bool(line_repairs)


def _check_after(text: str, end: int, line_end: int, number: int, repairs: list[Repair]) -> None:
    if text[end:line_end].strip():
        repairs.append(Repair("extracted_from_prose", f"ignored text after the object on line {number}"))


def _short(body: str) -> str:
    return repr(body if len(body) <= 60 else body[:60] + "...")
