"""Grounding against gold: per field, how many predicted values grounding found in the input, and
how well "ungrounded" predicts "wrong" (flag precision and recall).

Flag precision needs a flagged value and flag recall a wrong one: without, they are None (shown `-`,
and a gate on them fails saying why), never a vacuous 1.0.

A predicted value is wrong when the comparison says `wrong` or `extra` (the gold has another value, or
none). Values grounding does not look for (booleans, enum labels, derived fields) are left out.
Fields are matched to grounding by pattern (`line_items[*].qty`) and predicted value. Each count
keeps the rows behind it, so a gate on it can name them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .compare import Comparison

__all__ = ["OVERALL", "GroundingCounts", "grounding_counts"]

OVERALL = "(overall)"
# A path's steps: a quoted key (which may hold anything, `[3]` too), a list index, a plain key.
_STEP = re.compile(r"""\['(?:[^'\\]|\\.)*'\]|\["(?:[^"\\]|\\.)*"\]|(\[\d+\])|\.[^.\[]+""")


@dataclass
class GroundingCounts:
    looked: int = 0  # predicted values grounding looked for
    grounded: int = 0
    flagged_wrong: int = 0  # ungrounded and wrong: the flag was right
    flagged_right: int = 0  # ungrounded but correct: a false alarm
    unflagged_wrong: int = 0  # grounded but wrong: the flag missed it
    ungrounded_rows: list[str] = field(default_factory=list)  # ids of rows with an ungrounded value
    false_alarm_rows: list[str] = field(default_factory=list)  # ... with an ungrounded value that was right
    missed_rows: list[str] = field(default_factory=list)  # ... with a wrong value grounding found

    @property
    def rate(self) -> float:
        return self.grounded / self.looked if self.looked else 1.0

    @property
    def flag_precision(self) -> float | None:
        """The share of flagged (ungrounded) values that were wrong; None when nothing was flagged."""
        flagged = self.flagged_wrong + self.flagged_right
        return self.flagged_wrong / flagged if flagged else None

    @property
    def flag_recall(self) -> float | None:
        """The share of wrong values that were flagged; None when no value was wrong."""
        wrong = self.flagged_wrong + self.unflagged_wrong
        return self.flagged_wrong / wrong if wrong else None

    def metric(self, name: str) -> float | None:
        """A figure by the name a gate gives it (`grounded`, `flag_precision`, `flag_recall`); None when
        there is nothing to measure it on (`why_undefined` says why)."""
        return self.rate if name == "grounded" else getattr(self, name)

    def why_undefined(self, name: str) -> str:
        """Why the figure `name` has nothing behind it, for a gate's message."""
        if name == "flag_precision":
            return "no value was flagged: every value was found in the input"
        if name == "flag_recall":
            return "no value was wrong: there was no mistake to flag"
        return "grounding looked for no value"

    def rows_behind(self, name: str) -> list[str]:
        """The rows that lowered the figure `name`: what a failed gate on it names."""
        return {"grounded": self.ungrounded_rows, "flag_precision": self.false_alarm_rows,
                "flag_recall": self.missed_rows}[name]

    def add(self, grounded: bool, wrong: bool, row: str = "") -> None:
        self.looked += 1
        self.grounded += grounded
        self.flagged_wrong += not grounded and wrong
        self.flagged_right += not grounded and not wrong
        self.unflagged_wrong += grounded and wrong
        for rows, counted in ((self.ungrounded_rows, not grounded), (self.false_alarm_rows, not grounded and not wrong),
                              (self.missed_rows, grounded and wrong)):
            if counted and rows[-1:] != [row]:
                rows.append(row)

    def to_dict(self) -> dict[str, Any]:
        return {"grounded_rate": round(self.rate, 6), "flag_precision": _rounded(self.flag_precision),
                "flag_recall": _rounded(self.flag_recall), "looked": self.looked, "grounded": self.grounded,
                "flagged_wrong": self.flagged_wrong, "flagged_right": self.flagged_right,
                "unflagged_wrong": self.unflagged_wrong}


def _rounded(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


def grounding_counts(rows: Iterable[tuple[str, Comparison, Any]]) -> dict[str, GroundingCounts]:
    """Per field (and OVERALL) over (row id, comparison, grounding) of each row; empty when no row was grounded."""
    out: dict[str, GroundingCounts] = {}
    for row_id, comparison, grounding in rows:
        if grounding is None:
            continue
        found = _by_pattern(grounding)
        for result in comparison.fields:
            if result.outcome == "missing":
                continue
            status = _status(found.get(result.field, []), result.predicted)
            if status is None or status == "not_applicable":
                continue
            grounded, wrong = status != "ungrounded", result.outcome in ("wrong", "extra")
            for key in (result.field, OVERALL):
                out.setdefault(key, GroundingCounts()).add(grounded, wrong, row_id)
    return out


def _by_pattern(grounding: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for path, found in grounding.items():
        out.setdefault(_pattern(path), []).append(found)
    return out


def _pattern(path: str) -> str:
    """`$.line_items[2].qty` -> `line_items[*].qty`, the field name the comparison gives it."""
    text = _STEP.sub(lambda m: "[*]" if m.group(1) else m.group(), path[1:])
    return text[1:] if text.startswith(".") else text


def _status(fields: list[Any], predicted: Any) -> str | None:
    """The status of the grounded value equal to `predicted` (the first, when several are)."""
    for found in fields:
        if found.value == predicted:
            return str(found.status)
    return None
