"""Comparing one document's expected output with the model's, field by field.

Objects are walked key by key; lists are aligned item by item first (order-free best matching, or
by position with `match: ordered`), then the paired items are compared; an expected item left
unpaired counts each of its fields as missing, a predicted one each of its fields as extra. A leaf
is `correct` or `wrong` when both sides have it, `missing` when only the gold has it, `extra` when
only the model has it (null counts as absent). A key the gold object does not have is unlabelled in
that row and not scored (gold rows may be partly labelled); a gold `null` labels it absent, and
`strict` makes every unlabelled key absent. Fields are named by pattern (`line_items[*].qty`)
so they add up over items and rows; `where` keeps the concrete place (`line_items[2].qty`).

Aligning a list compares every expected item with every predicted one, and items holding lists
align those again for each comparison: work multiplies with each level of nesting (8x8x8x8
numbers took ~90 s). So a row has EVAL_MAX_ALIGN_WORK steps of alignment in all, counted as the
values visited while trying pairings; when they run out, the list being aligned and every list
after it in the row pair by position, and `Comparison.bounded` names them for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .align import align
from .config import FieldRule, render_steps
from .limits import EVAL_MAX_ALIGN_WORK, EVAL_MAX_DEPTH
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
    bounded: list[str] = field(default_factory=list)  # lists paired by position: the row's alignment work ran out

    @property
    def exact(self) -> bool:
        return all(r.outcome == "correct" for r in self.fields) and all(i.outcome == "matched" for i in self.items)


class ScorerFailedError(Exception):
    """A user's scorer raised or returned something that is not a score; the runner names the row."""


class _OutOfWork(Exception):  # noqa: N818 - a signal, never leaves this module
    """The row's alignment work ran out inside a trial pairing: the list being aligned pairs by position."""


class _Work:
    """One row's alignment budget, and how many trial pairings are running (their visits are what it counts)."""

    __slots__ = ("left", "trials")

    def __init__(self) -> None:
        self.left = EVAL_MAX_ALIGN_WORK
        self.trials = 0


class Comparer:
    """Compares documents under the rules of one eval; `functions` holds the loaded `module:function` scorers."""

    def __init__(self, rules: Mapping[str, FieldRule], functions: Mapping[str, UserScorer] | None = None, *,
                 strict: bool = False) -> None:
        self.rules = rules
        self.functions = functions or {}
        self.strict = strict  # a key the gold object lacks means "absent" (extra when predicted), not "unlabelled"

    def compare(self, expected: Any, predicted: Any) -> Comparison:
        out = Comparison([], [])
        self._walk(expected, predicted, [], "$", out, 0, _Work())
        return out

    def _walk(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int,
              work: _Work) -> None:
        if work.trials:
            work.left -= 1
            if work.left < 0:
                raise _OutOfWork
        name = render_steps(pattern)
        rule = self.rules.get(name)
        if (rule is not None and rule.scorer == "ignore") or (expected is None and predicted is None):
            return
        leaf = (rule is not None and rule.scorer is not None) or depth >= EVAL_MAX_DEPTH
        if not leaf and (isinstance(expected, dict) or (expected is None and isinstance(predicted, dict))):
            self._object(expected, predicted, pattern, where, out, depth, work)
        elif not leaf and (isinstance(expected, list) or (expected is None and isinstance(predicted, list))):
            self._list(expected, predicted, pattern, where, out, depth, rule, work)
        else:
            out.fields.append(self._leaf(expected, predicted, name or "$", where, rule))

    def _object(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int,
                work: _Work) -> None:
        want = expected if isinstance(expected, dict) else {}
        got = predicted if isinstance(predicted, dict) else {}
        # A gold object scores the keys it labels; one it lacks is unlabelled in this row (partly labelled
        # data), unless `strict`. Where the gold has no object at all (null, an extra list item), every
        # predicted key is extra: the gold says the whole thing is absent.
        labelled_only = isinstance(expected, dict) and not self.strict
        for key in [*want, *(k for k in got if k not in want and not labelled_only)]:
            self._walk(want.get(key), got.get(key), [*pattern, key], f"{where}{_step(key)}", out, depth + 1, work)

    def _list(self, expected: Any, predicted: Any, pattern: list[Any], where: str, out: Comparison, depth: int,
              rule: FieldRule | None, work: _Work) -> None:
        want = expected if isinstance(expected, list) else []
        got = predicted if isinstance(predicted, list) else []
        items, name = [*pattern, None], render_steps(pattern) or "$"
        if rule is not None and rule.match == "ordered":
            pairs, lost, extra = _by_position(want, got)
        else:
            pairs, lost, extra = self._aligned(want, got, items, where, out, depth, rule, work)
        for e, p in pairs:
            out.items.append(ItemResult(name, "matched", f"{where}[{e}]"))
            self._walk(want[e], got[p], items, f"{where}[{e}]", out, depth + 1, work)
        for e in lost:
            out.items.append(ItemResult(name, "missing", f"{where}[{e}]"))
            self._walk(want[e], None, items, f"{where}[{e}]", out, depth + 1, work)
        for p in extra:
            out.items.append(ItemResult(name, "extra", f"{where}[+{p}]"))
            self._walk(None, got[p], items, f"{where}[+{p}]", out, depth + 1, work)

    def _aligned(self, want: list[Any], got: list[Any], items: list[Any], where: str, out: Comparison, depth: int,
                 rule: FieldRule | None, work: _Work) -> tuple[list[tuple[int, int]], list[int], list[int]]:
        """The best pairing while the row's work lasts; by position (and noted) once it has run out."""
        try:
            if work.left <= 0:
                raise _OutOfWork
            return align(want, got, lambda e, p: self.similarity(e, p, items, depth + 1, work),
                         rule.min_similarity if rule else 0.0)
        except _OutOfWork:
            if work.trials:  # inside a trial pairing of an outer list: that list is the one to give up
                raise
        out.bounded.append(where)
        return _by_position(want, got)

    def similarity(self, expected: Any, predicted: Any, pattern: list[Any], depth: int, work: _Work) -> float:
        """The share of an item's fields that agree: how well two list items pair up."""
        trial = Comparison([], [])
        work.trials += 1
        try:
            self._walk(expected, predicted, pattern, "", trial, depth, work)
        finally:
            work.trials -= 1
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


def _by_position(want: list[Any], got: list[Any]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    pairs = list(zip(range(len(want)), range(len(got)), strict=False))
    return pairs, list(range(len(pairs), len(want))), list(range(len(pairs), len(got)))


def _step(key: str) -> str:
    text = render_steps([key])
    return text if text.startswith("[") else "." + text
