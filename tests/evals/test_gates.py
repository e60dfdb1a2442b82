"""Thresholds and baselines: what fails, with the field, the figures and the rows."""

from __future__ import annotations

import json

import pytest

from dotprompt.errors import DatasetError
from dotprompt.evals.config import EvalSpec
from dotprompt.evals.gates import deltas, load_baseline, regressions, save_baseline, threshold_misses
from dotprompt.evals.metrics import Counts, Scores
from tests.isolation import assert_finishes


def scores() -> Scores:
    return Scores(rows=4, exact=1, fields={"total": Counts(correct=3, wrong=1), "currency": Counts(correct=4),
                                           "date": Counts(correct=2, missing=2)},
                  failing={"total": ["r2"], "date": ["r1", "r3"]})


def test_thresholds_name_field_metric_and_rows():
    spec = EvalSpec("x.test.yaml", 1, "x", overall_min={"f1": 0.9, "exact_match": 0.2},
                    field_min={"total": {"f1": 0.8}, "date": {"recall": 0.6, "precision": 1.0}, "vendor": {"f1": 0.1}})
    found = [m.message() for m in threshold_misses(spec, scores())]
    assert found == ["(overall): f1 below threshold: 0.818 < 0.900",  # P 9/10, R 9/12
                     "total: f1 below threshold: 0.750 < 0.800; rows: r2",
                     "date: recall below threshold: 0.500 < 0.600; rows: r1, r3",
                     "vendor: f1 below threshold: 0.000 < 0.100 (no row's gold data or output has this field: "
                     "check its path)"]


def test_baseline_round_trip_deltas_and_tolerance(tmp_path):
    before = Scores(rows=4, exact=3, fields={"total": Counts(correct=4), "currency": Counts(correct=4),
                                             "date": Counts(correct=3, missing=1), "gone": Counts(correct=2)})
    path = tmp_path / "base.json"
    save_baseline(path, {"x on gold.jsonl": before})
    baseline = load_baseline(path).evals["x on gold.jsonl"]
    found = deltas(baseline, scores())
    by_field = {(d.field, d.metric): d for d in found}
    assert by_field[("total", "f1")].change == pytest.approx(0.75 - 1.0)
    assert by_field[("gone", "f1")].now is None and by_field[("(overall)", "exact_match")].change == pytest.approx(-0.5)
    strict = [m.message() for m in regressions(found, 0.0, scores())]
    assert "total: f1 regressed: 0.750, baseline 1.000 (-0.250); rows: r2" in strict
    assert "gone: f1 regressed: 0.000, baseline 1.000 (-1.000)" in strict
    assert not any(m.startswith("currency") for m in strict)
    lenient = [(m.field, m.metric) for m in regressions(found, 0.3, scores())]
    assert lenient == [("(overall)", "exact_match"), ("gone", "f1")]  # date fell 0.857 -> 0.667: within 0.3


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "the baseline is not JSON"),
    ('{"evals": {}}', "not a dotprompt eval baseline"),
    ('{"dotprompt_eval_baseline": 1, "evals": []}', "not a dotprompt eval baseline"),
])
def test_bad_baselines_name_the_file(tmp_path, text, message):
    path = tmp_path / "base.json"
    path.write_text(text)
    with pytest.raises(DatasetError, match=message):
        load_baseline(path)


@pytest.mark.slow
def test_a_deeply_nested_baseline_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "base.json"
    path.write_text('{"dotprompt_eval_baseline": 1, "evals": ' + "[" * 100_000 + "]" * 100_000 + "}")
    outcome = assert_finishes(f"""
        import json
        from pathlib import Path
        from dotprompt.errors import DatasetError
        from dotprompt.evals.gates import load_baseline
        try:
            load_baseline(Path({str(path)!r}))
        except DatasetError as exc:
            print(json.dumps(str(exc)))
        """, memory_mb=500, timeout=30)
    assert "the baseline is not JSON" in outcome.json()
    json.dumps(outcome.json())


def test_the_same_scores_never_regress_against_their_own_rounded_baseline(tmp_path):
    same = Scores(rows=3, exact=2, fields={"x": Counts(correct=2, wrong=1)})  # F1 2/3 is saved rounded up
    path = tmp_path / "base.json"
    save_baseline(path, {"e": same})
    assert load_baseline(path).evals["e"]["x"]["f1"] > same.fields["x"].f1
    assert regressions(deltas(load_baseline(path).evals["e"], same), 0.0, same) == []


def test_a_gate_on_a_figure_computed_from_nothing_fails_saying_so():
    spec = EvalSpec("x.test.yaml", 1, "x", overall_min={"f1": 0.5, "exact_match": 0.1},
                    field_min={"total": {"precision": 0.9}, "notes": {"recall": 0.5}})
    none_predicted = Scores(rows=2, fields={"total": Counts(missing=2), "notes": Counts(extra=1)},
                            failing={"total": ["r1", "r2"], "notes": ["r2"]})
    found = [m.message() for m in threshold_misses(spec, none_predicted)]
    assert found == ["(overall): f1 below threshold: 0.000 < 0.500",
                     "(overall): exact_match below threshold: 0.000 < 0.100",
                     "total: precision below threshold: 0.000 < 0.900 (no value was predicted); rows: r1, r2",
                     "notes: recall below threshold: 0.000 < 0.500 (no gold value was scored); rows: r2"]
    nothing = Scores(rows=0, failed=["r1", "r2"])
    found = [m.message() for m in threshold_misses(spec, nothing)]
    assert found[:2] == ["(overall): f1 below threshold: 0.000 < 0.500 (nothing was scored: 2 rows failed to run)",
                         "(overall): exact_match below threshold: 0.000 < 0.100 (no row was scored: 2 rows failed to run)"]
