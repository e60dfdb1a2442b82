"""Field scorers: how one expected value is compared with the model's value, each registered once, here.

A scorer is `score(expected, predicted, options) -> float` in [0, 1]; a field counts as correct when
its score reaches the rule's `threshold` (1 unless the test file says otherwise). Built in: `exact`,
`number` (`tolerance`, `relative`), `text` (Unicode NFKC, case and whitespace folded), `date`
(compared as dates; `formats` adds strptime formats), `ignore`. Any other scorer is a Python
function named `module:function`, called as `function(expected, predicted)`, returning a bool or a
number in [0, 1].
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SCORERS", "Score", "Scorer", "as_score", "normal_text", "scorer", "scorer_names", "to_date", "to_number"]

Score = Callable[[Any, Any, Mapping[str, Any]], float]


@dataclass(frozen=True)
class Scorer:
    name: str
    score: Score
    options: tuple[str, ...] = ()


SCORERS: dict[str, Scorer] = {}


def scorer(name: str, *, options: tuple[str, ...] = ()) -> Callable[[Score], Score]:
    """Register the decorated `score(expected, predicted, options) -> float` as the scorer `name`."""

    def register(score: Score) -> Score:
        SCORERS[name] = Scorer(name, score, options)
        return score

    return register


def scorer_names() -> tuple[str, ...]:
    return tuple(SCORERS)


def as_score(value: Any) -> float:
    """A user function's answer as a score: True/False, or a number clamped to [0, 1] (NaN is 0)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return 0.0 if math.isnan(value) else min(max(float(value), 0.0), 1.0)
    raise TypeError(f"a scorer must return a bool or a number in [0, 1], got {type(value).__name__}")


@scorer("exact")
def _exact(expected: Any, predicted: Any, options: Mapping[str, Any]) -> float:
    # JSON equality: 1 == 1.0, but true is not 1
    return float(expected == predicted and isinstance(expected, bool) == isinstance(predicted, bool))


def to_number(value: Any) -> float | None:
    """A JSON number, or text holding one (`"42.50"`, `" 1e3 "`); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


@scorer("number", options=("tolerance", "relative"))
def _number(expected: Any, predicted: Any, options: Mapping[str, Any]) -> float:
    want, got = to_number(expected), to_number(predicted)
    if want is None or got is None:
        return float(expected == predicted)
    allowed = max(float(options.get("tolerance", 0)), float(options.get("relative", 0)) * abs(want))
    return float(abs(want - got) <= allowed + 1e-9 * max(1.0, abs(want)))


_SPACE = re.compile(r"\s+")


def normal_text(value: Any) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@scorer("text")
def _text(expected: Any, predicted: Any, options: Mapping[str, Any]) -> float:
    return float(normal_text(expected) == normal_text(predicted))


def to_date(value: Any, formats: tuple[str, ...] = ()) -> dt.date | None:
    """An ISO 8601 date or date-time (or text in one of `formats`) as a date; None when it is not one.

    The whole text is read: `2026-03-14 to 2026-04-30` or `2026-03-14 (unsure)` is no date, so it
    scores as text against the gold value (wrong), never as its first ten characters."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for fmt in formats:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
        try:
            found = parse(text)
        except ValueError:
            continue
        return found.date() if isinstance(found, dt.datetime) else found
    return None


@scorer("date", options=("formats",))
def _date(expected: Any, predicted: Any, options: Mapping[str, Any]) -> float:
    formats = tuple(str(f) for f in options.get("formats", ()))
    want, got = to_date(expected, formats), to_date(predicted, formats)
    if want is None or got is None:
        return float(expected == predicted)
    return float(want == got)


@scorer("ignore")
def _ignore(expected: Any, predicted: Any, options: Mapping[str, Any]) -> float:
    return 1.0
