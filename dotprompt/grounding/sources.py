"""The input a prompt ran with, as named texts: each input variable, nested values by path.

All of them are joined into one text (with a NUL between, which no word, number or date pattern
crosses) so one normalisation and one index serve every value; spans are mapped back to the
variable they fall in and to offsets inside it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from typing import Any

from ..schema.compiled import json_path
from .limits import GROUNDING_MAX_SOURCES

__all__ = ["SEPARATOR", "Joined", "cited_sources", "input_sources"]

SEPARATOR = "\x00"


def input_sources(data: Any, *, max_sources: int = GROUNDING_MAX_SOURCES) -> dict[str, str]:
    """Named texts of an input: `{"text": ..., "customer.name": ..., "lines[0]": ...}`; numbers as
    written by JSON; booleans and nulls carry no text. A non-mapping input is named `input`."""
    out: dict[str, str] = {}
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data if isinstance(data, Mapping) else {"input": data})]
    while stack and len(out) < max_sources:
        parts, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(((*parts, str(k)), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend(((*parts, i), v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            out[_name(parts)] = value.replace(SEPARATOR, " ") if SEPARATOR in value else value  # keeps a PdfText
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[_name(parts)] = str(value)
    return out


def cited_sources(grounding: Any, data: Any) -> dict[str, str]:
    """The input texts that the spans of a grounding (its `to_dict` form, as the run log and the eval
    report keep it) point into, by variable: what a view highlights the spans in."""
    fields = grounding.get("fields") if isinstance(grounding, Mapping) else None
    wanted = {span.get("variable") for found in (fields.values() if isinstance(fields, Mapping) else ())
              if isinstance(found, Mapping) for span in found.get("spans") or () if isinstance(span, Mapping)}
    return {name: text for name, text in input_sources(data).items() if name in wanted} if wanted else {}


def _name(parts: tuple[str | int, ...]) -> str:
    """`text`, `customer.name`, `lines[0]`, `['odd key']`: the JSON path without its `$.`."""
    path = json_path(parts)[1:]
    return path[1:] if path.startswith(".") else path


class Joined:
    """The named texts as one, and the way back from an offset in it to (variable, offset)."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.names = list(sources)
        self.starts: list[int] = []
        at = 0
        for text in sources.values():
            self.starts.append(at)
            at += len(text) + 1
        self.text = SEPARATOR.join(sources.values())

    def locate(self, start: int, end: int) -> tuple[str, int, int] | None:
        """(variable, start, end) inside that variable, or None when the span crosses two."""
        i = bisect_right(self.starts, start) - 1
        if i < 0:
            return None
        if i + 1 < len(self.starts) and end >= self.starts[i + 1]:
            return None
        return self.names[i], start - self.starts[i], end - self.starts[i]
