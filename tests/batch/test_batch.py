"""Batch runs over a JSON-lines input file: per-row errors, nothing lost, resumable."""

from __future__ import annotations

import asyncio
import json

import pytest

from dotprompt.batch.runner import read_rows, run_batch
from dotprompt.doubles import ScriptedModel
from dotprompt.errors import BatchInputError
from dotprompt.providers import define_model

PROMPT = "---\nmodel: scripted-batch\ninput:\n  schema:\n    n: integer\noutput:\n  schema:\n    double: integer\n---\n{{ n }}"


def reply_for(request):
    n = int(request.messages[0].content[0].text)
    return "not json at all" if n == 3 else json.dumps({"double": n * 2})


def test_batch_writes_every_row_and_resumes(folder, tmp_path):
    folder.write("double.prompt", PROMPT)
    model = define_model(ScriptedModel(reply_for, name="scripted-batch"))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("\n".join(json.dumps({"n": n}) for n in range(1, 6)) + "\n\n")
    output = tmp_path / "out.jsonl"
    prompt = folder.library().load("double")
    report = asyncio.run(run_batch(prompt, read_rows(inputs), output, concurrency=3))
    assert (report.total, report.succeeded, report.failed, report.skipped) == (5, 4, 1, 0)
    records = {r["row"]: r for r in map(json.loads, output.read_text().splitlines())}
    assert sorted(records) == [1, 2, 3, 4, 5]
    assert records[2]["output"] == {"double": 4} and records[2]["input"] == {"n": 2}
    assert records[3]["error"]["type"] == "OutputValidationError" and records[3]["error"]["reply"] == "not json at all"
    calls = model.calls
    again = asyncio.run(run_batch(prompt, read_rows(inputs), output, concurrency=3))
    assert (again.skipped, again.failed, again.succeeded) == (4, 1, 0) and model.calls == calls + 1


def test_changed_input_row_runs_again(folder, tmp_path):
    folder.write("double.prompt", PROMPT)
    define_model(ScriptedModel(reply_for, name="scripted-batch"))
    inputs, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    prompt = folder.library().load("double")
    inputs.write_text('{"n": 1}\n')
    asyncio.run(run_batch(prompt, read_rows(inputs), output))
    inputs.write_text('{"n": 7}\n')
    report = asyncio.run(run_batch(prompt, read_rows(inputs), output))
    assert report.skipped == 0 and report.succeeded == 1


def test_bad_input_line_names_file_and_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"n": 1}\n{"n": \n')
    with pytest.raises(BatchInputError, match=r"in.jsonl:2: not a JSON value"):
        read_rows(path)


def test_a_rows_usage_sums_every_model_call_of_its_run(folder, tmp_path):
    from dotprompt import Usage, tool
    from dotprompt.doubles import tool_call

    @tool
    def half(n: int) -> int:
        """Half of n."""
        return n // 2

    folder.write("calc.prompt", "---\nmodel: scripted-calc\ntools: [half]\noutput:\n  schema:\n    double: integer\n---\n{{ n }}")
    replies = [[tool_call("half", {"n": 8})], [tool_call("half", {"n": 4})], '{"double": 4}']
    define_model(ScriptedModel(replies, name="scripted-calc",
                               usage=Usage(input_tokens=100, output_tokens=10, total_tokens=110)))
    lib = folder.library()
    lib.define_tool(half)
    inputs, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inputs.write_text('{"n": 8}\n')
    asyncio.run(run_batch(lib.load("calc"), read_rows(inputs), output))
    (record,) = map(json.loads, output.read_text().splitlines())
    assert record["usage"] == {"inputTokens": 300, "outputTokens": 30, "totalTokens": 330}  # 3 calls, not the last one


class SlowCounting:
    """A model that answers after 20 ms and counts the calls in flight at once."""

    name = "counting-batch"

    def __init__(self) -> None:
        from dotprompt.providers.base import ModelInfo

        self.info = ModelInfo()
        self.now = self.peak = self.calls = 0

    async def generate(self, request, on_chunk=None):
        from dotprompt.types import Message, ModelResponse, Part

        self.now += 1
        self.calls += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(0.02)
        self.now -= 1
        n = int(request.messages[0].content[0].text)
        return ModelResponse(message=Message(role="model", content=[Part(text=json.dumps({"double": n * 2}))]),
                             finish_reason="stop")


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_bounds_the_model_calls_in_flight(folder, tmp_path, concurrency):
    # More workers than slots render and write rows around the calls; the calls themselves never exceed it.
    folder.write("double.prompt", PROMPT.replace("scripted-batch", "counting-batch"))
    model = define_model(SlowCounting())
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(1, 13)))
    report = asyncio.run(run_batch(folder.library().load("double"), read_rows(inputs), tmp_path / "out.jsonl",
                                   concurrency=concurrency))
    assert report.succeeded == 12 and model.calls == 12
    assert model.peak == concurrency
