"""The loop against the scripted model: the three exits, maxTurns, tools, misuse, output errors, interrupts."""

from __future__ import annotations

import asyncio

import pytest

from dotprompt import (
    GenerationResponseError,
    Interrupt,
    OutputValidationError,
    Resume,
    ToolExecutionError,
    UsageError,
    generate,
    tool,
)
from dotprompt.doubles import ScriptedModel, tool_call
from tests.generation.generation_support import INVOICE_SCHEMA, Invoice, add, run

# -- exit A --------------------------------------------------------------------------------------

def test_text_reply_without_tools_is_exit_a():
    model = ScriptedModel(["hello there"])
    response = run(generate(model=model, prompt="hi"))
    assert response.text == "hello there" and response.output == "hello there"
    assert response.finish_reason is None and model.calls == 1  # the scripted reply gave none: none, as in Genkit
    stopped = run(generate(model=ScriptedModel([{"message": {"role": "model", "content": [{"text": "x"}]},
                                                 "finishReason": "length"}]), prompt="hi"))
    assert stopped.finish_reason == "length"
    assert [m.role for m in response.messages] == ["user", "model"]


def test_json_output_is_parsed_validated_and_typed():
    model = ScriptedModel(['Here you go:\n```json\n{"number": "INV-1", "total": 12.5}\n```'])
    response = run(generate(model=model, prompt="extract", output_schema=Invoice))
    assert response.output == Invoice(number="INV-1", total=12.5)
    assert model.requests[0].output.format == "json"


def test_return_tool_requests_hands_them_back_without_running():
    ran = []
    spy = tool(lambda x: ran.append(x), name="spy", description="records calls", input_schema={"type": "object"})
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
    counter = tool(lambda _: runs.append(1) or len(runs), name="count", description="counts", input_schema={"type": "object"})
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
    other = tool(lambda x: 0, name="add", description="another add", input_schema={"type": "object"})
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


def test_an_interrupt_tool_and_unresolved_or_unmatched_resume_errors():
    ask = tool(name="ask_human", description="Ask the user a question",
               input_schema={"type": "object", "properties": {"q": {"type": "string"}}}, interrupt=True)
    model = ScriptedModel([[tool_call("ask_human", {"q": "which size?"}, "q1")]])
    first = run(generate(model=model, prompt="buy shoes", tools=[ask]))
    assert first.interrupts[0].metadata == {"interrupt": True}  # no metadata: `true`, as Genkit records it
    assert first.interrupts[0].tool_request.input == {"q": "which size?"}
    with pytest.raises(UsageError, match=r"ask_human\(q1\) is unresolved"):
        run(generate(model=model, messages=first.messages, tools=[ask], resume=Resume()))
    with pytest.raises(UsageError, match=r"other\(zz\)"):
        run(generate(model=model, messages=first.messages, tools=[ask],
                     resume={"respond": [{"name": "ask_human", "ref": "q1", "output": 1},
                                         {"name": "other", "ref": "zz", "output": 2}]}))


# -- format instructions ----------------------------------------------------------------------------
