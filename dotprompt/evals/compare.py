"""Comparing one document's expected output with the model's, field by field.

Objects are walked key by key; lists are aligned item by item first (order-free best matching, or
by position with `match: ordered`), then the paired items are compared; an expected item left
unpaired counts each of its fields as missing, a predicted one each of its fields as extra. A leaf
is `correct` or `wrong` when both sides have it, `missing` when only the gold has it, `extra` when
only the model has it (null counts as absent). Fields are named by pattern (`line_items[*].qty`)
so they add up over items and rows; `where` keeps the concrete place (`line_items[2].qty`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..settings import EVAL_MAX_DEPTH
from .align import align
from .config import FieldRule, render_steps
from .scorers import SCORERS, as_score

__all__ = ["Comparer", "Comparison", "FieldResult", "ItemResult", "ScorerFailedError"]

Outcome = Literal["correct", "wrong", "missing", "extra"]
ItemOutcome = Literal["matched", "missing", "extra"]
UserScorer = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class FieldResult:
    field: str
    outcome: Outcome
    where: str
    expected: Any = None
    predicted: Any = None


@dataclass(frozen=True)
class ItemResult:
    list: str
    outcome: ItemOutcome
    where: str


@dataclass
class Comparison:
    fields: list[FieldResult]
    items: list[ItemResult]

    @property
    def exact(self) -> bool:
        return all(r.outcome == "correct" for r in self.fields) and all(i.outcome == "matched" for i in self.items)


class ScorerFailedError(Exception):
    """A user's scorer raised or returned something that is not a score; the runner names the row."""


class Comparer:
    """Compares documents under the rules of one eval; `functions` holds the loaded `module:function` scorers."""

    def __init__(self, rules: Mapping[str, FieldRule], functions: Mapping[str, UserScorer] | None = None) -> None:
        self.rules = rules
        self.functions = functions or {}

    def compare(self, expected: Any, predicted: Any) -> Comparison:
        out = Comparison([], [])
        self._walk(expected, predicted, [], "$", out, 0)
        return out

    def _walk(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int) -> None:
        name = render_steps(pattern)
        rule = self.rules.get(name)
        if (rule is not None and rule.scorer == "ignore") or (expected is None and predicted is None):
            return
        leaf = (rule is not None and rule.scorer is not None) or depth >= EVAL_MAX_DEPTH
        if not leaf and (isinstance(expected, dict) or (expected is None and isinstance(predicted, dict))):
            self._object(expected, predicted, pattern, where, out, depth)
        elif not leaf and (isinstance(expected, list) or (expected is None and isinstance(predicted, list))):
            self._list(expected, predicted, pattern, where, out, depth, rule)
        else:
            out.fields.append(self._leaf(expected, predicted, name or "$", where, rule))

    def _object(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int) -> None:
        want = expected if isinstance(expected, dict) else {}
        got = predicted if isinstance(predicted, dict) else {}
        for key in [*want, *(k for k in got if k not in want)]:
            self._walk(want.get(key), got.get(key), [*pattern, key], f"{where}{_step(key)}", out, depth + 1)

    def _list(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int,
              rule: FieldRule | None) -> None:
        want = expected if isinstance(expected, list) else []
        got = predicted if isinstance(predicted, list) else []
        items, name = [*pattern, None], render_steps(pattern) or "$"
        if rule is not None and rule.match == "ordered":
            pairs = list(zip(range(len(want)), range(len(got)), strict=False))
            lost, extra = list(range(len(pairs), len(want))), list(range(len(pairs), len(got)))
        else:
            pairs, lost, extra = align(want, got, lambda e, p: self.similarity(e, p, items, depth + 1),
                                       rule.min_similarity if rule else 0.0)
        for e, p in pairs:
            out.items.append(ItemResult(name, "matched", f"{where}[{e}]"))
            self._walk(want[e], got[p], items, f"{where}[{e}]", out, depth + 1)
        for e in lost:
            out.items.append(ItemResult(name, "missing", f"{where}[{e}]"))
            self._walk(want[e], None, items, f"{where}[{e}]", out, depth + 1)
        for p in extra:
            out.items.append(ItemResult(name, "extra", f"{where}[+{p}]"))
            self._walk(None, got[p], items, f"{where}[+{p}]", out, depth + 1)

    def similarity(self, expected: Any, predicted: Any, pattern: list[Any], depth: int) -> float:
        """The share of an item's fields that agree: how well two list items pair up."""
        trial = Comparison([], [])
        self._walk(expected, predicted, pattern, "", trial, depth)
        if not trial.fields:
            return 1.0
        return sum(r.outcome == "correct" for r in trial.fields) / len(trial.fields)

    def _leaf(self, expected: Any, predicted: Any, name: str, where: str, rule: FieldRule | None) -> FieldResult:
        if predicted is None:
            return FieldResult(name, "missing", where, expected, None)
        if expected is None:
            return FieldResult(name, "extra", where, None, predicted)
        score = self.score(expected, predicted, rule)
        threshold = rule.threshold if rule is not None else 1.0
        return FieldResult(name, "correct" if score >= threshold else "wrong", where, expected, predicted)

    def score(self, expected: Any, predicted: Any, rule: FieldRule | None) -> float:
        scorer = rule.scorer if rule is not None and rule.scorer is not None else "exact"
        if scorer in SCORERS:
            return SCORERS[scorer].score(expected, predicted, rule.options if rule is not None else {})
        try:
            return as_score(self.functions[scorer](expected, predicted))
        except Exception as exc:  # the user's function: its failure is reported on the row, not a traceback
            raise ScorerFailedError(f"scorer {scorer} raised {type(exc).__name__}: {exc}") from None


def _step(key: str) -> str:
    text = render_steps([key])
    return text if text.startswith("[") else "." + text
