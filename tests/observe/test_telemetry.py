"""The spans of generate runs, read back from the OpenTelemetry SDK's in-memory exporter.

The SDK's tracer provider is installed once for the process (OpenTelemetry allows one); every test
clears the exporter first and reads the finished spans of its own run.
"""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from dotprompt import ModelError, OutputValidationError, PromptLibrary, ToolExecutionError, Usage, generate, retry, tool
from dotprompt.doubles import ScriptedModel, tool_call

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def sdk():
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)
    yield
    EXPORTER.clear()


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    for name in ("DOTPROMPT_TRACING", "DOTPROMPT_TRACE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"):
        monkeypatch.delenv(name, raising=False)
    EXPORTER.clear()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken(a: int) -> int:
    """Always fails."""
    raise ValueError(f"cannot handle {a}")


PROMPT = "---\nmodel: openai/gpt-4o-mini\nconfig: {temperature: 0.2, maxOutputTokens: 50}\n---\nAdd {{ x }} and 2."


def stop(text):
    """A reply that says why it stopped (a plain scripted text gives no finish reason)."""
    return {"message": {"role": "model", "content": [{"text": text}]}, "finishReason": "stop"}


def prompt(folder, text=PROMPT, name="adder"):
    folder.write(f"{name}.prompt", text)
    folder.write("_note.prompt", "Be brief.")
    return PromptLibrary(folder.path).load(name)


def spans():
    return sorted(EXPORTER.get_finished_spans(), key=lambda s: s.start_time)


def tree(found):
    """name -> (parent name, span) for each finished span (names made unique by order)."""
    by_id = {s.context.span_id: s for s in found}
    return [(s.name, by_id[s.parent.span_id].name if s.parent is not None and s.parent.span_id in by_id else None)
            for s in found]


def test_a_tool_loop_is_one_run_span_over_model_calls_and_tool_runs(folder):
    adder = prompt(folder)
    usage = Usage(input_tokens=10, output_tokens=4, cached_content_tokens=3)
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2}, ref="r1"), tool_call("add", {"a": 3, "b": 4}, ref="r2")],
                           stop("it is 3 and 7")], name="openai/gpt-4o-mini", usage=usage)
    response = asyncio.run(adder.generate({"x": 1}, model=model, tools=[add]))
    found = spans()
    assert tree(found) == [("invoke_agent adder", None), ("chat gpt-4o-mini", "invoke_agent adder"),
                           ("execute_tool add", "invoke_agent adder"), ("execute_tool add", "invoke_agent adder"),
                           ("chat gpt-4o-mini", "invoke_agent adder")]
    run, first, tool_a, tool_b, second = found
    assert run.kind == SpanKind.INTERNAL and first.kind == SpanKind.CLIENT and tool_a.kind == SpanKind.INTERNAL
    assert dict(run.attributes) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.agent.name": "adder", "dotprompt.prompt.name": "adder", "dotprompt.prompt.hash": adder.identity.hash,
        "dotprompt.stream": False, "dotprompt.max_turns": 5, "gen_ai.response.finish_reasons": ("stop",),
        "dotprompt.turns": 2, "dotprompt.output.repairs": 0, "gen_ai.response.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 8, "gen_ai.usage.cache_read.input_tokens": 6}
    assert response.identity == adder.identity
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.request.temperature"] == 0.2 and first.attributes["gen_ai.request.max_tokens"] == 50
    assert first.attributes["dotprompt.turn"] == 0 and second.attributes["dotprompt.turn"] == 1
    assert first.attributes["gen_ai.usage.input_tokens"] == 10
    assert [t.attributes["gen_ai.tool.call.id"] for t in (tool_a, tool_b)] == ["r1", "r2"]
    assert tool_a.attributes["gen_ai.tool.name"] == "add" and tool_a.attributes["gen_ai.tool.type"] == "function"
    assert tool_a.attributes["gen_ai.tool.description"] == "Add two integers."
    assert all(s.status.status_code == StatusCode.UNSET for s in found)
    # Nothing of the conversation is recorded unless asked for.
    assert not any(key.startswith(("gen_ai.input", "gen_ai.output.messages", "gen_ai.tool.call.arguments"))
                   for s in found for key in s.attributes)


def test_a_tool_that_raises_marks_its_span_and_the_run_goes_on(folder):
    model = ScriptedModel([[tool_call("broken", {"a": 5}, ref="b")], "sorry"], name="anthropic/claude-x")
    asyncio.run(prompt(folder).generate({"x": 1}, model=model, tools=[broken]))
    run, _, failed, _ = spans()
    assert failed.name == "execute_tool broken" and failed.attributes["error.type"] == "ValueError"
    assert failed.status.status_code == StatusCode.ERROR and "cannot handle 5" in failed.status.description
    assert run.status.status_code == StatusCode.UNSET and "error.type" not in run.attributes
    assert run.attributes["gen_ai.provider.name"] == "anthropic"


def test_a_stream_has_the_same_tree_and_says_it_streamed(folder):
    text = '---\nmodel: googleai/gemini-2.0-flash\noutput:\n  schema:\n    total: number\n---\nTotal of {{ x }}?'
    adder = prompt(folder, text)
    model = ScriptedModel(['```json\n{"total": 7,}\n```'], name="googleai/gemini-2.0-flash", chunk_size=3)

    async def consume():
        return [item async for item in adder.generate_stream({"x": 1}, model=model)]

    items = asyncio.run(consume())
    assert items[-1].output == {"total": 7}
    assert tree(spans()) == [("invoke_agent adder", None), ("chat gemini-2.0-flash", "invoke_agent adder")]
    run, chat = spans()
    assert run.attributes["dotprompt.stream"] is True and chat.attributes["dotprompt.stream"] is True
    assert run.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert run.attributes["dotprompt.output.format"] == "json" and run.attributes["gen_ai.output.type"] == "json"
    repairs = items[-1].output_repairs
    assert any("comma" in r.detail for r in repairs)
    assert run.attributes["dotprompt.output.repairs"] == len(repairs)


def test_a_retried_model_call_is_two_chat_spans_the_first_failed(folder):
    model = ScriptedModel([ModelError("overloaded", status=503, provider="openai", retryable=True), stop("fine")],
                          name="openai/gpt-4o-mini")
    response = asyncio.run(prompt(folder).generate({"x": 1}, model=model, use=[retry(initial_delay=0.001)]))
    assert response.text == "fine"
    assert tree(spans()) == [("invoke_agent adder", None), ("chat gpt-4o-mini", "invoke_agent adder"),
                             ("chat gpt-4o-mini", "invoke_agent adder")]
    run, failed, succeeded = spans()
    assert failed.attributes["error.type"] == "503" and failed.status.status_code == StatusCode.ERROR
    assert "overloaded" in failed.status.description
    assert "error.type" not in succeeded.attributes and succeeded.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert run.status.status_code == StatusCode.UNSET


def test_a_failed_run_records_the_error_type_on_the_run_span(folder):
    text = "---\nmodel: openai/gpt-4o-mini\noutput:\n  schema:\n    total: number\n---\nTotal?"
    with pytest.raises(OutputValidationError):
        asyncio.run(prompt(folder, text).generate(model=ScriptedModel(["no number here"], name="openai/gpt-4o-mini")))
    run, chat = spans()
    assert run.attributes["error.type"] == "OutputValidationError" and run.status.status_code == StatusCode.ERROR
    assert chat.status.status_code == StatusCode.UNSET  # the call itself worked
    EXPORTER.clear()
    model = ScriptedModel([[tool_call("broken", {"a": 1})], "x"], name="openai/gpt-4o-mini")
    with pytest.raises(ToolExecutionError):
        asyncio.run(prompt(folder).generate({"x": 1}, model=model, tools=[broken], tool_errors="raise"))
    run, _, failed = spans()
    assert failed.attributes["error.type"] == "ValueError"
    assert run.attributes["error.type"] == "ToolExecutionError"


def test_content_only_when_asked_and_never_a_key(folder, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    text = ('---\nmodel: openai/gpt-4o-mini\n---\n{{ role("system") }}{% include "note" %}\n'
            '{{ role("user") }}key {{ x }} at https://bob:hunter22@example.com/')
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2}, ref="r")], stop("done")], name="openai/gpt-4o-mini")
    asyncio.run(prompt(folder, text).generate({"x": "sk-test-0123456789abcdef"}, model=model, tools=[add]))
    run, chat, tool_span, _ = spans()
    sent = chat.attributes["gen_ai.input.messages"]
    assert '"role": "user"' in sent and "key *** at https://***@example.com/" in sent
    assert chat.attributes["gen_ai.system_instructions"] == '[{"type": "text", "content": "Be brief."}]'
    assert '"type": "tool_call"' in chat.attributes["gen_ai.output.messages"]
    assert tool_span.attributes["gen_ai.tool.call.arguments"] == '{"a": 1, "b": 2}'
    assert tool_span.attributes["gen_ai.tool.call.result"] == "3"
    assert '"finish_reason": "stop"' in run.attributes["gen_ai.output.messages"]
    everything = repr([dict(s.attributes) for s in spans()]) + repr([s.status.description for s in spans()])
    assert "sk-test-0123456789abcdef" not in everything and "hunter22" not in everything
    monkeypatch.setenv("DOTPROMPT_TRACE_CONTENT", "0")  # ours wins over the conventions' variable
    EXPORTER.clear()
    asyncio.run(generate(model=ScriptedModel(["x"], name="m"), prompt="secret words"))
    assert not any("gen_ai.input.messages" in s.attributes for s in spans())


def test_a_key_holding_a_quote_or_backslash_is_masked_on_every_span(folder, monkeypatch):
    """JSON writes such a key escaped (`\\"`), so it is masked before encoding, as the run log does."""
    key = 'sk-te"st\\key-0123456789'
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("OPENAI_API_KEY", key)
    model = ScriptedModel([[tool_call("echo", {"text": key}, ref="r")], stop(f"it was {key}")],
                          name="openai/gpt-4o-mini")
    asyncio.run(prompt(folder).generate({"x": key}, model=model, tools=[echo]))
    everything = repr([dict(s.attributes) for s in spans()])
    assert "0123456789" not in everything
    _, chat, tool_span, _ = spans()
    assert tool_span.attributes["gen_ai.tool.call.arguments"] == '{"text": "***"}'
    assert "Add *** and 2." in chat.attributes["gen_ai.input.messages"]


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


def test_tracing_off_makes_no_spans(monkeypatch):
    monkeypatch.setenv("DOTPROMPT_TRACING", "0")
    asyncio.run(generate(model=ScriptedModel(["x"]), prompt="hi"))
    assert spans() == []


def test_a_run_without_a_prompt_and_a_span_of_the_application_around_it():
    tracer = trace.get_tracer("app")
    with tracer.start_as_current_span("handle request"):
        asyncio.run(generate(model=ScriptedModel(["x"], name="echo-ish"), prompt="hi"))
    assert tree(spans()) == [("handle request", None), ("invoke_agent", "handle request"),
                             ("chat echo-ish", "invoke_agent")]
    run = spans()[1]
    assert run.attributes["gen_ai.provider.name"] == "_OTHER" and "dotprompt.prompt.hash" not in run.attributes
