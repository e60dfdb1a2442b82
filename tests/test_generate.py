"""The generate loop against the scripted model: exits, maxTurns, tools, interrupts, formats, middleware."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from dotprompt import (
    GenerationResponseError,
    Interrupt,
    ModelError,
    ModelInfo,
    OutputValidationError,
    PromptLibrary,
    Resume,
    ToolExecutionError,
    UsageError,
    define_interrupt,
    define_tool,
    generate,
    generate_stream,
    generate_sync,
    preview_request,
    tool,
)
from dotprompt.models.doubles import ScriptedModel, tool_call


def run(coro):
    return asyncio.run(coro)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Invoice(BaseModel):
    number: str
    total: float


INVOICE_SCHEMA = Invoice.model_json_schema()


# -- exit A --------------------------------------------------------------------------------------

def test_text_reply_without_tools_is_exit_a():
    model = ScriptedModel(["hello there"])
    response = run(generate(model=model, prompt="hi"))
    assert response.text == "hello there" and response.output == "hello there"
    assert response.finish_reason == "stop" and model.calls == 1
    assert [m.role for m in response.messages] == ["user", "model"]


def test_json_output_is_parsed_validated_and_typed():
    model = ScriptedModel(['Here you go:\n```json\n{"number": "INV-1", "total": 12.5}\n```'])
    response = run(generate(model=model, prompt="extract", output_schema=Invoice))
    assert response.output == Invoice(number="INV-1", total=12.5)
    assert model.requests[0].output.format == "json"


def test_return_tool_requests_hands_them_back_without_running():
    ran = []
    spy = define_tool("spy", "records calls", {"type": "object"}, lambda x: ran.append(x))
    model = ScriptedModel([[tool_call("spy", {"q": 1}, ref="r1")]])
    response = run(generate(model=model, prompt="go", tools=[spy], return_tool_requests=True,
                            output_schema=INVOICE_SCHEMA))
    assert ran == [] and response.tool_requests[0].name == "spy" and response.output is None


def test_tool_round_then_answer():
    model = ScriptedModel([[tool_call("add", {"a": 2, "b": 3}, ref="1")], "the sum is 5"])
    response = run(generate(model=model, prompt="2+3?", tools=[add]))
    assert response.text == "the sum is 5"
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert tool_message.content[0].tool_response.output == 5
    assert [m.role for m in response.messages] == ["user", "model", "tool", "model"]
    assert model.requests[1].tools[0].name == "add"


# -- exit B: the maxTurns arithmetic ----------------------------------------------------------------

def _always_calls_tools():
    runs = []
    counter = define_tool("count", "counts", {"type": "object"}, lambda _: runs.append(1) or len(runs))
    model = ScriptedModel(lambda request: [tool_call("count", {}, ref=str(len(runs)))])
    return model, counter, runs


def test_default_max_turns_calls_model_six_times_and_tools_five_rounds():
    model, counter, runs = _always_calls_tools()
    with pytest.raises(GenerationResponseError) as caught:
        run(generate(model=model, prompt="loop", tools=[counter]))
    assert model.calls == 6 and len(runs) == 5
    error = caught.value
    assert error.status == "ABORTED" and str(error) == "Exceeded maximum tool call iterations (5)"
    assert error.response.tool_requests[0].name == "count"  # the reply that asked for more
    assert error.messages[-1] == error.response.message and len(error.messages) == 1 + 5 * 2 + 1


@pytest.mark.parametrize("max_turns", [1, 2, 3])
def test_max_turns_boundary(max_turns):
    model, counter, runs = _always_calls_tools()
    with pytest.raises(GenerationResponseError, match=rf"\({max_turns}\)"):
        run(generate(model=model, prompt="loop", tools=[counter], max_turns=max_turns))
    assert model.calls == max_turns + 1 and len(runs) == max_turns


def test_loop_that_ends_on_the_last_allowed_turn_succeeds():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], [tool_call("add", {"a": 1, "b": 2})], "done"])
    assert run(generate(model=model, prompt="x", tools=[add], max_turns=2)).text == "done"


# -- tools ----------------------------------------------------------------------------------------

def test_tools_run_concurrently_and_answer_in_request_order():
    order = []

    @tool
    async def slow(delay: float) -> dict:
        """Sleeps."""
        order.append(("start", delay))
        await asyncio.sleep(delay)
        order.append(("end", delay))
        return {"slept": delay}

    model = ScriptedModel([[tool_call("slow", {"delay": 0.05}, "a"), tool_call("slow", {"delay": 0.0}, "b")], "ok"])
    run(generate(model=model, prompt="x", tools=[slow]))
    outputs = [(p.tool_response.ref, p.tool_response.output) for p in model.requests[1].messages[-1].content]
    assert outputs == [("a", {"slept": 0.05}), ("b", {"slept": 0.0})]
    assert order[:2] == [("start", 0.05), ("start", 0.0)] and order[2] == ("end", 0.0)


def test_tool_output_is_sent_as_json_not_a_python_repr():
    @tool
    def lookup(order_id: str) -> Invoice:
        """Find an invoice."""
        return Invoice(number=order_id, total=3)

    model = ScriptedModel([[tool_call("lookup", {"order_id": "A1"})], "fine"])
    run(generate(model=model, prompt="x", tools=[lookup]))
    assert model.requests[1].messages[-1].content[0].tool_response.output == {"number": "A1", "total": 3.0}
    assert lookup.definition.input_schema["required"] == ["order_id"]
    assert lookup.definition.output_schema["title"] == "Invoice"
    assert lookup.definition.description == "Find an invoice."


def test_tool_error_goes_back_to_the_model_marked():
    @tool
    def broken(x: int) -> int:
        """Always fails."""
        raise RuntimeError("database down")

    model = ScriptedModel([[tool_call("broken", {"x": 1})], "sorry, try later"])
    response = run(generate(model=model, prompt="x", tools=[broken]))
    part = model.requests[1].messages[-1].content[0]
    assert part.tool_response.output == {"error": "RuntimeError: database down"}
    assert part.metadata == {"toolError": True} and response.text == "sorry, try later"


def test_tool_errors_raise_keeps_the_cause_and_conversation():
    @tool
    def broken(x: int) -> int:
        """Always fails."""
        raise RuntimeError("database down")

    model = ScriptedModel([[tool_call("broken", {"x": 1}, ref="r")]])
    with pytest.raises(ToolExecutionError) as caught:
        run(generate(model=model, prompt="x", tools=[broken], tool_errors="raise"))
    assert isinstance(caught.value.__cause__, RuntimeError) and caught.value.tool == "broken"
    assert caught.value.messages[-1].content[0].tool_request.ref == "r"


def test_tool_input_failing_its_schema_is_reported_to_the_model():
    model = ScriptedModel([[tool_call("add", {"a": "two", "b": 1})], "fixed"])
    run(generate(model=model, prompt="x", tools=[add]))
    output = model.requests[1].messages[-1].content[0].tool_response.output
    assert output["error"].startswith("ToolInputError: $.a:")


def test_unknown_tool_requested_by_the_model_is_an_error_output():
    model = ScriptedModel([[tool_call("nope", {})], "ok"])
    run(generate(model=model, prompt="x", tools=[add]))
    assert "unknown tool 'nope'" in model.requests[1].messages[-1].content[0].tool_response.output["error"]


# -- misuse before any model call -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": ["missing"]}, "unknown tool 'missing'"),
        ({"tools": ["add", "add"]}, "listed twice"),
        ({"output_format": "yaml"}, "yaml"),
        ({"output_schema": {"type": "object", "required": 5}}, "not valid JSON Schema"),
        ({"max_turns": 0}, "max_turns must be at least 1"),
        ({"output_format": "jsonl", "output_schema": {"type": "string"}}, "jsonl"),
    ],
)
def test_misuse_is_a_usage_error_before_the_model_is_called(kwargs, message):
    model = ScriptedModel(["never"])
    with pytest.raises(UsageError, match=message):
        run(generate(model=model, prompt="x", **kwargs))
    assert model.calls == 0


def test_two_different_tools_with_one_name():
    other = define_tool("add", "another add", {"type": "object"}, lambda x: 0)
    with pytest.raises(UsageError, match="two different tools"):
        run(generate(model=ScriptedModel(["x"]), prompt="x", tools=[add, other]))


def test_unknown_model_suggests():
    with pytest.raises(UsageError, match=r"unknown model 'ecko'.*did you mean 'echo'"):
        run(generate(model="ecko", prompt="x"))


# -- output failures keep everything --------------------------------------------------------------

def test_reply_that_is_not_json_keeps_the_text_and_response():
    model = ScriptedModel(["I cannot answer that."])
    with pytest.raises(OutputValidationError) as caught:
        run(generate(model=model, prompt="x", output_schema=Invoice))
    assert caught.value.text == "I cannot answer that."
    assert caught.value.response.text == "I cannot answer that." and caught.value.messages[-1].role == "model"


def test_output_failing_the_schema_lists_the_paths():
    model = ScriptedModel(['{"number": 7}'])
    with pytest.raises(OutputValidationError) as caught:
        run(generate(model=model, prompt="x", output_schema=INVOICE_SCHEMA))
    assert sorted(p.path for p in caught.value.problems) == ["$", "$.number"]


# -- interrupts ------------------------------------------------------------------------------------

def test_interrupt_and_resume_with_a_human_answer():
    @tool
    def approve(amount: float) -> str:
        """Ask a human to approve a refund."""
        raise Interrupt({"reason": f"refund of {amount} needs approval"})

    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2}, "sum"), tool_call("approve", {"amount": 30}, "ok?")],
                           "refund approved, total 3"])
    first = run(generate(model=model, prompt="refund", tools=[add, approve]))
    assert first.finish_reason == "interrupted" and model.calls == 1
    (interrupt,) = first.interrupts
    assert interrupt.tool_request.ref == "ok?" and interrupt.metadata["interrupt"] == {"reason": "refund of 30.0 needs approval"}
    assert first.message.content[0].metadata == {"pendingOutput": 3}

    resumed = run(generate(model=model, messages=first.messages, tools=[add, approve],
                           resume=Resume(respond=[{"name": "approve", "ref": "ok?", "output": "approved"}])))
    assert resumed.text == "refund approved, total 3"
    tool_message = model.requests[1].messages[-1]
    assert [(p.tool_response.ref, p.tool_response.output) for p in tool_message.content] == [("sum", 3), ("ok?", "approved")]
    resolved = model.requests[1].messages[-2].content[1].metadata
    assert resolved == {"resolvedInterrupt": {"reason": "refund of 30.0 needs approval"}}


def test_resume_by_restart_runs_the_tool_again():
    calls = []

    @tool
    def flaky(n: int) -> int:
        """Interrupts the first time."""
        calls.append(n)
        if len(calls) == 1:
            raise Interrupt({"confirm": n})
        return n * 10

    model = ScriptedModel([[tool_call("flaky", {"n": 4}, "f")], "40"])
    first = run(generate(model=model, prompt="x", tools=[flaky]))
    second = run(generate(model=model, messages=first.messages, tools=[flaky],
                          resume={"restart": [{"name": "flaky", "ref": "f", "input": {"n": 4}}]}))
    assert second.text == "40" and model.requests[1].messages[-1].content[0].tool_response.output == 40


def test_define_interrupt_and_unresolved_or_unmatched_resume_errors():
    ask = define_interrupt("ask_human", "Ask the user a question", {"type": "object", "properties": {"q": {"type": "string"}}})
    model = ScriptedModel([[tool_call("ask_human", {"q": "which size?"}, "q1")]])
    first = run(generate(model=model, prompt="buy shoes", tools=[ask]))
    assert first.interrupts[0].metadata["interrupt"] == {"q": "which size?"}
    with pytest.raises(UsageError, match=r"ask_human\(q1\) is unresolved"):
        run(generate(model=model, messages=first.messages, tools=[ask], resume=Resume()))
    with pytest.raises(UsageError, match=r"other\(zz\)"):
        run(generate(model=model, messages=first.messages, tools=[ask],
                     resume={"respond": [{"name": "ask_human", "ref": "q1", "output": 1},
                                         {"name": "other", "ref": "zz", "output": 2}]}))


# -- format instructions ----------------------------------------------------------------------------

def _instruction_parts(request):
    return [(m.role, p) for m in request.messages for p in m.content if p.metadata and p.metadata.get("purpose") == "output"]


def test_instructions_injected_every_turn_exactly_once_into_the_system_message():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], '{"number": "1", "total": 2}'])
    run(generate(model=model, system="You extract.", prompt="x", tools=[add], output_schema=Invoice))
    for request in model.requests:
        parts = _instruction_parts(request)
        assert len(parts) == 1 and parts[0][0] == "system" and '"number"' in parts[0][1].text


def test_instructions_fill_a_pending_output_section():
    lib = PromptLibrary(None)
    prompt = lib.from_source('---\noutput:\n  schema: {answer: string}\n---\nQ: {{ q }}\n{{ section("output") }}\nThanks')
    model = ScriptedModel(['{"answer": "42"}'])
    response = run(prompt.generate({"q": "meaning"}, model=model))
    content = model.requests[0].messages[0].content
    assert [p.metadata.get("purpose") if p.metadata else None for p in content] == [None, "output", None]
    assert content[1].metadata == {"purpose": "output"} and response.output == {"answer": "42"}


def test_instructions_go_to_the_last_user_message_without_a_system_message():
    model = ScriptedModel(['{"number": "1", "total": 2}'])
    run(generate(model=model, prompt="extract", output_schema=Invoice))
    assert _instruction_parts(model.requests[0])[0][0] == "user"


def test_native_constrained_output_sends_the_schema_instead_of_instructions():
    model = ScriptedModel(['{"number": "1", "total": 2}'], info=ModelInfo(constrained="all"))
    run(generate(model=model, prompt="x", output_schema=Invoice))
    request = model.requests[0]
    assert _instruction_parts(request) == [] and request.output.constrained is True
    assert request.output.json_schema == INVOICE_SCHEMA


def test_no_tools_constrained_model_uses_instructions_when_tools_are_present():
    model = ScriptedModel(['{"number": "1", "total": 2}'], info=ModelInfo(constrained="no-tools"))
    run(generate(model=model, prompt="x", tools=[add], output_schema=Invoice))
    assert len(_instruction_parts(model.requests[0])) == 1 and not model.requests[0].output.constrained


def test_custom_and_disabled_instructions():
    model = ScriptedModel(['{"number": "1", "total": 2}'] * 2)
    run(generate(model=model, prompt="x", output_schema=Invoice, output_instructions="JSON please"))
    assert _instruction_parts(model.requests[0])[0][1].text == "JSON please"
    run(generate(model=model, prompt="x", output_schema=Invoice, output_instructions=False))
    assert _instruction_parts(model.requests[1]) == []


# -- middleware ------------------------------------------------------------------------------------

def test_middleware_order_is_an_onion_per_turn_and_per_call():
    events = []

    class Both:
        def __init__(self, name):
            self.name = name

        async def generate(self, envelope, next_):
            events.append(f"{self.name}:turn{envelope.current_turn}:in")
            response = await next_(envelope)
            events.append(f"{self.name}:turn{envelope.current_turn}:out")
            return response

        async def model(self, request, next_):
            events.append(f"{self.name}:model:in")
            response = await next_(request)
            events.append(f"{self.name}:model:out")
            return response

    async def plain(request, next_):
        events.append("plain:model")
        return await next_(request)

    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], "done"])
    run(generate(model=model, prompt="x", tools=[add], use=[Both("outer"), plain, Both("inner")]))
    assert events == [
        "outer:turn0:in", "inner:turn0:in",
        "outer:model:in", "plain:model", "inner:model:in", "inner:model:out", "outer:model:out",
        "outer:turn1:in", "inner:turn1:in",
        "outer:model:in", "plain:model", "inner:model:in", "inner:model:out", "outer:model:out",
        "inner:turn1:out", "outer:turn1:out", "inner:turn0:out", "outer:turn0:out",
    ]


def test_model_middleware_can_rewrite_the_request():
    async def add_config(request, next_):
        return await next_(request.model_copy(update={"config": {**request.config, "temperature": 0}}))

    model = ScriptedModel(["ok"])
    run(generate(model=model, prompt="x", use=[add_config]))
    assert model.requests[0].config == {"temperature": 0}


def test_retry_backs_off_and_honours_retry_after():
    from dotprompt import retry

    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    model = ScriptedModel([ModelError("overloaded", status=503), ModelError("slow down", status=429, retry_after=7.0), "ok"])
    layer = retry(max_retries=3, initial_delay=0.5, jitter=0.0, sleep=sleep)
    assert run(generate(model=model, prompt="x", use=[layer])).text == "ok"
    assert slept == [0.5, 7.0] and model.calls == 3


def test_retry_does_not_retry_a_client_error():
    from dotprompt import retry

    model = ScriptedModel([ModelError("bad request", status=400), "never"])
    with pytest.raises(ModelError, match="400"):
        run(generate(model=model, prompt="x", use=[retry(sleep=lambda s: asyncio.sleep(0))]))
    assert model.calls == 1


def test_fallback_uses_the_next_model():
    from dotprompt import fallback

    primary = ScriptedModel([ModelError("down", status=500)], name="primary")
    backup = ScriptedModel(["from backup"], name="backup")
    layer = fallback(backup)
    assert run(generate(model=primary, prompt="x", use=[layer])).text == "from backup"
    assert layer.used == ["backup"] and backup.calls == 1


def test_validate_and_retry_is_bounded_in_attempts_and_context():
    from dotprompt import Usage, validate_and_retry

    replies = ['{"number": 1}', '{"number": 2}', '{"number": "3", "total": 4}']
    model = ScriptedModel(replies, usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15))
    response = run(generate(model=model, prompt="extract", output_schema=Invoice, use=[validate_and_retry(max_attempts=2)]))
    assert response.output == Invoice(number="3", total=4)
    assert [a.text for a in response.attempts] == replies[:2]
    assert all(a.usage.total_tokens == 15 for a in response.attempts)
    sizes = [len(r.messages) for r in model.requests]
    assert sizes == [1, 3, 3]  # the context holds only the last failed attempt
    retry_request = model.requests[2]
    texts = [p.text for m in retry_request.messages for p in m.content if p.text]
    assert '{"number": 2}' in texts and '{"number": 1}' not in texts
    assert "$.number" in retry_request.messages[-1].content[0].text


def test_validate_and_retry_gives_up_with_the_attempts():
    from dotprompt import validate_and_retry

    model = ScriptedModel(["nope"] * 3)
    with pytest.raises(OutputValidationError) as caught:
        run(generate(model=model, prompt="x", output_schema=Invoice, use=[validate_and_retry(max_attempts=1)]))
    assert model.calls == 2 and len(caught.value.attempts) == 2


# -- streaming ------------------------------------------------------------------------------------

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
        return prompt({"word": "hi"}, model=ScriptedModel(["hi"]))

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
    from dotprompt.models import define_model

    model = define_model(ScriptedModel([[tool_call("add", {"a": 20, "b": 22})], '{"answer": "It is 42", "total": 42}'],
                                       name="scripted-support"))
    response = lib.load("support")({"question": "20+22?"})
    assert response.output == {"answer": "It is 42", "total": 42}
    assert model.requests[0].messages[0].role == "system"
    assert model.requests[1].messages[-1].content[0].tool_response.output == 42
    action = lib.load("support").to_options({"question": "q"})
    assert action.max_turns == 2 and action.tools == ["add"] and action.output.format == "json"
    assert action.model_dump(mode="json", by_alias=True)["maxTurns"] == 2


def test_preview_request_runs_nothing():
    model = ScriptedModel([])
    request = preview_request(model=model, system="sys", prompt="hi", tools=[add], output_schema=Invoice)
    assert model.calls == 0 and request.tools[0].name == "add" and len(_instruction_parts(request)) == 1


def test_required_tool_choice_relaxes_to_auto_after_a_tool_round():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "3"])
    run(generate(model=model, prompt="x", tools=[add], tool_choice="required"))
    assert [r.tool_choice for r in model.requests] == ["required", "auto"]


def test_frontmatter_use_names_and_configures_middleware():
    from dotprompt import ModelError

    lib = PromptLibrary(None)
    calls = []

    async def audit(request, next_):
        calls.append(len(request.messages))
        return await next_(request)

    lib.define_middleware("audit", audit)
    prompt = lib.from_source("---\nuse: [audit, {retry: {max_retries: 1, initial_delay: 0, jitter: 0}}]\n---\nhi")
    model = ScriptedModel([ModelError("busy", status=503), "ok"])
    assert run(prompt.generate(model=model)).text == "ok"
    assert calls == [1, 1] and model.calls == 2
    with pytest.raises(UsageError, match="unknown middleware 'nope'"):
        run(lib.from_source("---\nuse: [nope]\n---\nhi").generate(model=ScriptedModel(["x"])))
