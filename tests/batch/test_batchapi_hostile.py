"""Hostile batch result files: torn lines, unknown custom ids, huge and deeply nested lines, wrong shapes.

Each case runs submit -> resume against a fake server inside a child process with time and memory
limits; the fake serves the given bytes as the job's results. Every row must end with exactly one
record, a result the file did not hold must be that row's error, and nothing may crash."""

from __future__ import annotations

import json

import pytest

from tests.isolation import assert_finishes

CHILD = '''
import asyncio, json, os, sys, tempfile
from pathlib import Path
from tests.batch.fake_server import FakeProviders, anthropic_reply
from dotprompt import PromptLibrary
from dotprompt.batch.runner import InputFile
from dotprompt.batch.api.jobs import custom_id, resume, submit
from dotprompt.providers.registry import resolve_model

case = {case!r}
root = Path(tempfile.mkdtemp())
(root / "p").mkdir()
(root / "p" / "double.prompt").write_text(
    "---\\nmodel: anthropic/hostile\\noutput:\\n  schema:\\n    double: integer\\n---\\nRow {{{{ n }}}}")
(root / "in.jsonl").write_text("".join(json.dumps({{"n": n}}) + "\\n" for n in (1, 2, 3)))
rows = list(InputFile(root / "in.jsonl"))
ids = [custom_id(row) for row in rows]

def good(i):
    return json.dumps({{"custom_id": ids[i], "result": {{"type": "succeeded",
                       "message": anthropic_reply(json.dumps({{"double": 2 * (i + 1)}}))}}}}).encode() + b"\\n"

with FakeProviders(polls_before_done=0) as fake:
    os.environ.update(ANTHROPIC_BASE_URL=fake.url + "/v1", ANTHROPIC_API_KEY="k")
    model = resolve_model("anthropic/hostile")
    model.http.max_response_bytes = 1_000_000
    if case == "torn":
        body = good(0) + good(1)[:40] + b"\\n" + good(2)[:-1]  # the last line without its newline is still whole
    elif case == "unknown":
        body = good(0) + json.dumps({{"custom_id": "rEVIL", "result": {{"type": "succeeded",
                                      "message": anthropic_reply("{{}}")}}}}).encode() + b"\\n" + good(2)
    elif case == "huge":
        body = good(0) + b'{{"custom_id": "' + ids[1].encode() + b'", "pad": "' + b"x" * 30_000_000 + b'"}}\\n' + good(2)
    elif case == "deep":
        body = good(0) + b"[" * 200_000 + b"\\n" + good(2)
    elif case == "shapes":
        body = (good(0) + b"[1, 2]\\n" + b'"text"\\n' + b'{{"custom_id": 5, "result": "x"}}\\n'
                + json.dumps({{"custom_id": ids[1], "result": {{"type": "succeeded",
                              "message": {{"content": 5, "usage": "many"}}}}}}).encode() + b"\\n" + good(2))
    elif case == "binary":
        body = good(0) + bytes(range(256)) * 100 + b"\\n" + good(2)
    fake.result_override = body
    prompt = PromptLibrary(root / "p").load("double")
    asyncio.run(submit(prompt, InputFile(root / "in.jsonl"), root / "out.jsonl"))
    report = asyncio.run(resume(prompt, InputFile(root / "in.jsonl"), root / "out.jsonl"))
records = [json.loads(line) for line in (root / "out.jsonl").read_text().splitlines()]
print(json.dumps({{"records": {{r["input"]["n"]: r.get("output") or r["error"]["message"] for r in records}},
                  "count": len(records), "problems": report.problems}}))
'''


@pytest.mark.slow
@pytest.mark.parametrize("case", ["torn", "unknown", "huge", "deep", "shapes", "binary"])
def test_a_hostile_result_file_loses_no_row(case):
    outcome = assert_finishes(CHILD.format(case=case), timeout=90, memory_mb=900)
    found = outcome.json()
    records = found["records"]
    assert found["count"] == 3 and records["1"] == {"double": 2} and records["3"] == {"double": 6}, found
    if case == "unknown":
        assert "no result for this row" in records["2"] and any("rEVIL" in p for p in found["problems"])
    elif case == "shapes":
        assert isinstance(records["2"], str) and len(found["problems"]) >= 3, found
    else:
        assert "no result for this row" in records["2"] and found["problems"], found
    assert "Traceback" not in outcome.stderr
    json.dumps(found)  # what the report says is printable as it is
