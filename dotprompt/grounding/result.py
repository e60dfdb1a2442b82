"""What grounding found, per JSON path of the output: a status, the spans and the text they hold."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["GROUNDED", "FieldGrounding", "Grounding", "Span", "Status"]

Status = Literal["exact", "normalised", "fuzzy", "ungrounded", "not_applicable"]
GROUNDED: frozenset[str] = frozenset({"exact", "normalised", "fuzzy"})


@dataclass(frozen=True)
class Span:
    """Where a value was found: `input[variable][start:end] == text`."""

    variable: str
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"variable": self.variable, "start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True)
class FieldGrounding:
    """One leaf of the output. `reason` says why a value is not_applicable (boolean, null, enum,
    derived) or, for an ungrounded one, when a limit stopped the search; `score` is the fuzzy score."""

    path: str
    status: Status
    value: Any
    spans: tuple[Span, ...] = ()
    score: float | None = None
    reason: str | None = None

    @property
    def grounded(self) -> bool:
        return self.status in GROUNDED

    @property
    def variable(self) -> str | None:
        return self.spans[0].variable if self.spans else None

    @property
    def text(self) -> str | None:
        return self.spans[0].text if self.spans else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "value": self.value}
        if self.spans:
            out["variable"] = self.spans[0].variable
            out["spans"] = [s.to_dict() for s in self.spans]
        if self.score is not None:
            out["score"] = self.score
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Grounding(Mapping[str, FieldGrounding]):
    """Every leaf of one output by JSON path (`$.vendor.name`, `$.line_items[0].amount`), in output
    order. `skipped` says what a limit left out (None when every leaf was looked at)."""

    fields: dict[str, FieldGrounding] = field(default_factory=dict)
    skipped: str | None = None

    def __getitem__(self, path: str) -> FieldGrounding:
        return self.fields[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def ungrounded(self) -> list[FieldGrounding]:
        return [f for f in self.fields.values() if f.status == "ungrounded"]

    @property
    def all_grounded(self) -> bool:
        return not self.ungrounded and self.skipped is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fields": {path: f.to_dict() for path, f in self.fields.items()}}
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out
