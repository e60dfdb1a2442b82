"""The example gold set as a planted test: every gold value is grounded in its row's input (none
flagged), and values injected into the gold labels that the input does not hold are all flagged."""

from __future__ import annotations

import copy
import json

from dotprompt.grounding import ground, input_sources
from tests.conftest import ROOT

ROWS = [json.loads(line) for line in (ROOT / "examples" / "gold" / "invoices.jsonl").read_text().splitlines()]
INJECTED = {"$.currency": "XAF", "$.vendor.vat_id": "ZZ000111222", "$.invoice_number": "INV-99999-Q",
            "$.issue_date": "1999-12-31"}


def test_no_correct_value_is_flagged_and_spans_slice_the_input():
    sources_of = {row["id"]: input_sources(row["input"]) for row in ROWS}
    flagged = []
    for row in ROWS:
        sources = sources_of[row["id"]]
        for field in ground(row["expected"], sources).values():
            flagged += [(row["id"], field.path, field.value)] if field.status == "ungrounded" else []
            assert all(sources[s.variable][s.start:s.end] == s.text for s in field.spans)
    assert flagged == []


def test_every_injected_value_is_flagged():
    missed = []
    for row in ROWS:
        planted = copy.deepcopy(row["expected"])
        planted.update(currency=INJECTED["$.currency"], invoice_number=INJECTED["$.invoice_number"],
                       issue_date=INJECTED["$.issue_date"], total=round(planted["total"] + 13.37, 2))
        planted["vendor"]["vat_id"] = INJECTED["$.vendor.vat_id"]
        planted["line_items"][0]["unit_price"] = planted["line_items"][0]["unit_price"] + 0.01
        grounding = ground(planted, input_sources(row["input"]))
        for path in [*INJECTED, "$.total", "$.line_items[0].unit_price"]:
            if grounding[path].status != "ungrounded":
                missed.append((row["id"], path, grounding[path].text))
    assert missed == []
