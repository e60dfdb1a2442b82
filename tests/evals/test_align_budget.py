"""Aligning lists inside lists is bounded per row: a gold row of 8x8x8x8 numbers (36 KB) took ~90 s and
five levels took hours, since every pairing of the outer list aligned the inner ones again. Past
EVAL_MAX_ALIGN_WORK the row's lists pair by position, and the comparison, the terminal report, the
Markdown and the JSON say which lists were paired so; small rows score exactly as before."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dotprompt.evals.compare import Comparer
from dotprompt.evals.config import EvalSpec
from dotprompt.evals.datasets import GoldRow
from dotprompt.evals.metrics import score_rows
from dotprompt.evals.report import Verdict, markdown, print_report, to_json
from dotprompt.evals.run import Arm, ArmResult, RowResult
from tests.isolation import assert_finishes

NESTED = """
import json, time
from dotprompt.evals.compare import Comparer

def cube(levels, width=8, start=0):
    if levels == 0:
        return start
    return [cube(levels - 1, width, start * width + i) for i in range(width)]

def reversed_all(value):
    return [reversed_all(v) for v in reversed(value)] if isinstance(value, list) else value

gold = cube({levels})
predicted = reversed_all(gold)  # every list reversed: only alignment pairs it up
began = time.perf_counter()
result = Comparer({{}}).compare(gold, predicted)
print(json.dumps({{"seconds": time.perf_counter() - began, "bounded": result.bounded, "size": len(json.dumps(gold)),
                  "fields": len(result.fields), "correct": sum(f.outcome == "correct" for f in result.fields)}}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("levels", [4, 5])
def test_nested_lists_are_bounded_per_row_and_say_so(levels):
    # ~5 s on a quiet machine, whatever the depth (the old code: ~90 s for 4 levels, hours for 5)
    found = assert_finishes(NESTED.format(levels=levels), timeout=90, memory_mb=1000).json()
    assert found["fields"] == 8 ** levels  # every gold number is scored once, paired or not
    assert found["bounded"] and found["bounded"][0] == "$", found["bounded"]  # the outer list went by position


def test_small_nested_lists_align_exactly_as_before():
    result = Comparer({}).compare({"m": [[1, 2], [3, 4], [5, 6]]}, {"m": [[6, 5], [2, 1], [4, 3]]})
    assert result.bounded == []
    assert [f.outcome for f in result.fields] == ["correct"] * 6 and result.exact


def test_a_long_flat_list_is_within_the_budget():
    gold = [{"x": i, "y": str(i)} for i in range(200)]
    result = Comparer({}).compare(gold, list(reversed(gold)))
    assert result.bounded == [] and result.exact


def arm_result(comparisons) -> ArmResult:
    spec = EvalSpec(file="p.test.yaml", line=1, prompt="p", dataset=Path("gold.jsonl"))
    rows = [RowResult(GoldRow(str(i), {}, None, i + 1), None, c) for i, c in enumerate(comparisons)]
    return ArmResult(spec, Arm(), rows, score_rows((r.row.id, r.comparison) for r in rows))


def test_the_reports_name_the_rows_and_lists_paired_by_position(monkeypatch):
    monkeypatch.setattr("dotprompt.evals.compare.EVAL_MAX_ALIGN_WORK", 10)
    bounded = Comparer({}).compare({"a": [[1, 2, 3], [4, 5, 6]]}, {"a": [[4, 5, 6], [1, 2, 3]]})
    small = Comparer({}).compare({"a": [1]}, {"a": [1]})
    assert bounded.bounded == ["$.a", "$.a[0]", "$.a[1]"] and small.bounded == []  # the inner ones after it too
    verdict = Verdict(arm_result([small, bounded]), [])
    out = io.StringIO()
    print_report([verdict], out, fancy=False)
    note = [line for line in out.getvalue().splitlines() if line.startswith("NOTE")]
    assert len(note) == 1 and "1 of 2 rows" in note[0] and "by position" in note[0], note
    assert "row 1: $.a, $.a[0], $.a[1]" in note[0], note
    assert "by position" in markdown([verdict]) and "row 1: $.a" in markdown([verdict])
    rows = to_json([verdict])["evals"][0]["rows"]
    assert [r["bounded"] for r in rows] == [[], ["$.a", "$.a[0]", "$.a[1]"]]
    json.dumps(rows)
