"""Structured output each provider's API enforces, through the real generate loop and a mock transport:
OpenAI strict json_schema (and its fallback), Anthropic structured outputs or a forced output tool,
Gemini's response schema; the mechanism reported on the response; the body shown by preview_request."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest

from dotprompt import generate, preview_request
from dotprompt.providers.gemini import GEMINI3_INFO, GEMINI_INFO
from tests.providers.mock_server import Server, add, anthropic_model, gemini_model, openai_model

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["city"]}
FREE_FORM = {"type": "object", "properties": {"city": {"type": "string"}, "extra": {"type": "object"}}, "required": ["city"]}




def completion(content: str) -> dict:
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


# -- OpenAI-compatible -----------------------------------------------------------------------------

def test_openai_strict_schema_and_the_nulls_it_adds_are_removed_before_validation():
    server = Server("openai_strict.json")
    response = asyncio.run(generate(model=openai_model(server), prompt="where?", output_schema=SCHEMA))
    sent = server.body(0)["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "output", "strict": True, "schema": {
        "type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
        "required": ["city", "zip"], "additionalProperties": False}}}
    # The model sent {"city": "Paris", "zip": null}; zip is optional (not nullable) in the author's schema.
    assert response.output == {"city": "Paris"}
    assert response.custom == {"structuredOutput": "native-strict"}
    assert response.raw["choices"][0]["message"]["content"] == '{"city": "Paris", "zip": null}'  # the reply itself kept
    usage = response.usage
    assert (usage.input_tokens, usage.cached_content_tokens, usage.output_tokens, usage.thoughts_tokens) == (1500, 1024, 90, 64)


def test_openai_falls_back_to_non_strict_with_a_logged_reason(caplog):
    server = Server(completion('{"city": "Paris", "extra": {"k": 1}}'))
    with caplog.at_level(logging.WARNING, logger="dotprompt.models"):
        response = asyncio.run(generate(model=openai_model(server), prompt="where?", output_schema=FREE_FORM))
    assert server.body(0)["response_format"] == {"type": "json_schema",
                                                 "json_schema": {"name": "output", "schema": FREE_FORM, "strict": False}}
    reason = ("OpenAI strict cannot enforce this schema: $.extra is an object without listed properties "
              "(a free-form object or map)")
    assert response.custom == {"structuredOutput": "native", "structuredOutputFallback": reason}
    assert any(reason in r.getMessage() and "openai/gpt-test" in r.getMessage() for r in caplog.records)
    assert response.output == {"city": "Paris", "extra": {"k": 1}}


def test_openai_streamed_strict_output_is_restored_too():
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
              for piece in ('{"city": "Pa', 'ris", "zip": null}')]
    chunks.append({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    server = Server(httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}))
    seen = []
    response = asyncio.run(generate(model=openai_model(server), prompt="where?", output_schema=SCHEMA, on_chunk=seen.append))
    assert server.body(0)["response_format"]["json_schema"]["strict"] is True and server.body(0)["stream"] is True
    assert response.output == {"city": "Paris"} and response.custom == {"structuredOutput": "native-strict"}
    assert seen


def test_unconstrained_output_is_reported_as_instructions():
    server = Server(completion('{"city": "Paris"}'))
    response = asyncio.run(generate(model=openai_model(server), prompt="where?", output_schema=SCHEMA, output_constrained=False))
    assert "response_format" not in server.body(0)
    assert response.custom == {"structuredOutput": "instructions"}


def test_preview_request_wire_shows_the_strict_transformation_without_a_call():
    server = Server()  # any request would fail: no reply scripted
    body = preview_request(model=openai_model(server), prompt="where?", output_schema=SCHEMA, wire=True)
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["city", "zip"]
    assert not server.requests
    neutral = preview_request(model=openai_model(server), prompt="where?", output_schema=SCHEMA)
    assert neutral.output.json_schema == SCHEMA  # the provider-neutral request keeps the author's schema


def test_preview_request_wire_needs_an_http_model():
    from dotprompt import UsageError
    from dotprompt.doubles import ScriptedModel

    with pytest.raises(UsageError, match="no wire format to preview"):
        preview_request(model=ScriptedModel([]), prompt="hi", wire=True)


# -- Anthropic -------------------------------------------------------------------------------------

def test_anthropic_forced_output_tool_when_asked_and_its_input_is_the_output():
    server = Server("anthropic_output_tool.json")
    response = asyncio.run(generate(model=anthropic_model(server), prompt="where?", output_schema=SCHEMA,
                                    config={"structuredOutput": "tool"}))
    body = server.body(0)
    assert "structuredOutput" not in body and "output_config" not in body
    assert body["tools"] == [{"name": "dotprompt_output", "input_schema": SCHEMA,
                              "description": "Give your final answer by calling this tool with it as the input."}]
    assert body["tool_choice"] == {"type": "tool", "name": "dotprompt_output"}
    assert response.output == {"city": "Paris", "country": "France"}
    assert response.custom == {"structuredOutput": "tool"}
    assert [p.text for p in response.message.content] == ['{"city": "Paris", "country": "France"}']
    assert len(response.messages) == 2  # no tool turn: the output tool is never run


def test_anthropic_schema_that_cannot_be_structured_output_goes_through_the_tool_with_tools_kept():
    server = Server("anthropic_output_tool.json")
    response = asyncio.run(generate(model=anthropic_model(server), prompt="where?", output_schema=FREE_FORM, tools=[add]))
    body = server.body(0)
    assert [t["name"] for t in body["tools"]] == ["add", "dotprompt_output"]
    assert body["tool_choice"] == {"type": "any"}  # the author's tool or the answer, each turn
    assert response.custom["structuredOutput"] == "tool"
    assert "free-form object" in response.custom["structuredOutputFallback"]


def test_anthropic_array_output_is_wrapped_in_the_tool_and_unwrapped_back():
    reply = {"id": "m", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
             "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
             "content": [{"type": "tool_use", "id": "t", "name": "dotprompt_output", "input": {"value": ["a", "b"]}}]}
    server = Server(reply)
    schema = {"type": "array", "items": {"type": "string"}}
    response = asyncio.run(generate(model=anthropic_model(server), prompt="list", output_schema=schema, output_format="array"))
    assert server.body(0)["tools"][0]["input_schema"] == {"type": "object", "properties": {"value": schema},
                                                         "required": ["value"]}
    assert response.output == ["a", "b"]


def test_anthropic_streamed_output_tool_arrives_as_text_chunks():
    server = Server("anthropic_stream_output_tool.sse")
    seen = []
    response = asyncio.run(generate(model=anthropic_model(server), prompt="where?", output_schema=SCHEMA,
                                    config={"structuredOutput": "tool"}, on_chunk=seen.append))
    assert "".join(c.text for c in seen) == '{"city": "Paris", "country": "France"}'
    assert not any(p.tool_request for c in seen for p in c.content)
    assert response.output == {"city": "Paris", "country": "France"}
    assert response.usage.cached_content_tokens == 30 and response.usage.input_tokens == 80


# -- Gemini ----------------------------------------------------------------------------------------

def test_gemini_keeps_the_response_schema_and_reports_native():
    server = Server("gemini_cached.json")
    response = asyncio.run(generate(model=gemini_model(server), prompt="where?", output_schema=SCHEMA))
    config = server.body(0)["generationConfig"]
    assert config["responseMimeType"] == "application/json" and config["responseSchema"]["required"] == ["city"]
    assert response.custom == {"structuredOutput": "native"} and response.output == {"city": "Paris"}
    usage = response.usage
    assert (usage.cached_content_tokens, usage.thoughts_tokens, usage.output_tokens) == (2048, 40, 48)


def test_gemini_3_combines_the_schema_with_tools_and_2_5_uses_instructions():
    assert gemini_model(Server(), "googleai/gemini-3-pro-preview").info is GEMINI3_INFO
    assert gemini_model(Server()).info is GEMINI_INFO
    three = Server("gemini_cached.json")
    response = asyncio.run(generate(model=gemini_model(three, "googleai/gemini-3-pro-preview"), prompt="where?",
                                    output_schema=SCHEMA, tools=[add]))
    assert "tools" in three.body(0) and three.body(0)["generationConfig"]["responseMimeType"] == "application/json"
    assert response.custom == {"structuredOutput": "native"}
    two = Server("gemini_cached.json")
    response = asyncio.run(generate(model=gemini_model(two), prompt="where?", output_schema=SCHEMA, tools=[add]))
    assert "generationConfig" not in two.body(0) and response.custom == {"structuredOutput": "instructions"}


# -- hostile replies on these paths ----------------------------------------------------------------

@pytest.mark.slow
def test_deeply_nested_arguments_and_output_tool_input_end_as_clear_outcomes():
    from tests.isolation import ROOT, assert_finishes

    outcome = assert_finishes('''
import asyncio, json, sys
import httpx
from tests.providers.mock_server import Server, add
from dotprompt import DotpromptError, generate
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai import OpenAIModel

deep = "[" * 200000 + "]" * 200000
results = []
call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": deep}}
reply = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "usage": {"prompt_tokens": 1,
         "completion_tokens": 1, "total_tokens": 2}, "choices": [{"index": 0, "finish_reason": "tool_calls",
         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
model = OpenAIModel("openai/m", config=ProviderConfig("openai", "https://x.test/v1", "k"),
                    transport=httpx.MockTransport(Server(reply, conform=False)))
response = asyncio.run(generate(model=model, prompt="add", tools=[add], return_tool_requests=True))
part = response.message.content[0]
results.append([part.tool_request.input == deep, part.metadata])

events = [("message_start", {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
           "content": [], "model": "c", "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}}),
          ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
           "id": "t", "name": "dotprompt_output", "input": {}}}),
          ("content_block_delta", {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": deep}}),
          ("content_block_stop", {"type": "content_block_stop", "index": 0}),
          ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
          ("message_stop", {"type": "message_stop"})]
sse = "".join(f"event: {e}\\ndata: {json.dumps(d)}\\n\\n" for e, d in events).encode()
model = AnthropicModel("anthropic/c", config=ProviderConfig("anthropic", "https://x.test/v1", "k"),
                       transport=httpx.MockTransport(Server(httpx.Response(200, content=sse, headers={
                           "content-type": "text/event-stream"}), conform=False)))
schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
try:
    asyncio.run(generate(model=model, prompt="x", output_schema=schema, config={"structuredOutput": "tool"},
                         on_chunk=lambda c: None))
    results.append("no error")
except DotpromptError as exc:
    results.append([type(exc).__name__, exc.text == deep if hasattr(exc, "text") else None])
print(json.dumps(results))
''', timeout=60, memory_mb=1024, cwd=ROOT)
    (same, metadata), (error, kept) = outcome.json()
    assert same and metadata == {"invalidArguments": "the model's tool-call arguments are not valid JSON"}
    assert error == "OutputValidationError" and kept is True  # the model's text is kept on the error


def test_a_previewed_body_is_the_callers_to_change():
    # Strict schemas are made once and shared by later requests; a preview hands out a copy.
    server = Server()
    body = preview_request(model=openai_model(server), prompt="where?", output_schema=SCHEMA, wire=True)
    body["response_format"]["json_schema"]["schema"]["properties"].clear()
    again = preview_request(model=openai_model(server), prompt="where?", output_schema=SCHEMA, wire=True)
    assert set(again["response_format"]["json_schema"]["schema"]["properties"]) == {"city", "zip"}
