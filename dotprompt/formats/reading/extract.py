"""extract_json: the JSON value in a model's final reply, and every repair it took to get it.

The order is cheapest first: the whole text as strict JSON (clean output: no repairs), then the
value located in a fence or in prose decoded strictly, and only then the lenient rewrite.
A truncated value is completed by partial-json-parser, allowing only partial strings and
containers: a number or word cut short is dropped rather than guessed (`12` of `1234`). A string
cut short is closed here first, because the completer trims the whitespace it ends with.
Nesting past MAX_NESTING_DEPTH is an OutputParseError (json.loads would raise RecursionError, and
everything downstream recurses too). NaN, the infinities and numbers past a float's range (`1e999`)
are null, each with a `non_finite_number` repair (`finite.py`): the rule of the streaming parsers.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from partial_json_parser import Allow
from partial_json_parser import loads as complete_partial_json

from ...errors import OutputParseError
from ..base import ParsedOutput, Repair
from ..finite import finite_output
from .lenient import Rewrite, rewrite_json
from .limits import MAX_NESTING_DEPTH, TooDeepError, deeper_than_limit
from .locate import Location, locate_json
from .textpos import LineCursor, where

__all__ = ["extract_json", "parse_json_at"]

_DECODER: Final = json.JSONDecoder()
_COMPLETABLE: Final = Allow.STR | Allow.COLLECTION
# An escape cut short at the end of an open string: an odd run of backslashes, maybe `u` and hex digits.
_CUT_ESCAPE: Final = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?\Z")


def extract_json(text: str, *, format_name: str = "json") -> ParsedOutput:
    """Find, repair and parse the JSON value in `text`. OutputParseError when there is none."""
    return finite_output(_extract(text, format_name), text)


def _extract(text: str, format_name: str) -> ParsedOutput:
    if not text or text.isspace():  # as `not text.strip()`, without a copy of a megabyte reply
        raise OutputParseError("the reply is empty", text=text, format_name=format_name)
    try:
        return ParsedOutput(_checked_depth(json.loads(text), text, 0, len(text)), [])
    except ValueError:
        pass
    except (RecursionError, TooDeepError):
        raise _too_deep(text, format_name) from None
    location = locate_json(text)
    if location is None:
        raise OutputParseError("no JSON value found (no `{`, `[` or ```json fence)", text=text, format_name=format_name)
    # Read to the end of the text, not to the fence's end: a string may hold ``` and a closing fence
    # outside a string stops the lenient reader anyway.
    value, repairs, end = parse_json_at(text, location.start, len(text), format_name=format_name)
    return ParsedOutput(value, [*_extraction(text, location, end), *repairs])


def _checked_depth(value: Any, text: str, start: int, end: int) -> Any:
    """`value`, or TooDeepError. Counting brackets (fast, in C) bounds the depth: most values need no walk."""
    if text.count("[", start, end) + text.count("{", start, end) > MAX_NESTING_DEPTH and deeper_than_limit(value):
        raise TooDeepError()
    return value


def _too_deep(text: str, format_name: str) -> OutputParseError:
    return OutputParseError(f"the value is nested deeper than the limit of {MAX_NESTING_DEPTH} levels (MAX_NESTING_DEPTH)",
                            text=text, format_name=format_name)


def parse_json_at(text: str, start: int, stop: int, *, format_name: str = "json",
                  lines: LineCursor | None = None, strict_first: bool = True) -> tuple[Any, list[Repair], int]:
    """The value starting at `start` (reading no further than `stop`), its repairs, and its end offset.

    Every position it reports is in `text`, through `lines` when given: a caller reading value after
    value of one text (JSONL's lines) passes one cursor, so each value costs its own length, not the
    length of the text before it. Strict JSON is tried first, in C; `strict_first=False` goes straight
    to the lenient reader, which gives strict JSON the same value and no repair: for a caller whose
    last value needed repairs (the next one likely does too, and the failed strict try costs more
    than the value)."""
    if strict_first:
        try:
            if stop < len(text):  # decode the value's part alone: a strict read never runs on past `stop`
                value, end = _DECODER.raw_decode(text[start:stop])
                end += start
            else:
                value, end = _DECODER.raw_decode(text, start)
            if end <= stop:
                return _checked_depth(value, text, start, end), [], end
        except ValueError:
            pass
        except (RecursionError, TooDeepError):
            raise _too_deep(text, format_name) from None
    lines = lines or LineCursor(text)
    try:
        rewrite = rewrite_json(text, start, stop, lines)
    except TooDeepError:
        raise _too_deep(text, format_name) from None
    if rewrite.complete:
        return _strict(text, rewrite, start, format_name, lines), rewrite.repairs, rewrite.end
    value = _completed(text, rewrite, start, format_name, lines)
    return value, [*rewrite.repairs, _truncation(rewrite, lines)], rewrite.end


def _strict(text: str, rewrite: Rewrite, start: int, format_name: str, lines: LineCursor) -> Any:
    try:
        return json.loads(rewrite.text)
    except ValueError as exc:
        message = f"the JSON value at {lines.where(start)} is invalid and could not be repaired ({exc} in the repaired text)"
        raise OutputParseError(message, text=text, format_name=format_name) from None


def _completed(text: str, rewrite: Rewrite, start: int, format_name: str, lines: LineCursor) -> Any:
    body = _closed_string(rewrite.text) if rewrite.open_string else rewrite.text
    try:
        return complete_partial_json(body, _COMPLETABLE)
    except Exception:  # a third-party parser with no documented error type; the text is kept on our error
        message = f"the JSON value at {lines.where(start)} is truncated and could not be completed"
        raise OutputParseError(message, text=text, format_name=format_name) from None


def _closed_string(body: str) -> str:
    """The repaired text with its open string closed, minus an escape cut short."""
    cut = _CUT_ESCAPE.search(body)
    if cut is not None and len(cut.group(1)) % 2:
        body = body[: cut.start(1) + len(cut.group(1)) - 1]
    return body + '"'


def _truncation(rewrite: Rewrite, lines: LineCursor) -> Repair:
    cause = f"stopped at unexpected {rewrite.stopped_by!r}" if rewrite.stopped_by else "the text ended"
    return Repair(
        "completed_truncated",
        f"{cause} at {lines.where(rewrite.end)} with {rewrite.open_containers} container(s) open; "
        "closed them and dropped any unfinished number or word",
    )


def _extraction(text: str, location: Location, end: int) -> list[Repair]:
    """One repair saying where the value was found, unless it was the whole text."""
    if location.fence_at is not None:
        return [Repair("extracted_from_fence", f"took the JSON from a fenced block opened at {where(text, location.fence_at)}")]
    before, after = text[: location.start].strip(), text[end:].strip()
    if not before and not after:
        return []
    return [Repair(
        "extracted_from_prose",
        f"took the JSON value at {where(text, location.start)}, ignoring {len(before)} characters of text "
        f"before it and {len(after)} after it",
    )]
