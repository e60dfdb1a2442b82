"""What each batch row costs beyond its model call (issue 35, the batch speed regression).

A row's record is written once: when nothing in it needs masking (no known key, no URL credentials)
it is encoded once and not also walked string by string first; whatever does need masking is masked
exactly as before, byte for byte."""

from __future__ import annotations

import asyncio
import json

import pytest

from dotprompt._util import redact as redact_module
from dotprompt._util.redact import redact_data, unmasked_json
from dotprompt.batch import runner
from dotprompt.batch.runner import _encode, read_rows, run_batch
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import define_model

PROMPT = ("---\nmodel: scripted-cost\ninput:\n  schema:\n    n: integer\n    note: string\noutput:\n  schema:\n"
          "    said: string\n---\n{{ n }} {{ note }}")
SECRET = "sk-cost-test-0123456789"


def reply_for(request):
    text = request.messages[0].content[0].text
    n = int(text.split()[0])
    said = {1: f"the key is {SECRET}", 2: "see https://user:pass@example.com/x", 3: "plain"}.get(n % 4, "ok é \" \\ \n")
    return json.dumps({"said": said})


def run(folder, tmp_path, rows: int):
    folder.write("cost.prompt", PROMPT)
    define_model(ScriptedModel(reply_for, name="scripted-cost"))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"n": n, "note": f"row {n}"}) + "\n" for n in range(rows)))
    output = tmp_path / "out.jsonl"
    seen: list[dict] = []
    report = asyncio.run(run_batch(folder.library().load("cost"), read_rows(inputs), output, concurrency=4,
                                   on_row=seen.append))
    return report, output, seen


def test_rows_with_nothing_to_mask_are_not_walked_before_they_are_written(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("COST_TEST_API_KEY", SECRET)
    walked: list[object] = []

    def counting(value, secrets=None):
        walked.append(value)
        return redact_data(value, secrets)

    monkeypatch.setattr(runner, "redact_data", counting)
    report, output, _ = run(folder, tmp_path, 40)
    assert report.succeeded == 40
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 40
    # Rows 1, 5, 9... hold the key and 2, 6, 10... URL credentials: only those 20 are walked to be masked.
    masked = [r for r in records if r["input"]["n"] % 4 in (1, 2)]
    assert len(walked) == len(masked) == 20
    assert all(SECRET not in json.dumps(r) and "user:pass" not in json.dumps(r) for r in records)
    assert {r["output"]["said"] for r in masked} == {"the key is ***", "see https://***@example.com/x"}


def test_what_is_written_is_what_the_walk_and_encoding_wrote(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("COST_TEST_API_KEY", SECRET)
    _, output, seen = run(folder, tmp_path, 12)
    lines = output.read_text(encoding="utf-8").splitlines()
    known = redact_module.known_secrets()
    by_row = {r["row"]: r for r in seen}
    for line in lines:
        record = json.loads(line)
        # The old way: every string masked, then the masked record encoded.
        expected = _encode(redact_data(by_row[record["row"]], known), known).decode("utf-8").rstrip("\n")
        assert line == expected
        assert by_row[record["row"]] == record  # on_row gets the record as written


@pytest.mark.parametrize("value", [
    {"a": f"x{SECRET}y"}, {f"k{SECRET}": 1}, ["mail me at a@b.c"], {"u": "ftp://me:pw@host"},
])
def test_unmasked_json_refuses_what_needs_masking(value):
    assert unmasked_json(value, [SECRET]) is None


def test_unmasked_json_refuses_a_key_json_would_escape():
    assert unmasked_json({"a": "nothing here"}, ['sk-"quoted"-key-123']) is None


def test_unmasked_json_is_the_encoding_when_nothing_needs_masking():
    value = {"é": ["line\nbreak", 1.5, None, True], "n": {"deep": "\"q\" \\"}}
    text = unmasked_json(value, [SECRET])
    assert text is not None and json.loads(text) == value
    assert text == redact_module.redacted_json(value, [SECRET])
