"""Prompt test cases, recordings and replays, assertions — through the library API."""

from __future__ import annotations

import asyncio
import json

import pytest

from dotprompt import ModelError, PromptLibrary
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.providers import define_model
from dotprompt.testing import TestFileError, TestRun, load_test_file

PROMPT = """---
model: scripted-invoices
input:
  schema:
    text: string
output:
  schema:
    number: string
    total: number
    items(array):
      sku: string
      qty: integer
---
{{ role("system") }}Extract the invoice.
{{ role("user") }}{{ text }}
"""

REPLY = '{"number": "INV-7", "total": 42.5, "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}]}'

TESTS = """cases:
  - name: simple
    input: {text: "INV-7 total 42.50"}
    expect:
      output_subset: {number: INV-7}
      paths:
        - {path: $.total, gte: 40}
        - {path: $.total, lte: 50}
        - {path: $.items, length: 2}
        - {path: "$.items[*].sku", contains: A1}
        - {path: $.number, matches: "^INV-\\\\d+$"}
        - {path: "$.items[0].qty", type: integer}
        - {path: $.number, one_of: [INV-7, INV-8]}
        - {path: "$.items[1]", equals: {sku: B2, qty: 1}}
      text_contains: INV-7
      no_repairs: true
      max_turns_used: 1
      max_tokens: 100
  - name: second
    input: {text: "another"}
"""


@pytest.fixture
def project(folder):
    folder.write("invoices.prompt", PROMPT)
    folder.write("invoices.test.yaml", TESTS)
    return folder


def scripted(*replies, chunk_size=0):
    return define_model(ScriptedModel(list(replies), name="scripted-invoices", chunk_size=chunk_size))


def run(folder, mode, **kwargs):
    cases = load_test_file(folder.path / "invoices.test.yaml", folder.path)
    test_run = TestRun(PromptLibrary(folder.path), mode, **kwargs)
    summaries = asyncio.run(test_run.run(cases))
    test_run.save()
    return {s.case.name: s for s in summaries}


def recordings(folder):
    path = folder.path / "__recordings__" / "invoices.jsonl"
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def test_record_then_replay_offline(project):
    model = scripted(REPLY, REPLY)
    results = run(project, "record")
    assert all(s.passed for s in results.values()), [s.last.failures for s in results.values()]
    _path, lines = recordings(project)
    assert [(e["case"], e["call"], e["source"]) for e in lines] == [("second", 0, "recorded"), ("simple", 0, "recorded")]
    assert lines[1]["response"]["message"]["content"][0]["text"] == REPLY
    assert model.calls == 2
    replayed = run(project, "replay")
    assert all(s.passed and s.last.replayed for s in replayed.values()) and model.calls == 2


def test_replay_without_a_recording_fails_naming_the_case(project):
    scripted()
    results = run(project, "replay")
    failure = results["simple"].last.failures[0]
    assert "no recording for case 'simple'" in failure and "dotprompt test --record" in failure


def test_changed_prompt_no_longer_matches_its_recording(project):
    scripted(REPLY, REPLY)
    run(project, "record")
    (project.path / "invoices.prompt").write_text(PROMPT.replace("Extract the invoice.", "Extract it."))
    failure = run(project, "replay")["simple"].last.failures[0]
    assert "no longer matches its request (messages differ)" in failure


def test_schema_change_the_recorded_output_no_longer_satisfies(project):
    scripted(REPLY, REPLY)
    run(project, "record")
    changed = PROMPT.replace("    total: number\n", "    total: number\n    currency: string\n")
    (project.path / "invoices.prompt").write_text(changed)
    failures = run(project, "replay")["simple"].last.failures
    assert len(failures) == 2
    assert "case 'simple', model call 1, no longer matches its request (messages, output differ)" in failures[0]
    assert failures[1] == "output does not match the output schema at $: 'currency' is a required property"


def test_failed_assertions_say_which_and_why(project):
    bad = '{"number": "X-1", "total": 99, "items": [{"sku": "C3", "qty": 1}]}'
    scripted(f"Sure! {bad}", REPLY)
    failures = run(project, "record")["simple"].last.failures
    joined = "\n".join(failures)
    assert "output_subset: $.number: expected \"INV-7\", got \"X-1\"" in joined
    assert "$.total: expected lte 50, got 99" in joined and "$.items: expected length 2" in joined
    assert "$.items[*].sku: expected contains \"A1\"" in joined and "the output needed repairs" in joined
    assert "text does not contain 'INV-7'" in joined


def test_corrupt_recording_line_fails_its_case_and_the_others_run(project):
    scripted(REPLY, REPLY)
    run(project, "record")
    path, _lines = recordings(project)
    text = path.read_text().splitlines()
    text[1] = text[1][:40]  # the "simple" line, cut short
    path.write_text("\n".join(text) + "\n")
    results = run(project, "replay")
    assert results["second"].passed
    assert any(f.startswith(f"{path}:2: corrupt recording line") for f in results["simple"].last.failures)


def test_model_error_while_recording_keeps_earlier_recordings(project):
    scripted(REPLY, REPLY)
    run(project, "record")
    before = recordings(project)[0].read_text()
    scripted(ModelError("overloaded", status=503), ModelError("overloaded", status=503))
    results = run(project, "record")
    assert "overloaded" in results["simple"].last.failures[0]
    assert recordings(project)[0].read_text() == before


def test_streamed_replies_are_recorded_chunk_by_chunk_and_replayed_as_streams(project):
    scripted(REPLY, REPLY, chunk_size=10)
    lib = PromptLibrary(project.path)
    cases = load_test_file(project.path / "invoices.test.yaml", project.path)
    test_run = TestRun(lib, "record")
    from dotprompt.testing import RecordingModel

    recorder = RecordingModel("scripted-invoices", test_run.store_for(cases[0]), "record", "simple",
                              lambda: __import__("dotprompt").providers.resolve_model("scripted-invoices"))

    async def stream(rec):
        chunks = []
        async for item in lib.load("invoices").generate_stream({"text": "x"}, model=rec):
            chunks.append(item)
        return chunks

    recorded = asyncio.run(stream(recorder))
    entry = next(iter(test_run.store_for(cases[0]).entries.values()))
    assert len(entry.chunks) == len(REPLY) // 10 + 1
    replayer = RecordingModel("scripted-invoices", test_run.store_for(cases[0]), "replay", "simple", lambda: None)
    replayed = asyncio.run(stream(replayer))
    assert [c.text for c in replayed[:-1]] == [c.text for c in recorded[:-1]]
    assert replayed[-1].output == recorded[-1].output


def test_tool_called_and_turns(folder):
    folder.write("calc.prompt", "---\nmodel: scripted-calc\ntools: [add]\n---\nAdd {{ a }} and {{ b }}.")
    folder.write("calc.test.yaml", "cases:\n  - name: adds\n    input: {a: 2, b: 3}\n    expect:\n"
                 "      tool_called: [{name: add, input: {a: 2}}]\n      max_turns_used: 2\n      text_contains: '5'\n"
                 "  - name: wrong tool\n    input: {a: 1, b: 1}\n    expect:\n      tool_called: [multiply]\n")
    define_model(ScriptedModel([[tool_call("add", {"a": 2, "b": 3})], "It is 5", [tool_call("add", {"a": 1, "b": 1})], "2"],
                               name="scripted-calc"))
    lib = PromptLibrary(folder.path)
    from dotprompt import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    lib.define_tool(add)
    cases = load_test_file(folder.path / "calc.test.yaml", folder.path)
    summaries = asyncio.run(TestRun(lib, "record", concurrency=1).run(cases))
    assert summaries[0].passed, summaries[0].last.failures
    assert summaries[1].last.failures == ["tool 'multiply' was not called (called: add)"]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("cases:\n  - name: a\n    expect:\n      outptu: {}\n", "unknown assertion `outptu`", 4),
        ("cases:\n  - name: a\n    expect:\n      paths:\n        - {path: $.a, bigger: 3}\n", "exactly one of", 5),
        ("cases:\n  - name: a\n    expect:\n      paths:\n        - {path: $.a, matches: '('}\n", "bad regular expression", 5),
        ("cases:\n  - name: a\n    expect:\n      paths:\n        - {path: 'a..b', equals: 1}\n", "cannot read path", 5),
        ("cases:\n  - name: a\n  - name: a\n", "two cases are named 'a'", 3),
        ("cases: {name: a}\n", "must be a list", 1),
        ("cases:\n  - name: a\n    inptu: {}\n", "unknown key `inptu`", 3),
        ("cases:\n  - [oops\n", "invalid YAML", 2),  # where the `[` opens, not where the file ends
    ],
)
def test_malformed_test_files_name_file_and_line(folder, text, message, line):
    path = folder.write("p.test.yaml", text)
    with pytest.raises(TestFileError) as caught:
        load_test_file(path, folder.path)
    assert message in str(caught.value) and caught.value.line == line and caught.value.path == str(path)


def test_sidecar_names_with_namespace_and_variant(folder):
    path = folder.write("billing/extract.fast.test.yaml", "cases:\n  - name: a\n")
    (case,) = load_test_file(path, folder.path)
    assert (case.prompt, case.variant) == ("billing/extract", "fast")


def test_hand_written_fixtures_are_named_as_such_in_the_report(project):
    from dotprompt.testing.report import rows

    scripted(REPLY, REPLY)
    run(project, "record")
    path, lines = recordings(project)
    lines[1]["source"] = "fixture"  # the "simple" case, as if written by hand
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = run(project, "replay")
    table = dict((row[0], row[5]) for row in rows(list(results.values()), repeated=False))
    assert table["invoices.test.yaml::simple"].endswith("(replayed) (1 hand-written fixture)")
    assert table["invoices.test.yaml::second"].endswith("(replayed)")


def test_recordings_made_before_modelinfo_lost_its_unread_fields_still_load(tmp_path):
    from dotprompt.testing.recording import RecordingStore

    info = {"label": "old", "tools": False, "system_role": True, "multiturn": True, "streaming": True}
    response = {"message": {"role": "model", "content": [{"text": "ok"}]}}
    line = {"key": "k", "case": "c", "call": 1, "model": "m", "info": info, "request": {}, "response": response,
            "latency_ms": 1.0}
    path = tmp_path / "x.recordings.jsonl"
    path.write_text(json.dumps(line) + "\n")
    store = RecordingStore.load(path)
    assert store.corrupt == []  # the retired fields are no reason to call the line corrupt
    found = store.info_for("m")
    assert (found.label, found.tools) == ("old", False)
