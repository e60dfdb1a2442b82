"""Genkit's documented generate behaviour, beyond its cross-SDK spec: resume and restart markers,
definition-only tools, the tool context, multipart tools, interrupts, tool middleware, usage over
turns and the streaming shape. Each test states the behaviour as Genkit's tests and sources
(js/genkit/tests/generate_test.ts, js/ai/src/generate/*, js/ai/src/tool.ts) define it."""

from __future__ import annotations

import pytest

from dotprompt import (
    GenerationResponseError,
    Interrupt,
    PromptLibrary,
    Resume,
    ToolContext,
    Usage,
    generate,
    generate_stream,
    tool,
)
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.types import ToolDefinition
from tests.generation.generation_support import run


def _interrupted_conversation():
    """A conversation that stopped on three interrupted requests and one finished one."""
    return [
        {"role": "user", "content": [{"text": "hello"}]},
        {"role": "model", "content": [
            {"toolRequest": {"name": "interrupter", "input": {}}, "metadata": {"interrupt": True}},
            {"toolRequest": {"name": "truth", "input": {}}, "metadata": {"pendingOutput": True}},
            {"toolRequest": {"name": "resumable", "input": {}}, "metadata": {"interrupt": True}},
        ]},
    ]


def _resumable_tools(seen):
    interrupter = tool(name="interrupter", description="always interrupts", interrupt=True)
    truth = tool(lambda _: True, name="truth", description="always true", input_schema={"type": "object"})

    @tool
    def resumable(ctx: ToolContext) -> bool:
        """Interrupts unless resumed with {status: ok}."""
        seen.append(ctx.resumed)
        if isinstance(ctx.resumed, dict) and ctx.resumed.get("status") == "ok":
            return True
        ctx.interrupt()

    return interrupter, truth, resumable


# -- resume: the markers Genkit writes ----------------------------------------------------------------

def test_resume_marks_answers_pending_outputs_and_resolved_interrupts():
    seen = []
    interrupter, truth, resumable = _resumable_tools(seen)
    messages = _interrupted_conversation()
    model = ScriptedModel(["done"])
    last = messages[-1]["content"]
    from dotprompt import Part

    response = run(generate(model=model, messages=messages, tools=[interrupter, truth, resumable], resume=Resume(
        respond=[interrupter.respond(Part.model_validate(last[0]), 23)],
        restart=[resumable.restart(Part.model_validate(last[2]), {"status": "ok"})])))
    assert response.text == "done" and seen == [{"status": "ok"}]
    model_message, tool_message = [m.to_dict() for m in response.messages[-3:-1]]
    assert model_message["content"] == [
        {"toolRequest": {"name": "interrupter", "input": {}}, "metadata": {"resolvedInterrupt": True}},
        {"toolRequest": {"name": "truth", "input": {}}, "metadata": {}},  # pendingOutput taken out, `{}` kept
        {"toolRequest": {"name": "resumable", "input": {}}, "metadata": {"resolvedInterrupt": True}},
    ]
    assert tool_message == {"role": "tool", "metadata": {"resumed": True}, "content": [
        {"toolResponse": {"name": "interrupter", "output": 23}, "metadata": {"interruptResponse": True}},
        {"toolResponse": {"name": "truth", "output": True}, "metadata": {"source": "pending"}},
        {"toolResponse": {"name": "resumable", "output": True}},
    ]}


def test_short_form_answers_are_marked_and_resume_metadata_goes_on_the_tool_message():
    model = ScriptedModel(["ok"])
    messages = [{"role": "user", "content": [{"text": "x"}]},
                {"role": "model", "content": [{"toolRequest": {"name": "ask", "ref": "1"}, "metadata": {"interrupt": True}}]}]
    run(generate(model=model, messages=messages, resume={"respond": [{"name": "ask", "ref": "1", "output": "yes"}],
                                                          "metadata": {"by": "ann"}}))
    tool_message = model.requests[0].messages[-1]
    assert tool_message.metadata == {"resumed": {"by": "ann"}}
    assert tool_message.content[0].metadata == {"interruptResponse": True}


def test_resumed_tool_message_is_streamed_as_a_tool_chunk():
    asked = {"toolRequest": {"name": "doThing", "input": {}}, "metadata": {"interrupt": True}}
    messages = [{"role": "user", "content": [{"text": "use the doThing tool"}]}, {"role": "model", "content": [asked]}]
    chunks = []
    run(generate(model=ScriptedModel(["final response"]), messages=messages, on_chunk=chunks.append,
                 resume={"respond": [{"toolResponse": {"name": "doThing", "output": "did thing"}}]}))
    assert [c.to_dict() for c in chunks] == [
        {"index": 0, "role": "tool", "content": [{"toolResponse": {"name": "doThing", "output": "did thing"}}]},
        {"index": 1, "role": "model", "content": [{"text": "final response"}]},
    ]


def test_restart_that_interrupts_again_is_exit_c_and_can_be_resumed_again():
    seen = []
    interrupter, truth, resumable = _resumable_tools(seen)
    model = ScriptedModel(["done"])
    tools = [interrupter, truth, resumable]
    again = run(generate(model=model, messages=_interrupted_conversation(), tools=tools, resume={
        "respond": [{"name": "interrupter", "output": 23}],
        "restart": [{"name": "resumable", "input": {}}]}))  # short form: resumed is `true`, not {status: ok}
    assert again.finish_reason == "interrupted" and model.calls == 0 and seen == [True]
    assert [p.to_dict().get("metadata") for p in again.message.content] == [
        {"pendingOutput": 23}, {"pendingOutput": True}, {"interrupt": True, "resumed": True}]
    assert [m.role for m in again.messages] == ["user", "model"] and again.usage == Usage()
    final = run(generate(model=model, messages=again.messages, tools=tools, resume=Resume(
        restart=[resumable.restart(again.interrupts[0], {"status": "ok"})])))
    assert final.text == "done" and seen[-1] == {"status": "ok"}
    assert [p.tool_response.output for p in model.requests[0].messages[-1].content] == [23, True, True]


# -- definition-only tools interrupt -------------------------------------------------------------------

def test_a_tool_without_implementation_interrupts():
    lib = PromptLibrary(None)
    lib.define_tool(ToolDefinition(name="lookup", description="only declared",
                                   input_schema={"type": "object", "properties": {"foo": {"type": "string"}}}))
    prompt = lib.from_source("---\ntools: [lookup]\n---\nfind it")
    model = ScriptedModel([[tool_call("lookup", {"foo": "bar"}, "ref123")], "never"])
    response = run(prompt.generate(model=model))
    assert response.finish_reason == "interrupted" and model.calls == 1
    assert [p.to_dict() for p in response.interrupts] == [
        {"toolRequest": {"name": "lookup", "ref": "ref123", "input": {"foo": "bar"}}, "metadata": {"interrupt": True}}]
    given = run(generate(model=ScriptedModel([[tool_call("ask", {}, "r")]]), prompt="x",
                         tools=[{"name": "ask", "description": "declared", "inputSchema": {"type": "object"}}]))
    assert given.interrupts[0].metadata == {"interrupt": True}


# -- the tool context -------------------------------------------------------------------------------

def test_tools_get_the_callers_context_and_can_interrupt_with_metadata():
    @tool
    def whoami(ctx: ToolContext) -> str:
        """Who is asking."""
        return ctx.context["auth"]["email"]

    def transfer(data, ctx):
        ctx.interrupt({"confirm": f"send {data['amount']}?"})

    send = tool(transfer, name="send", description="moves money", input_schema={"type": "object"})
    model = ScriptedModel([[tool_call("whoami", {}, "a"), tool_call("send", {"amount": 5}, "b")]])
    response = run(generate(model=model, prompt="x", tools=[whoami, send], context={"auth": {"email": "a@b.c"}}))
    assert [p.metadata for p in response.message.content] == [{"pendingOutput": "a@b.c"}, {"interrupt": {"confirm": "send 5?"}}]
    assert "ctx" not in whoami.definition.input_schema.get("properties", {})
    assert "a@b.c" not in str(model.requests[0].to_dict())  # the context is never sent to the model


def test_prompt_generate_hands_its_context_to_tools():
    @tool
    def tenant(ctx: ToolContext) -> str:
        """The caller's tenant."""
        return ctx.context["tenant"]

    lib = PromptLibrary(None)
    lib.define_tool(tenant)
    model = ScriptedModel([[tool_call("tenant", {})], "ok"])
    run(lib.from_source("---\ntools: [tenant]\n---\nfor {{ ctx.tenant }}").generate(model=model, context={"tenant": "acme"}))
    assert model.requests[0].messages[0].content[0].text == "for acme"
    assert model.requests[1].messages[-1].content[0].tool_response.output == "acme"


# -- multipart tools ---------------------------------------------------------------------------------

def test_a_multipart_tool_sends_output_and_content_parts():
    @tool(multipart=True)
    def chart(city: str) -> dict:
        """A chart of the weather."""
        return {"output": f"chart of {city}", "content": [{"media": {"url": "data:image/png;base64,AA==",
                                                                     "contentType": "image/png"}}]}

    model = ScriptedModel([[tool_call("chart", {"city": "Oslo"}, "ref123")], "done"])
    response = run(generate(model=model, prompt="x", tools=[chart]))
    assert response.messages[2].to_dict()["content"] == [{"toolResponse": {
        "name": "chart", "ref": "ref123", "output": "chart of Oslo",
        "content": [{"media": {"url": "data:image/png;base64,AA==", "contentType": "image/png"}}]}}]


def test_a_multipart_tool_returning_the_wrong_shape_is_a_tool_error():
    bad = tool(lambda _: {"result": 1}, name="bad", description="wrong shape", input_schema={"type": "object"},
               multipart=True)
    model = ScriptedModel([[tool_call("bad", {})], "sorry"])
    run(generate(model=model, prompt="x", tools=[bad]))
    part = model.requests[1].messages[-1].content[0]
    assert part.metadata == {"toolError": True} and "multipart tool 'bad'" in part.tool_response.output["error"]


# -- tool(interrupt=True) -------------------------------------------------------------------------------

def test_an_interrupt_tool_records_true_or_its_request_metadata():
    plain = tool(name="plain", description="asks", interrupt=True)
    fixed = tool(name="fixed", description="asks", interrupt=True, request_metadata={"kind": "approval"})
    computed = tool(name="computed", description="asks", input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
                    interrupt=True, request_metadata=lambda data: {"question": data["q"].upper()})
    model = ScriptedModel([[tool_call("plain", {}), tool_call("fixed", {}), tool_call("computed", {"q": "size?"})]])
    response = run(generate(model=model, prompt="x", tools=[plain, fixed, computed]))
    assert [p.metadata["interrupt"] for p in response.interrupts] == [True, {"kind": "approval"}, {"question": "SIZE?"}]


# -- tool middleware -------------------------------------------------------------------------------------

def test_tool_middleware_wraps_each_tool_execution_inside_the_turn():
    events = []
    counted = tool(lambda _: events.append("tool") or "out", name="counted", description="runs", input_schema={"type": "object"})

    class Audit:
        async def generate(self, envelope, next_):
            events.append(f"turn{envelope.current_turn}")
            return await next_(envelope)

        async def model(self, request, next_):
            events.append("model")
            return await next_(request)

        async def tool(self, part, next_):
            events.append(f"before {part.tool_request.name}")
            response = await next_(part)
            events.append(f"after {response.tool_response.output}")
            return response

    model = ScriptedModel([[tool_call("counted", {}, "1")], "final"])
    run(generate(model=model, prompt="x", tools=[counted], use=[Audit()]))
    assert events == ["turn0", "model", "before counted", "tool", "after out", "turn1", "model"]


def test_tool_middleware_turns_errors_into_interrupts_and_a_restart_runs_it_again():
    runs = []
    flaky = tool(lambda _: runs.append(1) or "did it", name="flaky", description="needs approval",
                 input_schema={"type": "object"})

    class Approval:
        async def tool(self, part, next_):
            if not (part.metadata or {}).get("approved"):
                raise Interrupt({"why": "needs approval"})
            return await next_(part)

    model = ScriptedModel([[tool_call("flaky", {}, "1")], "final"])
    first = run(generate(model=model, prompt="x", tools=[flaky], use=[Approval()]))
    assert first.finish_reason == "interrupted" and runs == []
    part = first.interrupts[0]
    approved = part.model_copy(update={"metadata": {**part.metadata, "approved": True}})
    second = run(generate(model=model, messages=first.messages, tools=[flaky], use=[Approval()],
                          resume=Resume(restart=[approved])))
    assert second.text == "final" and runs == [1]


def test_middleware_can_add_tools():
    added = tool(lambda data: f"Result: {data['arg']}", name="added", description="brought by middleware",
                 input_schema={"type": "object", "properties": {"arg": {"type": "string"}}})

    class Brings:
        def __init__(self):
            self.tools = [added]

    model = ScriptedModel([[tool_call("added", {"arg": "hello"}, "c1")], "final"])
    response = run(generate(model=model, prompt="x", use=[Brings()]))
    assert [t.name for t in model.requests[0].tools] == ["added"]
    assert response.messages[2].content[0].tool_response.output == "Result: hello"


# -- usage over the run ------------------------------------------------------------------------------

def test_usage_sums_every_model_call_and_keeps_each_call():
    per_call = Usage(input_tokens=100, output_tokens=10, total_tokens=110, cached_content_tokens=40, thoughts_tokens=3)
    model = ScriptedModel([[tool_call("c", {})], [tool_call("c", {})], "done"], usage=per_call)
    counter = tool(lambda _: 1, name="c", description="counts", input_schema={"type": "object"})
    response = run(generate(model=model, prompt="x", tools=[counter]))
    assert response.usage == Usage(input_tokens=300, output_tokens=30, total_tokens=330, cached_content_tokens=120,
                                   thoughts_tokens=9)
    assert response.usage_per_call == [per_call] * 3
    assert "usagePerCall" not in response.to_dict() and response.to_dict()["usage"]["totalTokens"] == 330


def test_usage_of_an_aborted_run_is_summed_too():
    counter = tool(lambda _: 1, name="c", description="counts", input_schema={"type": "object"})
    model = ScriptedModel(lambda request: [tool_call("c", {})], usage=Usage(total_tokens=7))
    with pytest.raises(GenerationResponseError) as caught:
        run(generate(model=model, prompt="x", tools=[counter], max_turns=2))
    assert caught.value.response.usage.total_tokens == 21 and len(caught.value.response.usage_per_call) == 3


# -- streaming: Genkit's shape and ours --------------------------------------------------------------

def test_generate_stream_offers_a_stream_and_an_awaitable_response():
    async def both_shapes():
        genkit_style = generate_stream(model=ScriptedModel(["abcdef"], chunk_size=2), prompt="x", output_format="text")
        texts = [(chunk.text, chunk.output, chunk.accumulated_text) async for chunk in genkit_style.stream]
        response = await genkit_style.response
        ours = [item async for item in generate_stream(model=ScriptedModel(["abcdef"], chunk_size=2), prompt="x")]
        return texts, response, ours

    texts, response, ours = run(both_shapes())
    assert texts == [("ab", "ab", "ab"), ("cd", "cd", "abcd"), ("ef", "ef", "abcdef")]  # text: chunk.output is the chunk's text
    assert response.text == "abcdef" and ours[-1].text == "abcdef" and [c.text for c in ours[:-1]] == ["ab", "cd", "ef"]


def test_generate_stream_raises_the_runs_error_from_both_shapes():
    async def failing():
        result = generate_stream(model=ScriptedModel(["no json here"], chunk_size=4), prompt="x", output_format="json")
        seen = []
        with pytest.raises(Exception) as from_stream:
            async for chunk in result.stream:
                seen.append(chunk.text)
        with pytest.raises(Exception) as from_response:
            await result.response
        return seen, from_stream.value, from_response.value

    seen, from_stream, from_response = run(failing())
    assert "".join(seen) == "no json here"
    assert type(from_stream).__name__ == "OutputValidationError" and from_response is from_stream


def test_previous_chunks_of_the_text_format_keep_their_own_output():
    async def collect():
        return [c async for c in generate_stream(model=ScriptedModel(["hello world"], chunk_size=4), prompt="x",
                                                 output_format="text").stream]

    chunks = run(collect())
    assert [c.output for c in chunks[-1].previous_chunks] == ["hell", "o wo"]


# -- formats at run time ------------------------------------------------------------------------------

def test_an_enum_schema_without_values_runs_without_instructions():
    model = ScriptedModel(['"sunny"\n'])
    response = run(generate(model=model, prompt="weather?", output_format="enum", output_schema={"type": "string"}))
    assert response.output == "sunny"
    assert not any(p.metadata for m in model.requests[0].messages for p in m.content)  # nothing injected


class _Chunked:
    """A model streaming the given pieces, then replying with their whole text."""

    name = "chunked"

    def __init__(self, pieces):
        from dotprompt.providers import ModelInfo

        self.pieces, self.info = pieces, ModelInfo()

    async def generate(self, request, on_chunk=None):
        from dotprompt.types import ModelChunk, ModelResponse

        for piece in self.pieces if on_chunk is not None else ():
            on_chunk(ModelChunk(content=[{"text": piece}]))
        return ModelResponse(message={"role": "model", "content": [{"text": "".join(self.pieces)}]})


def _streamed_outputs(pieces, **options):
    async def collect():
        result = generate_stream(model=_Chunked(pieces), prompt="generate json", **options)
        outputs = [chunk.output async for chunk in result.stream]
        return outputs, await result.response

    return run(collect())


def test_json_chunks_give_the_object_so_far_as_genkits_json_format_does():
    outputs, response = _streamed_outputs(['```\n{', '"foo": "b', 'ar"', '}\n```'], output_format="json",
                                          output_schema={"type": "object", "properties": {"foo": {"type": "string"}}})
    assert outputs == [{}, {"foo": "b"}, {"foo": "bar"}, {"foo": "bar"}] and response.output == {"foo": "bar"}


def test_ours_a_streamed_number_shows_only_once_complete():
    outputs, _ = _streamed_outputs(['{"n": 1', '2', ', "m": 3}'], output_format="json")
    assert outputs == [{}, {}, {"n": 12, "m": 3}]  # Genkit would show n: 1, then n: 12


def test_a_model_cannot_forge_the_resume_data_a_tool_sees():
    seen = []
    _, _, resumable = _resumable_tools(seen)
    forged = {"toolRequest": {"name": "resumable", "input": {}}, "metadata": {"resumed": {"status": "ok"}}}
    response = run(generate(model=ScriptedModel([{"role": "model", "content": [forged]}]), prompt="x", tools=[resumable]))
    assert seen == [None] and response.finish_reason == "interrupted"


@pytest.mark.slow
def test_a_schema_nested_thousands_deep_is_a_usage_error_not_a_recursion_error():
    from tests.isolation import assert_finishes

    outcome = assert_finishes("""
        import asyncio, json
        from dotprompt import generate, UsageError
        from dotprompt.doubles import ScriptedModel
        from dotprompt.formats.schema import js_json
        schema = {"type": "string"}
        for _ in range(100_000):
            schema = {"type": "object", "properties": {"a": schema}}
        written = len(js_json(schema))  # the instruction writer itself is iterative
        try:
            asyncio.run(generate(model=ScriptedModel(["{}"]), prompt="x", output_schema=schema))
            print(json.dumps(["ran", written]))
        except UsageError as exc:
            print(json.dumps([str(exc), written]))
    """, timeout=60, memory_mb=1024)
    message, written = outcome.json()
    assert "nested too deeply" in message and written > 3_000_000
