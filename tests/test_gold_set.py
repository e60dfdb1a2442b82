"""The invoice gold set fits the example prompt: every row's input fits the input schema and its
expected answer fits the output schema, so an eval over it scores the model, not the data."""

from __future__ import annotations

import json
from decimal import Decimal

import jsonschema

from dotprompt.prompts.loader import load_prompt
from tests.conftest import ROOT

GOLD = ROOT / "examples" / "gold" / "invoices.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_rows_fit_the_extract_prompt_schemas() -> None:
    meta = load_prompt("extract", directory=ROOT / "prompts").metadata
    rows = _rows()
    assert len(rows) >= 20
    assert len({r["id"] for r in rows}) == len(rows), "ids must be unique"
    for row in rows:
        assert set(row) == {"id", "input", "expected"}, row["id"]
        jsonschema.validate(row["input"], meta["input"]["schema"])
        jsonschema.validate(row["expected"], meta["output"]["schema"])


def test_the_set_is_varied() -> None:
    rows = _rows()
    currencies = {r["expected"]["currency"] for r in rows}
    counts = {len(r["expected"]["line_items"]) for r in rows}
    assert len(currencies) >= 8 and {2, 3}.issubset(counts) and max(counts) >= 8
    assert any("currency_hint" in r["input"] for r in rows)


def test_expected_values_are_printed_in_the_text() -> None:
    # A label the text does not support would score the model against a typo in the gold set.
    for row in _rows():
        text, exp = row["input"]["text"], row["expected"]
        assert exp["invoice_number"] in text, row["id"]
        assert exp["vendor"]["name"] in text, row["id"]
        if "vat_id" in exp["vendor"]:
            assert exp["vendor"]["vat_id"] in text, row["id"]
        for item in exp["line_items"]:
            assert item["description"] in text, (row["id"], item)
        net = sum(Decimal(str(i["quantity"])) * Decimal(str(i["unit_price"])) for i in exp["line_items"])
        assert net <= Decimal(str(exp["total"])), row["id"]


def test_the_few_shot_examples_are_gold_rows_held_out_of_their_score() -> None:
    # extract.fewshot.prompt shows two gold invoices with their answers; its score is taken on the
    # other rows (invoices.heldout.jsonl), so it is not graded on answers it was shown.
    rows = {r["id"]: r for r in _rows()}
    held_out = [json.loads(line) for line in (GOLD.parent / "invoices.heldout.jsonl").read_text(encoding="utf-8").splitlines()]
    shown = sorted(set(rows) - {r["id"] for r in held_out})
    assert shown == ["de-buerobedarf", "us-email-design"]
    assert held_out == [r for r in rows.values() if r["id"] not in shown]  # the gold rows as they are, in order
    source = (ROOT / "prompts" / "extract.fewshot.prompt").read_text(encoding="utf-8")
    for row_id in shown:
        row = rows[row_id]
        assert row["input"]["text"] in source, row_id
        vendor = {"name": row["expected"]["vendor"]["name"], "vat_id": row["expected"]["vendor"].get("vat_id")}
        answer = {**row["expected"], "vendor": vendor}  # a VAT id the invoice lacks is null, as strict mode asks
        assert json.dumps(answer, ensure_ascii=False) in source, row_id
