"""Grounding as a gate, measured on the planted set (tests/grounding/planted.py): every made-up value
flagged, copied values found (at least 99 %), and every span found exactly where the value was planted."""

from __future__ import annotations

from collections import Counter

import pytest

from dotprompt.grounding import ground
from tests.grounding import planted

PER_CLASS = 60


def outcome(case: planted.Case) -> str:
    field = ground({"v": case.value}, {"text": case.document})["$.v"]
    if case.made_up:
        return "flagged" if field.status == "ungrounded" else f"grounded {field.status} at {field.text!r}"
    if not field.grounded:
        return f"missed ({field.status})"
    start, end = case.span  # type: ignore[misc]
    first = field.spans[0]
    return "found" if (first.start, first.end) == (start, end) else f"wrong span {first.text!r}"


@pytest.mark.parametrize("make", planted.CLASSES, ids=lambda make: make.__name__)
def test_each_planted_class(make):
    rng = __import__("random").Random(make.__name__)
    failures = []
    for _ in range(PER_CLASS):
        case = make(rng)
        result = outcome(case)
        if result not in ("flagged", "found"):
            failures.append((case.value, result, case.document))
    assert not failures, failures[:5]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_gate_figures_on_a_fresh_set(seed):
    counts: Counter[str] = Counter()
    for case in planted.cases(seed, PER_CLASS):
        result = outcome(case)
        counts["made up" if case.made_up else "copied"] += 1
        if case.made_up:
            counts["flagged"] += result == "flagged"
        else:
            counts["found"] += result == "found" or result.startswith("wrong span")
            counts["exact span"] += result == "found"
    assert counts["flagged"] == counts["made up"], counts  # 100 %: no made-up value passes the gate
    assert counts["found"] >= 0.99 * counts["copied"], counts
    assert counts["exact span"] == counts["found"], counts  # every span is where the value was planted
