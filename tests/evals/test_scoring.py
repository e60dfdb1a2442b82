"""Scorers, order-free alignment, per-field counts and metrics: each figure checked by hand."""

from __future__ import annotations

import itertools
import random

import pytest

from dotprompt.evals.align import align, best_assignment
from dotprompt.evals.compare import Comparer
from dotprompt.evals.config import FieldRule
from dotprompt.evals.metrics import Counts, score_rows
from dotprompt.evals.scorers import SCORERS
from tests.isolation import assert_finishes


def score(name: str, expected, predicted, **options) -> float:
    return SCORERS[name].score(expected, predicted, options)


def test_builtin_scorers():
    assert score("exact", 1, 1.0) == 1 and score("exact", True, 1) == 0 and score("exact", "a", "A") == 0
    assert score("number", 42.5, "42.50") == 1 and score("number", 42.5, 42.51) == 0
    assert score("number", 42.5, 42.51, tolerance=0.01) == 1 and score("number", 100, 101, relative=0.01) == 1
    assert score("number", 100, 102, relative=0.01) == 0 and score("number", "n/a", "n/a") == 1
    assert score("text", "Müller  GmbH\n", "MÜLLER GMBH") == 1  # case folded (ß/ü too), whitespace collapsed
    assert score("text", "ＡＣＭＥ", "acme") == 1  # NFKC: full-width letters are letters
    assert score("text", "ACME", "ACNE") == 0
    assert score("date", "2026-03-14", "2026-03-14T00:00:00Z") == 1 and score("date", "2026-03-14", "2026-03-15") == 0
    assert score("date", "2026-03-14", "14.03.2026", formats=["%d.%m.%Y"]) == 1
    assert score("date", "2026-03-14", "14.03.2026") == 0  # not a date without the format


def brute_force(matrix: list[list[float]]) -> float:
    rows, cols = len(matrix), len(matrix[0])
    if rows <= cols:
        return max(sum(matrix[r][c] for r, c in zip(range(rows), perm, strict=False))
                   for perm in itertools.permutations(range(cols), rows))
    return max(sum(matrix[r][c] for c, r in zip(range(cols), perm, strict=False))
               for perm in itertools.permutations(range(rows), cols))


@pytest.mark.parametrize("seed", range(30))
def test_assignment_is_optimal_on_random_rectangular_matrices(seed):
    rng = random.Random(seed)
    rows, cols = rng.randint(1, 6), rng.randint(1, 6)
    matrix = [[rng.choice([0, 0.25, 0.5, 1, rng.random()]) for _ in range(cols)] for _ in range(rows)]
    pairs = best_assignment(matrix)
    assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs}) == min(rows, cols)
    assert sum(matrix[r][c] for r, c in pairs) == pytest.approx(brute_force(matrix))


def test_align_pairs_out_of_order_items_and_leaves_the_rest():
    pairs, lost, extra = align(["a", "b", "c"], ["c", "x", "a"], lambda e, p: float(e == p))
    assert sorted(pairs) == [(0, 2), (2, 0)] and lost == [1] and extra == [1]


INVOICE_RULES = {"total": FieldRule("total", "number", {"tolerance": 0.01}),
                 "line_items[*].description": FieldRule("line_items[*].description", "text"),
                 "notes": FieldRule("notes", "ignore")}
GOLD = {"invoice_number": "INV-1", "total": 42.5, "currency": "EUR", "notes": "x",
        "vendor": {"name": "ACME", "vat_id": "DE1"},
        "line_items": [{"description": "Widget", "quantity": 3}, {"description": "Shipping", "quantity": 1}]}


def outcomes(result) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in result.fields:
        out.setdefault(r.field, []).append(r.outcome)
    return out


def test_line_items_are_aligned_before_fields_are_compared():
    predicted = {"invoice_number": "INV-1", "total": 42.504, "currency": "USD", "notes": "anything",
                 "vendor": {"name": "ACME"},
                 "line_items": [{"description": "shipping", "quantity": 1}, {"description": "Widget", "quantity": 1},
                                {"description": "Bell", "quantity": 2}]}
    result = Comparer(INVOICE_RULES).compare(GOLD, predicted)
    assert outcomes(result) == {
        "invoice_number": ["correct"], "total": ["correct"], "currency": ["wrong"],
        "vendor.name": ["correct"], "vendor.vat_id": ["missing"],
        "line_items[*].description": ["correct", "correct", "extra"],
        "line_items[*].quantity": ["wrong", "correct", "extra"]}
    assert [(i.outcome, i.where) for i in result.items] == [
        ("matched", "$.line_items[0]"), ("matched", "$.line_items[1]"), ("extra", "$.line_items[+2]")]
    wrong = next(r for r in result.fields if r.field == "line_items[*].quantity" and r.outcome == "wrong")
    assert (wrong.where, wrong.expected, wrong.predicted) == ("$.line_items[0].quantity", 3, 1)
    assert not result.exact


def test_ordered_lists_pair_by_position_and_missing_items_count_each_field():
    rules = {"line_items": FieldRule("line_items", None, match="ordered")}
    predicted = {**GOLD, "line_items": [{"description": "Shipping", "quantity": 1}]}
    result = Comparer(rules).compare(GOLD, predicted)
    found = outcomes(result)
    assert found["line_items[*].description"] == ["wrong", "missing"]
    assert found["line_items[*].quantity"] == ["wrong", "missing"]
    assert Comparer({}).compare(GOLD, GOLD).exact


def test_null_is_absent_and_a_missing_object_counts_its_fields():
    result = Comparer({}).compare({"a": None, "b": {"c": 1, "d": 2}}, {"a": None, "e": 5})
    assert outcomes(result) == {"b.c": ["missing"], "b.d": ["missing"]}  # `e` is not labelled: not scored
    result = Comparer({}, strict=True).compare({"a": None, "b": {"c": 1, "d": 2}}, {"a": None, "e": 5})
    assert outcomes(result) == {"b.c": ["missing"], "b.d": ["missing"], "e": ["extra"]}


def test_user_scorer_by_module_function(tmp_path):
    rules = {"vat": FieldRule("vat", "mine:close", threshold=0.5)}
    comparer = Comparer(rules, {"mine:close": lambda e, p: 0.6 if e[:2] == p[:2] else False})
    assert outcomes(comparer.compare({"vat": "DE123"}, {"vat": "DE999"})) == {"vat": ["correct"]}
    assert outcomes(comparer.compare({"vat": "DE123"}, {"vat": "FR123"})) == {"vat": ["wrong"]}


def test_counts_metrics_and_document_exact_match():
    counts = Counts(correct=6, wrong=2, missing=1, extra=1)
    assert (counts.support, counts.predicted) == (9, 9)
    assert counts.precision == pytest.approx(6 / 9) and counts.recall == pytest.approx(6 / 9)
    assert Counts(correct=3, missing=1).precision == 1.0 and Counts(correct=3, missing=1).recall == 0.75
    assert Counts(correct=3, missing=1).f1 == pytest.approx(2 * 0.75 / 1.75)
    comparer = Comparer(INVOICE_RULES)
    scores = score_rows([("a", comparer.compare(GOLD, GOLD)),
                         ("b", comparer.compare(GOLD, {**GOLD, "currency": "USD", "total": 40})),
                         ("c", comparer.compare(GOLD, {**GOLD, "currency": "USD"}))])
    assert scores.rows == 3 and scores.exact_match == pytest.approx(1 / 3)
    assert scores.fields["currency"].to_dict()["f1"] == pytest.approx(1 / 3, abs=1e-6)
    assert scores.failing == {"currency": ["b", "c"], "total": ["b"]}
    assert "notes" not in scores.fields  # ignored
    assert scores.lists["line_items"].matched == 6
    overall = scores.overall
    assert (overall.correct, overall.wrong) == (3 * 9 - 3, 3)


@pytest.mark.slow
def test_deep_or_long_model_output_is_bounded():
    # Model output is untrusted: 10,000 predicted items against 300 gold ones (aligned past the cap by
    # position), and objects nested 300 deep (compared as a whole value below the depth cap).
    outcome = assert_finishes("""
        import json
        from dotprompt.evals.compare import Comparer
        gold = {"items": [{"x": i} for i in range(300)]}
        result = Comparer({}).compare(gold, {"items": [{"x": i} for i in range(10_000)]})
        deep = 1
        for _ in range(300):
            deep = {"a": deep}
        nested = Comparer({}).compare({"a": 1}, deep)
        print(json.dumps([sum(r.outcome == "extra" for r in result.fields),
                          sum(r.outcome == "correct" for r in result.fields), [r.outcome for r in nested.fields]]))
        """, timeout=60, memory_mb=800)
    extra, correct, nested = outcome.json()
    assert extra == 10_000 - 300 and correct == 300
    assert nested == ["wrong"]


@pytest.mark.parametrize("predicted", ["2026-03-14 to 2026-04-30", "2026-03-149", "2026-03-14 (unsure)",
                                       "2026-03-14T", "2026-03-14T99:00", "2026-03-14x", "2026-03-1"])
def test_the_date_scorer_reads_the_whole_value_not_its_first_ten_characters(predicted):
    assert score("date", "2026-03-14", predicted) == 0
    assert score("date", predicted, "2026-03-14") == 0  # a gold value is read the same way


@pytest.mark.parametrize("predicted", ["2026-03-14", " 2026-03-14 ", "2026-03-14T10:30:00", "2026-03-14 10:30",
                                       "2026-03-14T23:59:59.5+05:00", "2026-03-14T00:00:00Z", "20260314"])
def test_the_date_scorer_still_reads_iso_dates_and_date_times(predicted):
    assert score("date", "2026-03-14", predicted) == 1
