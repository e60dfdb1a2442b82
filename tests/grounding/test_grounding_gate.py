"""The rules that keep made-up values out and copied ones in, one by one (issue 31)."""

from __future__ import annotations

import pytest

from dotprompt.grounding import ground


def found(value, text):
    return ground({"v": value}, {"text": text})["$.v"]


@pytest.mark.parametrize(("value", "text"), [
    (234.5, "Total 1 234,50 EUR"), (234.5, "Total 1\u202f234,50 EUR"), (567.89, "CHF 1'234'567.89"),
    ("567.89", "CHF 1'234'567.89"), ("234", "Total 1 234 EUR"), ("1 234", "Total 1 234 567 EUR"),
    ("234,50", "Total 1.234,50 EUR"), ("INV-2026", "Invoice INV-2026-060"),
    ("2026-060", "Invoice INV-2026-060"), ("2026-01-03", "Datum: 01.03.2026"), ("USD", "Total: $1,234.56 MXN"),
    ("USD", "Total $ 40 (pesos)"), ("JPY", "合計 ¥1,200 (CNY)"), ("2019-03", "Date: 12 Mar 2019"),
    ("鈴木一", "請求先: 鈴木一郎様"), ("GB81528659", "IBAN GB 815 2865 99"),
])
def test_made_up_values_are_flagged(value, text):
    assert found(value, text).status == "ungrounded"


@pytest.mark.parametrize(("value", "text", "span"), [
    (-63.87, "Contactless -63.87 1,674.69", "-63.87"), (-63.87, "Contactless -63.87\n1,674.69", "-63.87"),
    (1674.69, "Contactless -63.87 1,674.69", "1,674.69"), (1200, "1   1 200,00", "1 200,00"),
    (1, "1   1 200,00", "1"), (1234.5, "Total 1 234,50 EUR", "1 234,50"), (23700, "合計 23,700円", "23,700"),
    ("23,700円", "合計 23,700円です", "23,700"), ("GB815286599", "IBAN: GB 815 2865 99", "GB 815 2865 99"),
    ("500mg", "Dose: 500 mg daily", "500 mg"), ("GB 815 2865 99", "IBAN: GB815286599", "GB815286599"),
    ("2019-03", "Period: Mar 2019", "Mar 2019"), ("2019-03", "Zeitraum: März 2019", "März 2019"),
    ("2019-03", "Period 03/2019", "03/2019"), ("2019-03", "期間 2019年3月", "2019年3月"),
    ("鈴木一郎", "請求先: 鈴木一郎様", "鈴木一郎"), ("山田商事", "山田商事株式会社御中", "山田商事"),
    ("2026-03-01", "Datum: 01.03.2026", "01.03.2026"), ("2026-01-03", "Date: 01/03/2026", "01/03/2026"),
    ("2026-03-01", "Date: 01/03/2026", "01/03/2026"), ("USD", "Total: $1,234.56", "$"),
    ("234", "Qty 12   234 EUR", "234"), ("-63.87", "Contactless -63.87 1,674.69", "-63.87"),
    ("42.50 EUR", "Total: 42.50 EUR", "42.50 EUR"), ("1 234,50", "Total 1 234,50", "1 234,50"),
])
def test_copied_values_are_found_at_their_span(value, text, span):
    field = found(value, text)
    assert field.grounded, field
    assert field.text == span and text[field.spans[0].start:field.spans[0].end] == span
