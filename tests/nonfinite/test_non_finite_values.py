"""NaN, Infinity and overflowing numbers (`1e999`) are no JSON values: refused, or repaired and
reported, wherever they enter (model output, tool arguments, datasets, recordings), and never written."""

from __future__ import annotations

import asyncio
import json
import math
import sys
from pathlib import Path

import pytest

from dotprompt import OutputValidationError, generate
from dotprompt._util import finite
from dotprompt._util.escape import json_dumps
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.errors import DatasetError
from dotprompt.evals.datasets import read_dataset
from dotprompt.testing.recording import RecordingStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from support_tools import issue_refund

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 400 + ".5"]
TOTAL = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}


def strict(text: str):
    """The text as JSON, refusing every non-finite token: what a JSON reader in another language does."""
    return json.loads(text, parse_constant=lambda word: pytest.fail(f"{word} written into JSON"))


@pytest.mark.parametrize("token", NON_FINITE)
def test_a_non_finite_reply_fails_a_number_schema_with_the_repair_named(token):
    model = ScriptedModel([f'{{"total": {token}}}'])
    with pytest.raises(OutputValidationError) as failed:
        asyncio.run(generate(model=model, prompt="total?", output_schema=TOTAL))
    assert "$.total" in str(failed.value) and "None is not of type 'number'" in str(failed.value)


@pytest.mark.parametrize("token", NON_FINITE)
def test_without_a_schema_it_is_null_and_reported(token):
    model = ScriptedModel([f'{{"total": {token}, "items": [1, {token}]}}'])
    response = asyncio.run(generate(model=model, prompt="total?", output_format="json"))
    assert response.output == {"total": None, "items": [1, None]}
    kinds = [(r.kind, r.detail) for r in response.output_repairs]
    assert [k for k, _ in kinds] == ["non_finite_number", "non_finite_number"]
    assert "$.total" in kinds[0][1] and "$.items[1]" in kinds[1][1]


def test_clean_replies_have_no_repair():
    model = ScriptedModel(['{"total": 1e10, "name": "NaNa"}'])
    response = asyncio.run(generate(model=model, prompt="x", output_format="json"))
    assert response.output == {"total": 1e10, "name": "NaNa"} and response.output_repairs == []


@pytest.mark.parametrize("amount", [math.nan, math.inf, -math.inf])
def test_issue_refund_never_runs_with_a_non_finite_amount(amount):
    ran = []
    original = issue_refund.fn
    issue_refund.fn = lambda **kwargs: ran.append(kwargs) or original(**kwargs)
    try:
        model = ScriptedModel([[tool_call("issue_refund", {"order_id": "1042", "amount": amount}, ref="1")], "done"])
        response = asyncio.run(generate(model=model, prompt="refund", tools=[issue_refund]))
    finally:
        issue_refund.fn = original
    assert ran == []
    answer = response.messages[2].content[0].tool_response.output
    assert "ToolInputError" in answer["error"] and "$.amount" in answer["error"] and "NaN or Infinity" in answer["error"]


def test_tool_arguments_from_a_provider_reply_text():
    # The OpenAI mapper reads arguments with json.loads, which turns `NaN` into a float.
    arguments = json.loads('{"order_id": "1042", "amount": NaN}')
    with pytest.raises(ValueError, match=r"\$\.amount"):
        asyncio.run(issue_refund.run(arguments))


@pytest.mark.parametrize("token", NON_FINITE)
def test_a_gold_row_with_a_non_finite_number_is_refused_naming_the_line(tmp_path, token):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"id": "a", "input": {}, "expected": {"total": 1}}\n'
                    f'{{"id": "b", "input": {{}}, "expected": {{"total": {token}}}}}\n')
    with pytest.raises(DatasetError, match=f"{path}:2: not valid JSON"):
        read_dataset(path)


def test_a_csv_cell_overflowing_to_infinity_is_refused(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("id,input.x,expected.total\na,1,1e999\n")
    with pytest.raises(DatasetError, match=f"{path}:2"):
        read_dataset(path)


def test_a_recording_line_with_nan_is_a_corrupt_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"case": "c", "key": "k", "model": "echo", "response": {"message": {"role": "model", '
                    '"content": [{"text": "x"}]}}, "latency_ms": NaN}\n')
    store = RecordingStore.load(path)
    assert store.entries == {} and "NaN is not a JSON number" in store.corrupt[0].message


def test_strict_reader_refuses_and_accepts():
    for token in NON_FINITE:
        with pytest.raises(finite.NonFiniteNumberError):
            finite.loads(f"[{token}]")
    assert finite.loads('[1e308, "NaN", 0.5]') == [1e308, "NaN", 0.5]


def test_writers_never_write_non_finite_tokens():
    from dotprompt.batch.runner import _encode
    from dotprompt.observe.runlog import _stored

    record = {"key": "k", "row": 1, "digest": "d", "input": {}, "output": {"total": math.nan, "x": [math.inf]}}
    assert strict(_encode(record).decode())["output"] == {"total": None, "x": [None]}
    stored = _stored({"output": {"total": -math.inf}, "status": "ok"}, [])
    assert strict(stored["output"]) == {"total": None}
    assert strict(json_dumps({"a": math.nan})) == {"a": None}
