"""The entry points: streaming, sync and async, prompt files end to end, preview_request, `use:` in frontmatter."""

from __future__ import annotations

import pytest

from dotprompt import (
    ModelError,
    PromptLibrary,
    UsageError,
    generate,
    generate_stream,
    generate_sync,
    preview_request,
)
from dotprompt.doubles import ScriptedModel, tool_call
from tests.generation.generation_support import INVOICE_SCHEMA, Invoice, add, instruction_parts, run


def test_stream_chunks_across_turns_with_indices_and_growing_output():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], '{"number": "INV-9", "total": 3}'], chunk_size=6)

    async def collect():
        items = []
        async for item in generate_stream(model=model, prompt="x", tools=[add], output_schema=INVOICE_SCHEMA):
            items.append(item)
        return items

    items = run(collect())
    *chunks, final = items
    assert final.output == {"number": "INV-9", "total": 3}
    assert [(c.index, c.role) for c in chunks[:2]] == [(0, "model"), (1, "tool")]
    text_chunks = [c for c in chunks if c.index == 2]
    assert all(c.role == "model" for c in text_chunks) and len(text_chunks) > 3
    assert text_chunks[-1].accumulated_text == '{"number": "INV-9", "total": 3}'
    assert text_chunks[1].accumulated_text == text_chunks[0].text + text_chunks[1].text
    assert text_chunks[-1].output == {"number": "INV-9", "total": 3}
    assert chunks[1].content[0].tool_response.output == 3
    assert len(text_chunks[-1].previous_chunks) == len(chunks) - 1


def test_on_chunk_callback_and_partial_instances():
    seen = []
    model = ScriptedModel(['{"number": "INV-1", "total": 5}'], chunk_size=4)
    response = run(generate(model=model, prompt="x", output_schema=Invoice, on_chunk=seen.append))
    assert response.output == Invoice(number="INV-1", total=5)
    partial = [c.output for c in seen if c.output is not None]
    assert isinstance(partial[0], Invoice) and partial[-1].number == "INV-1"


# -- sync and async share one loop ---------------------------------------------------------------

def test_sync_and_async_give_the_same_response():
    replies = [[tool_call("add", {"a": 2, "b": 2})], '{"number": "1", "total": 4}']
    async_response = run(generate(model=ScriptedModel(replies), prompt="x", tools=[add], output_schema=Invoice))
    sync_response = generate_sync(model=ScriptedModel(replies), prompt="x", tools=[add], output_schema=Invoice)
    assert async_response.to_dict() == sync_response.to_dict() and async_response.output == sync_response.output


def test_sync_entry_point_works_inside_a_running_event_loop():
    lib = PromptLibrary(None)
    prompt = lib.from_source("Say {{ word }}")

    async def inside():
        return prompt.generate_sync({"word": "hi"}, model=ScriptedModel(["hi"]))

    assert run(inside()).text == "hi"


# -- prompt files end to end ----------------------------------------------------------------------

def test_prompt_file_with_tools_max_turns_and_output_schema_runs_end_to_end(folder):
    folder.write("support.prompt", """---
model: scripted-support
tools: [add]
maxTurns: 2
input:
  schema:
    question: string
output:
  schema:
    answer: string
    total: integer
---
{{ role("system") }}You help with sums.
{{ role("user") }}{{ question }}
""")
    lib = folder.library()
    lib.define_tool(add)
    from dotprompt.providers import define_model

    model = define_model(ScriptedModel([[tool_call("add", {"a": 20, "b": 22})], '{"answer": "It is 42", "total": 42}'],
                                       name="scripted-support"))
    response = lib.load("support").generate_sync({"question": "20+22?"})
    assert response.output == {"answer": "It is 42", "total": 42}
    assert model.requests[0].messages[0].role == "system"
    assert model.requests[1].messages[-1].content[0].tool_response.output == 42
    action = lib.load("support").to_options({"question": "q"})
    assert action.max_turns == 2 and action.tools == ["add"] and action.output.format == "json"
    assert action.model_dump(mode="json", by_alias=True)["maxTurns"] == 2


def test_preview_request_runs_nothing():
    model = ScriptedModel([])
    request = preview_request(model=model, system="sys", prompt="hi", tools=[add], output_schema=Invoice)
    assert model.calls == 0 and request.tools[0].name == "add" and len(instruction_parts(request)) == 1


def test_required_tool_choice_relaxes_to_auto_after_a_tool_round():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "3"])
    run(generate(model=model, prompt="x", tools=[add], tool_choice="required"))
    assert [r.tool_choice for r in model.requests] == ["required", "auto"]


def test_frontmatter_use_names_and_configures_middleware():

    lib = PromptLibrary(None)
    calls = []

    async def audit(request, next_):
        calls.append(len(request.messages))
        return await next_(request)

    lib.define_middleware("audit", audit)
    retry = "{retry: {max_retries: 1, initial_delay: 0, jitter: 0}}"
    prompt = lib.from_source(f"---\nuse: [{retry}, audit]\n---\nhi")  # retry outside: audit sees each attempt
    model = ScriptedModel([ModelError("busy", status=503), "ok"])
    assert run(prompt.generate(model=model)).text == "ok"
    assert calls == [1, 1] and model.calls == 2
    calls.clear()
    prompt = lib.from_source(f"---\nuse: [audit, {retry}]\n---\nhi")  # audit outside: one call, retried within
    model = ScriptedModel([ModelError("busy", status=503), "ok"])
    assert run(prompt.generate(model=model)).text == "ok"
    assert calls == [1] and model.calls == 2
    with pytest.raises(UsageError, match="unknown middleware 'nope'"):
        run(lib.from_source("---\nuse: [nope]\n---\nhi").generate(model=ScriptedModel(["x"])))
