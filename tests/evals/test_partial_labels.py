"""Partly labelled gold rows: a row scores the fields it labels; `null` labels "absent"; `strict` makes
every unlabelled field "absent"; `ignore:` leaves fields out of every row."""

from __future__ import annotations

import json

import pytest

from dotprompt.errors import TestFileError
from dotprompt.evals.compare import Comparer
from dotprompt.evals.config import load_eval
from dotprompt.evals.datasets import read_dataset
from dotprompt.evals.metrics import score_rows
from tests.cli_inprocess import cli
from tests.evals.eval_project import project


def outcomes(result) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in result.fields:
        out.setdefault(r.field, []).append(r.outcome)
    return out


PREDICTED = {"total": 12, "vendor": {"name": "ACME", "vat_id": "DE1"}, "currency": "EUR", "notes": "n"}


def test_a_row_scores_only_the_fields_it_labels():
    result = Comparer({}).compare({"total": 12, "vendor": {"name": "ACME"}}, PREDICTED)
    assert outcomes(result) == {"total": ["correct"], "vendor.name": ["correct"]}
    assert result.exact


def test_null_labels_a_field_absent_and_strict_makes_every_unlabelled_field_absent():
    gold = {"total": 12, "notes": None, "vendor": {"name": "ACME"}}
    assert outcomes(Comparer({}).compare(gold, PREDICTED)) == {
        "total": ["correct"], "notes": ["extra"], "vendor.name": ["correct"]}
    assert outcomes(Comparer({}, strict=True).compare(gold, PREDICTED)) == {
        "total": ["correct"], "notes": ["extra"], "vendor.name": ["correct"], "vendor.vat_id": ["extra"],
        "currency": ["extra"]}


def test_list_items_the_gold_does_not_have_still_count_every_field_extra():
    gold = {"items": [{"d": "a"}]}
    result = Comparer({}).compare(gold, {"items": [{"d": "a", "q": 1}, {"d": "b", "q": 2}]})
    assert outcomes(result) == {"items[*].d": ["correct", "extra"], "items[*].q": ["extra"]}


def test_overall_figures_of_partly_labelled_rows_are_those_of_the_labelled_field():
    # Each row labels only the total; the model fills in four more fields. The overall F1 is the
    # total's, not diluted by fields nobody labelled (it was 0.43 where the total scored 0.92).
    gold = [{"total": n} for n in range(12)]
    predicted = [{**PREDICTED, "total": n if n else 99} for n in range(12)]
    scores = score_rows((str(i), Comparer({}).compare(g, p)) for i, (g, p) in enumerate(zip(gold, predicted, strict=True)))
    assert set(scores.fields) == {"total"}
    assert scores.overall.f1 == pytest.approx(scores.fields["total"].f1) == pytest.approx(11 / 12)


def test_strict_and_ignore_are_read_from_the_eval(tmp_path):
    path = tmp_path / "x.test.yaml"
    path.write_text("prompt: x\neval:\n  dataset: g.jsonl\n  strict: true\n  ignore: [notes, '$.vendor.vat_id']\n")
    spec = load_eval(path)
    assert spec.strict is True
    assert {name: rule.scorer for name, rule in spec.rules.items()} == {"notes": "ignore", "vendor.vat_id": "ignore"}
    result = Comparer(spec.rules, strict=spec.strict).compare({"total": 12, "vendor": {"name": "ACME"}}, PREDICTED)
    assert outcomes(result) == {"total": ["correct"], "vendor.name": ["correct"], "currency": ["extra"]}


@pytest.mark.parametrize(("section", "where", "message"), [
    ("  strict: yes please\n", ":4:11:", "eval.strict must be true or false, got 'yes please'"),
    ("  ignore: notes\n", ":4:11:", "eval.ignore must be a list of field paths"),
    ("  ignore: ['a..b']\n", ":4:12:", "eval.ignore:"),
    ("  fields: {notes: text}\n  ignore: [notes]\n", ":5:12:",
     "eval.ignore: `notes` also has the scorer `text` in eval.fields"),
])
def test_bad_strict_and_ignore_name_the_line(tmp_path, section, where, message):
    path = tmp_path / "x.test.yaml"
    path.write_text(f"prompt: x\neval:\n  dataset: g.jsonl\n{section}")
    with pytest.raises(TestFileError) as caught:
        load_eval(path)
    assert f"x.test.yaml{where} error: {message}" in str(caught.value), str(caught.value)


def test_an_empty_csv_cell_labels_the_field_absent(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("id,input.text,expected.total,expected.note\na,x,1,\n")
    assert read_dataset(path)[0].expected == {"total": 1, "note": None}


def test_the_cli_scores_partly_labelled_rows_by_their_labels(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = {**{k: v for k, v in cli_env.items() if k != "GITHUB_STEP_SUMMARY"}, "CI": "true"}
    rows = [json.loads(line) for line in (prompts / "gold.jsonl").read_text().splitlines()]
    (prompts / "gold.jsonl").write_text("".join(json.dumps({**r, "expected": {"number": r["expected"]["number"]}}) + "\n"
                                                for r in rows))
    (prompts / "inv.test.yaml").write_text("eval:\n  dataset: gold.jsonl\n  min: {precision: 1}\n")
    done = cli("eval", "--record", "--json", "r.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    scores = json.loads((tmp_path / "r.json").read_text())["evals"][0]["scores"]
    assert list(scores["fields"]) == ["number"] and scores["overall"]["f1"] == 1.0
    (prompts / "inv.test.yaml").write_text("eval:\n  dataset: gold.jsonl\n  strict: true\n  min: {precision: 1}\n")
    done = cli("eval", "--json", "r.json", cwd=tmp_path, env=env)
    assert done.returncode == 1 and "(overall): precision below threshold" in done.stdout, done.stdout
