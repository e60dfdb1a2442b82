"""Adding up comparisons: per field precision, recall, F1 and support; per document exact-match rate.

A `wrong` value is both a false positive and a false negative (the model said something, and not the
gold value); `missing` only lowers recall, `extra` only precision. Overall figures are micro-averaged:
every scored value of every field counts once. Lists also report their items (matched, missing,
extra), which do not enter the overall figures (their fields already do).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .compare import Comparison

__all__ = ["Counts", "ItemCounts", "Scores", "score_rows", "stored_metrics"]


@dataclass
class Counts:
    correct: int = 0
    wrong: int = 0
    missing: int = 0
    extra: int = 0

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def support(self) -> int:
        """Values the gold data has."""
        return self.correct + self.wrong + self.missing

    @property
    def predicted(self) -> int:
        return self.correct + self.wrong + self.extra

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.support if self.support else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def metric(self, name: str) -> float:
        return float(getattr(self, name))

    def to_dict(self) -> dict[str, Any]:
        return {"precision": round(self.precision, 6), "recall": round(self.recall, 6), "f1": round(self.f1, 6),
                "support": self.support, "correct": self.correct, "wrong": self.wrong, "missing": self.missing,
                "extra": self.extra}


@dataclass
class ItemCounts:
    matched: int = 0
    missing: int = 0
    extra: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"matched": self.matched, "missing": self.missing, "extra": self.extra}


@dataclass
class Scores:
    """One eval arm's scores over its rows."""

    rows: int = 0
    exact: int = 0
    fields: dict[str, Counts] = field(default_factory=dict)
    lists: dict[str, ItemCounts] = field(default_factory=dict)
    failing: dict[str, list[str]] = field(default_factory=dict)  # field -> ids of rows where it was not all correct
    failed: list[str] = field(default_factory=list)  # ids of rows whose run failed: not scored (`rows` leaves them out)

    @property
    def overall(self) -> Counts:
        total = Counts()
        for counts in self.fields.values():
            total.correct += counts.correct
            total.wrong += counts.wrong
            total.missing += counts.missing
            total.extra += counts.extra
        return total

    @property
    def exact_match(self) -> float:
        return self.exact / self.rows if self.rows else 0.0

    def metric(self, name: str) -> float:
        return self.exact_match if name == "exact_match" else self.overall.metric(name)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "failed": len(self.failed), "exact_match": round(self.exact_match, 6),
                "overall": self.overall.to_dict(),
                "fields": {name: counts.to_dict() for name, counts in sorted(self.fields.items())},
                "lists": {name: counts.to_dict() for name, counts in sorted(self.lists.items())}}


def score_rows(comparisons: Iterable[tuple[str, Comparison]]) -> Scores:
    """Scores of `(row id, comparison)` pairs."""
    scores = Scores()
    for row_id, comparison in comparisons:
        scores.rows += 1
        scores.exact += comparison.exact
        for result in comparison.fields:
            scores.fields.setdefault(result.field, Counts()).add(result.outcome)
            if result.outcome != "correct":
                failing = scores.failing.setdefault(result.field, [])
                if not failing or failing[-1] != row_id:
                    failing.append(row_id)
        for item in comparison.items:
            counts = scores.lists.setdefault(item.list, ItemCounts())
            setattr(counts, item.outcome, getattr(counts, item.outcome) + 1)
    return scores


def stored_metrics(data: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """From a baseline's saved scores: {"(overall)": {...}, field: {...}} with f1, precision, recall (and exact_match)."""
    out = {"(overall)": {**_numbers(data.get("overall")), "exact_match": float(data.get("exact_match", 0.0))}}
    for name, values in (data.get("fields") or {}).items():
        out[str(name)] = _numbers(values)
    return out


def _numbers(values: Any) -> dict[str, float]:
    if not isinstance(values, Mapping):
        return {}
    return {k: float(values[k]) for k in ("f1", "precision", "recall")
            if isinstance(values.get(k), (int, float)) and not isinstance(values.get(k), bool)}
