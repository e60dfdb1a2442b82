"""A grounding read back from the form `Grounding.to_dict` writes (the run log keeps it so, as does
the eval report): what `dotprompt logs ID` shows. A field the log holds in a shape this version does
not know reads as ungrounded, never as found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .result import GROUNDED, FieldGrounding, Grounding, Span, Status

__all__ = ["grounding_from_dict"]

_STATUSES: frozenset[str] = frozenset({*GROUNDED, "ungrounded", "not_applicable"})


def grounding_from_dict(data: Mapping[str, Any]) -> Grounding:
    fields = data.get("fields")
    found = {str(path): _field(str(path), value) for path, value in
             (fields.items() if isinstance(fields, Mapping) else ()) if isinstance(value, Mapping)}
    skipped = data.get("skipped")
    return Grounding(found, skipped if isinstance(skipped, str) else None)


def _field(path: str, data: Mapping[str, Any]) -> FieldGrounding:
    status: Status = data["status"] if data.get("status") in _STATUSES else "ungrounded"
    spans = data.get("spans")
    score, reason = data.get("score"), data.get("reason")
    return FieldGrounding(path, status, data.get("value"),
                          tuple(_span(s) for s in spans if isinstance(s, Mapping)) if isinstance(spans, list) else (),
                          score if isinstance(score, (int, float)) else None, reason if isinstance(reason, str) else None)


def _span(data: Mapping[str, Any]) -> Span:
    start, end = data.get("start"), data.get("end")
    return Span(str(data.get("variable")), start if isinstance(start, int) else 0, end if isinstance(end, int) else 0,
                str(data.get("text") or ""))
