"""extract_json: the JSON value in a model's final reply, and every repair it took to get it.

The order is cheapest first: the whole text as strict JSON (clean output: no repairs), then the
value located in a fence or in prose decoded strictly, and only then the lenient rewrite.
A truncated value is completed by partial-json-parser, allowing only partial strings and
containers: a number or word cut short is dropped rather than guessed (`12` of `1234`).
"""

from __future__ import annotations

import json
from typing import Any, Final

from partial_json_parser import Allow
from partial_json_parser import loads as complete_partial_json

from .errors import OutputParseError
from .lenient import Rewrite, rewrite_json
from .locate import Location, locate_json
from .textpos import where
from .types import ParsedOutput, Repair

_DECODER: Final = json.JSONDecoder()
_COMPLETABLE: Final = Allow.STR | Allow.COLLECTION


def extract_json(text: str, *, format_name: str = "json") -> ParsedOutput:
    """Find, repair and parse the JSON value in `text`. OutputParseError when there is none."""
    if not text.strip():
        raise OutputParseError("the reply is empty", text=text, format_name=format_name)
    try:
        return ParsedOutput(json.loads(text), [])
    except ValueError:
        pass
    location = locate_json(text)
    if location is None:
        raise OutputParseError("no JSON value found (no `{`, `[` or ```json fence)", text=text, format_name=format_name)
    # Read to the end of the text, not to the fence's end: a string may hold ``` and a closing fence
    # outside a string stops the lenient reader anyway.
    value, repairs, end = parse_json_at(text, location.start, len(text), format_name=format_name)
    return ParsedOutput(value, [*_extraction(text, location, end), *repairs])


def parse_json_at(text: str, start: int, stop: int, *, format_name: str = "json") -> tuple[Any, list[Repair], int]:
    """The value starting at `start` (reading no further than `stop`), its repairs, and its end offset."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except ValueError:
        pass
    else:
        if end <= stop:
            return value, [], end
    rewrite = rewrite_json(text, start, stop)
    if rewrite.complete:
        return _strict(text, rewrite, start, format_name), rewrite.repairs, rewrite.end
    return _completed(text, rewrite, start, format_name), [*rewrite.repairs, _truncation(text, rewrite)], rewrite.end


def _strict(text: str, rewrite: Rewrite, start: int, format_name: str) -> Any:
    try:
        return json.loads(rewrite.text)
    except ValueError as exc:
        message = f"the JSON value at {where(text, start)} is invalid and could not be repaired ({exc} in the repaired text)"
        raise OutputParseError(message, text=text, format_name=format_name) from None


def _completed(text: str, rewrite: Rewrite, start: int, format_name: str) -> Any:
    try:
        return complete_partial_json(rewrite.text, _COMPLETABLE)
    except Exception:  # a third-party parser with no documented error type; the text is kept on our error
        message = f"the JSON value at {where(text, start)} is truncated and could not be completed"
        raise OutputParseError(message, text=text, format_name=format_name) from None


def _truncation(text: str, rewrite: Rewrite) -> Repair:
    cause = f"stopped at unexpected {rewrite.stopped_by!r}" if rewrite.stopped_by else "the text ended"
    return Repair(
        "completed_truncated",
        f"{cause} at {where(text, rewrite.end)} with {rewrite.open_containers} container(s) open; "
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
