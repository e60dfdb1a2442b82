"""Alignment: each leaf of an output located in the named input texts, exact, normalised or fuzzy."""

from __future__ import annotations

import pytest

from dotprompt.grounding import Limits, ground, input_sources
from dotprompt.schema.picoschema import to_json_schema

INVOICE = ("ACME GmbH, VAT DE123456789\nInvoice INV-2026-0042, 2 November 2026\n"
           "3 x Blue widgets, large @ 1.234,50 EUR\n1 x Shipping @ 5.00 EUR\nTotal:  42.50\u00a0EUR")


def located(output, text=INVOICE, schema=None, **limits):
    return ground(output, {"text": text}, schema, Limits(**limits) if limits else Limits())


def test_every_span_slices_the_input_to_its_text():
    output = {"number": "INV-2026-0042", "date": "2026-11-02", "vendor": {"name": "acme gmbh"},
              "lines": [{"description": "large blue widget", "price": 1234.5}], "total": "EUR 42.50"}
    grounding = located(output)
    assert all(f.grounded for f in grounding.values()), grounding.to_dict()
    for field in grounding.values():
        for span in field.spans:
            assert INVOICE[span.start:span.end] == span.text and span.variable == "text"


@pytest.mark.parametrize(("value", "status", "text"), [
    ("INV-2026-0042", "exact", "INV-2026-0042"),
    ("acme   GMBH", "normalised", "ACME GmbH"),  # case and whitespace
    ("42.50 EUR", "normalised", "42.50\u00a0EUR"),  # a no-break space is whitespace
    (1234.5, "normalised", "1.234,50"),  # German decimal comma, dot grouping
    (42.5, "normalised", "42.50"),
    (3, "exact", "3"),
    ("2026-11-02", "normalised", "2 November 2026"),
    ("large blue widget", "fuzzy", "Blue widgets, large"),  # reordered, plural
])
def test_each_step_finds_what_it_is_for(value, status, text):
    field = located({"v": value})["$.v"]
    assert (field.status, field.text) == (status, text)


@pytest.mark.parametrize("value", ["USD", "DE999999999", 42.51, "2026-11-03", "EU", "large red gadget", 12])
def test_values_the_input_does_not_hold_are_ungrounded(value):
    # "EU" is inside "EUR" and 12 inside "2026": a match never cuts a word or a number in two.
    assert located({"v": value})["$.v"].status == "ungrounded"


@pytest.mark.parametrize(("written", "value"), [
    ("1,234.50", 1234.5), ("1.234,50", 1234.5), ("1 234,50", 1234.5), ("1'234.50", 1234.5),
    ("€1,234.50", 1234.5), ("$ 12", 12), ("-5.00", -5), ("-5.00", 5), ("1,234", 1234), ("1,234", 1.234),
    ("12,5", 12.5), ("1\u202f234,5", 1234.5)])
def test_numbers_in_their_written_forms(written, value):
    field = located({"v": value}, text=f"Amount due: {written} today")["$.v"]
    assert field.status in ("exact", "normalised") and field.text in written, field


@pytest.mark.parametrize("written", ["2026-11-02", "02.11.2026", "11/02/2026", "2 Nov 2026", "November 2, 2026",
                                     "Nov. 2nd, 2026", "2. November 2026", "2 novembre 2026", "02/11/26",
                                     "2-Nov-2026", "02/nov/26"])
def test_dates_in_their_written_forms(written):
    field = located({"v": "2026-11-02"}, text=f"Issued on {written}.")["$.v"]
    assert field.status in ("exact", "normalised") and field.text == written


def test_not_applicable_booleans_nulls_enums_and_derived_fields():
    schema = to_json_schema({"paid": "boolean", "note?": "string", "kind(enum)": ["invoice", "credit"],
                             "total(derived, sum of the lines)": "number",
                             "summary(derived)": {"words": "string"}}, lambda name: None)
    output = {"paid": True, "note": None, "kind": "credit", "total": 999.0, "summary": {"words": "made up"}}
    grounding = located(output, schema=schema)
    assert {p: (f.status, f.reason) for p, f in grounding.items()} == {
        "$.paid": ("not_applicable", "boolean"), "$.note": ("not_applicable", "null"),
        "$.kind": ("not_applicable", "enum"), "$.total": ("not_applicable", "derived"),
        "$.summary.words": ("not_applicable", "derived")}


def test_x_derived_through_refs_and_nullable_branches():
    schema = {"$defs": {"money": {"type": "number", "x-derived": True}},
              "type": "object", "properties": {
                  "total": {"$ref": "#/$defs/money"},
                  "items": {"type": "array", "items": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/money"}]}}}}
    grounding = located({"total": 1.0, "items": [2.0, 3.0]}, schema=schema)
    assert {f.status for f in grounding.values()} == {"not_applicable"} and len(grounding) == 3


def test_paths_at_any_depth_and_each_variable_named():
    sources = input_sources({"doc": {"pages": ["nothing here", "Order 77-A from Bob"]}, "note": "call Alice", "n": 5})
    assert sources == {"doc.pages[0]": "nothing here", "doc.pages[1]": "Order 77-A from Bob", "note": "call Alice",
                       "n": "5"}
    grounding = ground({"a": {"b": [{"c": ["77-A"]}]}, "who": "alice", "count": 5}, sources)
    assert grounding["$.a.b[0].c[0]"].spans[0].to_dict() == {"variable": "doc.pages[1]", "start": 6, "end": 10,
                                                             "text": "77-A"}
    assert grounding["$.who"].variable == "note" and grounding["$.count"].variable == "n"


def test_a_key_that_is_not_a_plain_name_is_quoted_so_each_path_reads_one_way():
    grounding = ground({"a.b": "one", "a": {"b": "two"}, "odd\nkey": ["three"]}, input_sources({"text\nvar": "one two three"}))
    assert list(grounding) == ["$['a.b']", "$.a.b", "$['odd\\nkey'][0]"]  # one line, the newline written \n
    assert grounding["$['a.b']"].variable == "['text\\nvar']"


def test_a_match_never_crosses_two_variables():
    grounding = ground({"v": "alpha beta"}, {"x": "one alpha", "y": "beta two"})
    assert grounding["$.v"].status == "ungrounded"


def test_spans_of_a_repeated_value_are_capped():
    text = " ".join(["EUR"] * 50)
    field = located({"v": "EUR"}, text=text, max_spans=3)["$.v"]
    assert field.status == "exact" and [s.start for s in field.spans] == [0, 4, 8]


def test_exact_occurrence_preferred_over_normalised_ones():
    field = located({"v": "Total"}, text="TOTAL then total then Total")["$.v"]
    assert field.status == "exact" and field.spans[0].start == 22 and len(field.spans) == 3


def test_unicode_nfkc_and_casefold():
    field = located({"v": "Müller Strasse"}, text="Herr MÜLLER\u00a0Straße 5, Cafe\u0301")["$.v"]
    assert field.status == "normalised" and field.text == "MÜLLER\u00a0Straße"
    assert located({"v": "café"}, text="Herr MÜLLER Straße 5, Cafe\u0301")["$.v"].text == "Cafe\u0301"


@pytest.mark.parametrize("value", ["2026-03-14", "March 14, 2026", "1,234.56 EUR", "1.234,56", "12-Mar-2026"])
def test_an_amount_or_a_date_is_never_found_by_its_words_alone(value):
    # Each word of the value is in the text, but not the amount or the date it writes: a wrong date is no paraphrase.
    text = "Delivered 14.7.2026, invoice 2026 no 14 of march. Total 1 234 EUR 56 cents; 12-Apr-2026"
    assert located({"v": value}, text=text)["$.v"].status == "ungrounded"


def test_a_value_repeated_in_the_output_is_found_the_same_at_each_path():
    grounding = located({"a": ["EUR", "EUR", "eur"], "b": {"c": "EUR"}, "n": [5, 5.0, "5"]}, text="5 x EUR")
    assert [(p, f.status, f.text) for p, f in grounding.items()] == [
        ("$.a[0]", "exact", "EUR"), ("$.a[1]", "exact", "EUR"), ("$.a[2]", "normalised", "EUR"),
        ("$.b.c", "exact", "EUR"), ("$.n[0]", "exact", "5"), ("$.n[1]", "normalised", "5"), ("$.n[2]", "exact", "5")]


def test_fuzzy_needs_every_word_that_carries_meaning():
    # Reordered, inflected, a little word more: a paraphrase. A word the input does not hold: made up.
    assert located({"v": "large widget, blue"}, text="Blue widgets, large")["$.v"].status == "fuzzy"
    assert located({"v": "the large blue widget"}, text="Blue widgets, large")["$.v"].status == "fuzzy"
    assert located({"v": "blue widgets large size"}, text="Blue widgets, large")["$.v"].status == "ungrounded"
    assert located({"v": "blue gadgets small size"}, text="Blue widgets, large")["$.v"].status == "ungrounded"
    assert located({"v": "Kranich Handels GmbH"}, text="From: Kranich Software GmbH")["$.v"].status == "ungrounded"
    assert located({"v": "INV-2026-060"}, text="Invoice INV-2026, page 1")["$.v"].status == "ungrounded"


def test_to_dict_shape():
    data = located({"v": "EUR", "b": False}).to_dict()
    assert data["fields"]["$.v"]["status"] == "exact" and data["fields"]["$.v"]["variable"] == "text"
    assert data["fields"]["$.b"] == {"status": "not_applicable", "value": False, "reason": "boolean"}


@pytest.mark.parametrize(("value", "text", "found"), [
    ("EUR", "4,50 € each", "€"), ("usd", "Total $12", "$"), ("GBP", "£3", "£"), ("AUD", "A$ 40", "A$"),
    ("USD", "A$ 40", None), ("SEK", "120 kr", "kr"), ("SEK", "krona", None), ("XYZ", "xyzzy only", None)])
def test_currency_codes_printed_as_signs(value, text, found):
    field = located({"v": value}, text=text)["$.v"]
    assert field.text == found and field.status == ("normalised" if found else "ungrounded")


def test_the_limits_default_to_the_grounding_limits():
    import dataclasses

    from dotprompt.grounding import limits

    defaults = {f.name: f.default for f in dataclasses.fields(Limits)}
    assert defaults == {name: getattr(limits, f"GROUNDING_{name.upper()}") for name in defaults}
    assert limits.GROUNDING_MAX_INPUT_CHARS == 5_000_000 and limits.GROUNDING_MAX_TRIES == 1_000
