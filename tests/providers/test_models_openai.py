"""The OpenAI-compatible provider against httpx mock transports serving the Chat Completions wire format."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dotprompt import ModelError, UsageError, generate
from dotprompt.providers.config import ProviderConfig, provider_config
from dotprompt.providers.gemini import GOOGLEAI
from dotprompt.providers.openai import OLLAMA, OPENAI, OpenAIModel
from tests.providers.mock_server import FIXTURES, Server, add
from tests.providers.vendor_types import check_openai_response

KEY = "sk-test-not-a-real-key"


def completion(message: dict, finish: str = "stop", usage: dict | None = None) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 1764547200, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage or {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def model_for(server: Server, name: str = "openai/gpt-test") -> OpenAIModel:
    config = ProviderConfig("openai", "https://api.example.test/v1", KEY)
    return OpenAIModel(name, config=config, transport=httpx.MockTransport(server))


def test_plain_text_request_and_reply_field_by_field():
    server = Server(completion({"role": "assistant", "content": "Paris."}))
    response = asyncio.run(generate(model=model_for(server), system="Be brief.", prompt="Capital of France?",
                                    config={"temperature": 0, "maxOutputTokens": 20, "seed": 7}))
    request = server.requests[0]
    assert str(request.url) == "https://api.example.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert server.body(0) == {"model": "gpt-test", "temperature": 0, "max_tokens": 20, "seed": 7, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}]}
    assert response.text == "Paris." and response.usage.total_tokens == 5 and response.finish_reason == "stop"


def test_media_parts_become_image_url_content():
    server = Server(completion({"role": "assistant", "content": "a cat"}))
    asyncio.run(generate(model=model_for(server), prompt=[{"text": "What is this?"},
                                                           {"media": {"url": "data:image/png;base64,AAAA"}}]))
    assert server.body(0)["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]


def test_tool_round_trip_through_the_loop():
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}
    server = Server(completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"),
                    completion({"role": "assistant", "content": "5"}))
    response = asyncio.run(generate(model=model_for(server), prompt="2+3?", tools=[add], tool_choice="required"))
    first = server.body(0)
    assert first["tools"] == [{"type": "function", "function": {"name": "add", "description": "Add two integers.",
                                                                "parameters": add.definition.input_schema}}]
    assert first["tool_choice"] == "required"
    second = server.body(1)["messages"]
    assert second[1] == {"role": "assistant", "content": None, "tool_calls": [call]}
    assert second[2] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
    assert response.text == "5"


def test_tool_requests_without_refs_get_matching_ids():
    from dotprompt import Message

    history = [Message.model_validate(m) for m in (
        {"role": "user", "content": [{"text": "q"}]},
        {"role": "model", "content": [{"toolRequest": {"name": "add", "input": {"a": 1, "b": 1}}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "output": {"sum": 2}}}]})]
    server = Server(completion({"role": "assistant", "content": "2"}))
    asyncio.run(generate(model=model_for(server), messages=history))
    sent = server.body(0)["messages"]
    assert sent[1]["tool_calls"][0]["id"] == sent[2]["tool_call_id"]
    assert json.loads(sent[2]["content"]) == {"sum": 2}


def test_constrained_output_sends_response_format():
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    server = Server(completion({"role": "assistant", "content": "{\"city\": \"Paris\"}"}))
    response = asyncio.run(generate(model=model_for(server), prompt="where?", output_schema=schema))
    strict = {**schema, "additionalProperties": False}
    assert server.body(0)["response_format"] == {"type": "json_schema",
                                                 "json_schema": {"name": "output", "schema": strict, "strict": True}}
    assert response.output == {"city": "Paris"}
    assert response.custom == {"structuredOutput": "native-strict"}


def sse(name: str) -> httpx.Response:
    return httpx.Response(200, content=(FIXTURES / name).read_bytes(), headers={"content-type": "text/event-stream"})


def sse_text(text: str) -> httpx.Response:
    events = [{"choices": [{"index": 0, "delta": {"content": text}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})


def test_streamed_tool_call_fragments_accumulate_per_index():
    server = Server(sse("openai_stream_tool.sse"), sse_text("5"))
    chunks = []
    response = asyncio.run(generate(model=model_for(server), prompt="2+3?", tools=[add], on_chunk=chunks.append))
    assert server.body(0)["stream"] is True and server.body(0)["stream_options"] == {"include_usage": True}
    partial = [c.content[0].tool_request for c in chunks if c.content and c.content[0].tool_request]
    assert [p.input for p in partial] == ["", "{\"a\": 2,", "{\"a\": 2, \"b\": 3}"] and all(p.partial for p in partial)
    assert server.body(1)["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{\"a\": 2, \"b\": 3}"
    assert response.text == "5"


def test_streamed_text_with_usage_and_parsed_output():
    server = Server(sse("openai_stream_text.sse"))
    chunks = []
    response = asyncio.run(generate(model=model_for(server), prompt="5?", output_schema={"type": "object"},
                                    on_chunk=chunks.append))
    assert "".join(c.text for c in chunks) == "{\"answer\": \"five\"}"
    assert response.output == {"answer": "five"} and response.usage.total_tokens == 9


def test_invalid_tool_arguments_are_kept_raw_and_reported():
    call = {"id": "c9", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, b: }"}}
    server = Server(completion({"role": "assistant", "content": "", "tool_calls": [call]}, "tool_calls"),
                    completion({"role": "assistant", "content": "sorry"}))
    asyncio.run(generate(model=model_for(server), prompt="x", tools=[add]))
    sent = server.body(1)["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == "{\"a\": 2, b: }"  # raw text, not {}
    assert "ToolInputError" in json.loads(sent[2]["content"])["error"]


def test_http_400_carries_the_providers_explanation_and_request_id():
    error_body = {"error": {"message": "Invalid value for 'temperature'", "type": "invalid_request_error"}}
    server = Server(httpx.Response(400, json=error_body, headers={"x-request-id": "req_123"}))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model_for(server), prompt="x", config={"temperature": 9}))
    error = caught.value
    assert (error.status, error.request_id, error.retryable) == (400, "req_123", False)
    assert "Invalid value for 'temperature'" in str(error) and KEY not in str(error) and KEY not in repr(error)


@pytest.mark.parametrize(("status", "headers", "after"), [(429, {"retry-after": "3"}, 3.0), (503, {}, None),
                                                           (429, {"retry-after-ms": "1500"}, 1.5)])
def test_rate_limits_and_server_errors_are_retryable(status, headers, after):
    server = Server(httpx.Response(status, json={"error": {"message": "busy"}}, headers=headers))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model_for(server), prompt="x"))
    assert caught.value.retryable and caught.value.retry_after == after and caught.value.status == status


def test_malformed_sse_line_is_an_error_keeping_what_arrived():
    body = b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\ndata: {not json\n\n'
    server = Server(httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model_for(server), prompt="x", on_chunk=lambda c: None))
    assert "malformed stream event" in str(caught.value)
    assert caught.value.partial["choices"][0]["message"]["content"] == "Hel"


def test_connection_refused_names_the_url():
    model = OpenAIModel("openai/x", config=ProviderConfig("openai", "http://127.0.0.1:9/v1", KEY))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x"))
    assert "http://127.0.0.1:9/v1/chat/completions" in str(caught.value) and caught.value.retryable


def test_missing_key_names_the_variable():
    with pytest.raises(UsageError, match="set OPENAI_API_KEY"):
        provider_config(OPENAI, env={}, settings={})
    with pytest.raises(UsageError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        provider_config(GOOGLEAI, env={}, settings={})


def test_config_sources_in_order():
    env = {"OPENAI_API_KEY": "k-env", "OPENAI_BASE_URL": "http://env/v1", "OLLAMA_HOST": "gpu-box:11434"}
    assert provider_config(OPENAI, env=env, settings={}).base_url == "http://env/v1"
    assert provider_config(OPENAI, env=env, settings={"base_url": "http://toml/v1"}).base_url == "http://toml/v1"
    assert provider_config(OPENAI, base_url="http://arg/v1", env=env, settings={}).base_url == "http://arg/v1"
    assert provider_config(OPENAI, env={"MY_KEY": "k2"}, settings={"api_key_env": "MY_KEY"}).api_key == "k2"
    assert provider_config(OLLAMA, env=env, settings={}).base_url == "http://gpu-box:11434/v1"
    assert provider_config(OLLAMA, env={}, settings={}).api_key is None
    assert "k-env" not in repr(provider_config(OPENAI, env=env, settings={}))


def test_unknown_provider_prefix_lists_the_known_ones():
    with pytest.raises(UsageError) as caught:
        asyncio.run(generate(model="openia/gpt-4o", prompt="x"))
    assert "openai/..." in str(caught.value) and "anthropic/..." in str(caught.value)


def test_the_scripted_completions_are_what_the_sdk_parses():
    check_openai_response(completion({"role": "assistant", "content": "x"}))
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    check_openai_response(completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"))


def test_an_error_event_in_the_stream_is_a_retryable_model_error_keeping_the_text():
    server = Server(sse("openai_stream_error.sse"))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model_for(server), prompt="story", on_chunk=lambda chunk: None))
    error = caught.value
    assert "The server had an error" in str(error) and error.retryable
    assert error.partial["choices"][0]["message"]["content"] == "Once upon"
