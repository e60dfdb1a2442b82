"""Text the model writes (a summary, an answer, a reason) is not looked for as if copied: it is
`not_applicable` ("generated text") unless the schema marks it `x-grounded: true` / `(grounded)`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.grounding import ground
from dotprompt.schema.picoschema import to_json_schema

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
MESSAGE = "The lamp arrived broken, the glass is shattered. I want my money back."


def test_the_example_refund_reason_prompt_no_longer_flags_its_justification():
    reply = {"reason": "damaged", "justification": "The customer says the lamp arrived broken and wants a refund."}
    prompt = PromptLibrary(PROMPTS).load("billing/refund_reason")
    response = prompt({"message": MESSAGE}, model=ScriptedModel([json.dumps(reply)]))
    justification = response.grounding["$.justification"]
    assert (justification.status, justification.reason) == ("not_applicable", "generated text")
    assert response.grounding.all_grounded and not response.grounding.ungrounded


@pytest.mark.parametrize("text", [
    "The invoice is from ACME and is due at the end of the month.",  # a summary
    "Your order shipped yesterday and should arrive on Friday, sorry for the wait.",  # a reply body
    "ご注文の商品が破損して届いたため、返金を希望されています。",  # a Japanese sentence
])
def test_free_text_is_generated_text(text):
    field = ground({"summary": text}, {"text": MESSAGE})["$.summary"]
    assert (field.status, field.reason) == ("not_applicable", "generated text")


@pytest.mark.parametrize("value", ["Kranich Software und Beratung GmbH & Co. KG", "INV-2026-060", "Blue widgets, large",
                                   "Meier Transport S.A.", "Consulting March", "<img src=x onerror=alert(1)>",
                                   "Musterstraße 12, 10115 Berlin, Germany"])
def test_names_ids_and_short_values_are_still_flagged(value):
    assert ground({"v": value}, {"text": MESSAGE})["$.v"].status == "ungrounded"


def test_free_text_copied_from_the_input_is_shown_where_it_is():
    field = ground({"quote": "the glass is shattered. I want my money back."}, {"text": MESSAGE})["$.quote"]
    assert field.status == "exact" and field.spans[0].start == MESSAGE.index("the glass")


def test_the_schema_decides_over_the_text():
    schema = to_json_schema({"quote(grounded)": "string", "label": "string"}, lambda name: None)
    assert schema["properties"]["quote"]["x-grounded"] is True
    schema["properties"]["label"]["x-grounded"] = False  # JSON Schema: a field the model writes
    output = {"quote": "the customer wants the money back for the broken lamp", "label": "Broken"}
    found = ground(output, {"text": MESSAGE}, schema)
    assert found["$.quote"].status == "ungrounded"  # marked copied: a sentence not in the input is flagged
    assert (found["$.label"].status, found["$.label"].reason) == ("not_applicable", "generated text")


def test_a_marked_object_marks_what_is_under_it():
    schema = {"type": "object", "properties": {"notes": {"type": "array", "x-grounded": True,
                                                        "items": {"type": "string"}}}}
    found = ground({"notes": ["the customer was very upset about the whole thing"]}, {"text": MESSAGE}, schema)
    assert found["$.notes[0]"].status == "ungrounded"


def test_grounded_takes_a_description_and_may_be_optional():
    schema = to_json_schema({"quote?(grounded, the customer's words)": "string"}, lambda name: None)
    assert schema["properties"]["quote"] == {"type": ["string", "null"], "x-grounded": True,
                                             "description": "the customer's words"}


def test_a_misspelt_grounded_is_named():
    from dotprompt.errors import PicoschemaError

    with pytest.raises(PicoschemaError, match=r"unknown field kind 'grounde'") as raised:
        to_json_schema({"quote(grounde)": "string"}, lambda name: None)
    assert raised.value.hint == "did you mean `grounded`?"
