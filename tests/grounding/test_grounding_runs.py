"""Grounding through the real pipeline: prompt files in a temporary folder, the scripted model."""

from __future__ import annotations

import json

import pytest

from dotprompt import OutputValidationError, PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.errors import PromptFileError
from dotprompt.grounding import FieldGrounding, Grounding

INVOICE = "ACME GmbH, VAT DE123456789\nInvoice INV-7, 2 Nov 2026\nTotal: 42,50 EUR\nPaid: yes"
GOOD = {"number": "INV-7", "date": "2026-11-02", "vendor": "ACME GmbH", "total": 42.5, "currency": "EUR"}
BAD = {**GOOD, "currency": "USD"}


def prompt_file(tmp_path, policy: str | None = None, extra: str = "", use: str = ""):
    grounding = f"  grounding: {policy}\n" if policy else ""
    (tmp_path / "invoice.prompt").write_text(
        f"---\nmodel: scripted\n{use}input:\n  schema:\n    text: string\noutput:\n{grounding}  schema:\n"
        "    number: string\n    date: string\n    vendor: string\n    total: number\n    currency: string\n"
        f"{extra}---\nExtract: {{{{ text }}}}\n")
    return PromptLibrary(tmp_path).load("invoice")


def run(prompt, *replies, input=None):
    model = ScriptedModel([json.dumps(r) if isinstance(r, dict) else r for r in replies])
    return prompt.generate_sync({"text": INVOICE} if input is None else input, model=model), model


def test_report_is_the_default_for_json_with_a_schema(tmp_path):
    response, _ = run(prompt_file(tmp_path), BAD)
    assert isinstance(response.grounding, Grounding)
    assert response.output == BAD  # report only: the run succeeds
    currency = response.grounding["$.currency"]
    assert isinstance(currency, FieldGrounding) and currency.status == "ungrounded"
    total = response.grounding["$.total"]
    assert (total.status, total.variable, total.text) == ("normalised", "text", "42,50")
    assert INVOICE[total.spans[0].start:total.spans[0].end] == "42,50"
    assert [f.path for f in response.grounding.ungrounded] == ["$.currency"]


def test_to_dict_carries_grounding_by_path(tmp_path):
    response, _ = run(prompt_file(tmp_path), GOOD)
    fields = response.to_dict()["grounding"]["fields"]
    assert fields["$.number"] == {"status": "exact", "value": "INV-7", "variable": "text",
                                  "spans": [{"variable": "text", "start": 35, "end": 40, "text": "INV-7"}]}
    assert {f["status"] for f in fields.values()} <= {"exact", "normalised"}


def test_off_grounds_nothing(tmp_path):
    response, _ = run(prompt_file(tmp_path, "off"), BAD)
    assert response.grounding is None and "grounding" not in response.to_dict()


def test_text_output_is_not_grounded_by_default(tmp_path):
    (tmp_path / "say.prompt").write_text("---\nmodel: scripted\n---\nSay {{ text }}\n")
    response = PromptLibrary(tmp_path).load("say").generate_sync({"text": "hi"}, model=ScriptedModel(["hello"]))
    assert response.grounding is None


def test_require_fails_naming_the_path_and_what_the_input_says(tmp_path):
    with pytest.raises(OutputValidationError) as caught:
        run(prompt_file(tmp_path, "require"), BAD)
    problem, = caught.value.problems
    assert problem.path == "$.currency" and "'USD' is not in the input" in problem.message
    assert caught.value.response.grounding["$.currency"].status == "ungrounded"


def test_require_re_asks_through_validate_and_retry_then_succeeds(tmp_path):
    prompt = prompt_file(tmp_path, "require", use="use:\n  - validate_and_retry: {max_attempts: 2}\n")
    response, model = run(prompt, BAD, GOOD)
    assert response.output == GOOD and model.calls == 2 and response.grounding.all_grounded
    feedback = model.requests[1].messages[-1].text
    assert "$.currency: 'USD' is not in the input" in feedback
    assert response.attempts[0].problems == [p for p in response.attempts[0].problems if p.startswith("$.currency")]


def test_require_fails_when_the_re_asks_run_out(tmp_path):
    prompt = prompt_file(tmp_path, "require", use="use:\n  - validate_and_retry: {max_attempts: 1}\n")
    with pytest.raises(OutputValidationError) as caught:
        run(prompt, BAD, {**BAD, "vendor": "Globex"})
    assert [p.path for p in caught.value.problems] == ["$.vendor", "$.currency"]
    assert len(caught.value.attempts) == 2


def test_the_nearby_text_is_where_the_field_is_named(tmp_path):
    (tmp_path / "vat.prompt").write_text("---\nmodel: scripted\noutput:\n  grounding: require\n  schema:\n"
                                         "    vat_id: string\n---\n{{ text }}\n")
    with pytest.raises(OutputValidationError) as caught:
        PromptLibrary(tmp_path).load("vat").generate_sync({"text": INVOICE}, model=ScriptedModel(['{"vat_id": "DE999"}']))
    assert "the input says near `text`: 'ACME GmbH, VAT DE123456789 Invoice" in caught.value.problems[0].message


def test_derived_fields_in_picoschema_are_not_applicable_and_never_fail_require(tmp_path):
    prompt = prompt_file(tmp_path, "require", extra="    tax(derived, computed from the total): number\n")
    response, _ = run(prompt, {**GOOD, "tax": 8.07})
    assert response.grounding["$.tax"].status == "not_applicable" and response.grounding["$.tax"].reason == "derived"


def test_a_bad_policy_is_a_prompt_file_error_naming_the_key(tmp_path):
    with pytest.raises(PromptFileError, match=r"output.grounding` must be one of off, report, require") as caught:
        prompt_file(tmp_path, "requried").render({"text": "x"})
    assert "did you mean `require`" in str(caught.value)


def test_defaults_of_the_input_are_grounded_in_too(tmp_path):
    (tmp_path / "d.prompt").write_text("---\nmodel: scripted\ninput:\n  schema:\n    text: string\n    who?: string\n"
                                       "  default:\n    who: Alice Smith\noutput:\n  schema:\n    name: string\n"
                                       "---\n{{ text }}\n")
    response = PromptLibrary(tmp_path).load("d").generate_sync({"text": "x"}, model=ScriptedModel(['{"name": "alice smith"}']))
    assert (response.grounding["$.name"].status, response.grounding["$.name"].variable) == ("normalised", "who")


def test_run_log_entry_carries_grounding(tmp_path):
    (tmp_path / "prompts").mkdir()
    prompt_file(tmp_path / "prompts")
    log = tmp_path / "runs.sqlite"
    library = PromptLibrary(tmp_path / "prompts", log=log)
    library.load("invoice").generate_sync({"text": INVOICE}, model=ScriptedModel([json.dumps(BAD)]))
    library.run_log.flush()
    from dotprompt.observe.runlog import list_runs
    entry, = list_runs(log)
    grounding = entry["response"]["grounding"]["fields"]
    assert grounding["$.currency"]["status"] == "ungrounded" and grounding["$.total"]["status"] == "normalised"


def test_batch_rows_carry_grounding(tmp_path):
    import asyncio

    from dotprompt.batch.runner import read_rows, run_batch

    prompt = prompt_file(tmp_path, "report")
    inputs, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inputs.write_text(json.dumps({"text": INVOICE}) + "\n")
    model = ScriptedModel([json.dumps(BAD)])
    asyncio.run(run_batch(prompt, read_rows(inputs), output, model=model))
    row, = [json.loads(line) for line in output.read_text().splitlines()]
    assert row["grounding"]["fields"]["$.currency"]["status"] == "ungrounded"
    assert row["grounding"]["fields"]["$.number"]["spans"][0]["text"] == "INV-7"
