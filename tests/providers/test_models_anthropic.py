"""The Anthropic provider against httpx mock transports serving the Messages API wire format."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dotprompt import Message, ModelError, generate, tool
from dotprompt.providers import resolve_model
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.types import GenerateRequest
from tests.providers.mock_server import FIXTURES, Server, add, fixture, merge_history

KEY = "test-key"
BASE = "https://api.anthropic.test/v1"


@tool
def broken(a: int) -> int:
    """Always fails."""
    raise RuntimeError("disk on fire")


def stream_of(*events: dict) -> httpx.Response:
    """An SSE reply: message_start, the given events, then message_delta (end_turn) and message_stop."""
    start = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
                                                  "usage": {"input_tokens": 5, "output_tokens": 1}}}
    end = [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
           {"type": "message_stop"}]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in [start, *events, *end])
    return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})


def sse_text(text: str) -> httpx.Response:
    return stream_of({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                     {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                     {"type": "content_block_stop", "index": 0})


def model_for(server: Server) -> AnthropicModel:
    config = ProviderConfig(provider="anthropic", base_url=BASE, api_key=KEY)
    return AnthropicModel("anthropic/claude-test", config=config, transport=httpx.MockTransport(server))


def ask(server: Server, **options):
    return asyncio.run(generate(model=model_for(server), **options))


def user(text: str) -> Message:
    return Message(role="user", content=[{"text": text}])


# -- requests and replies --------------------------------------------------------------------------

def test_text_request_and_reply_field_by_field():
    server = Server("anthropic_text.json")
    response = ask(server, system="Be brief.", prompt="Capital of France?",
                   config={"maxOutputTokens": 20, "stopSequences": ["END"], "metadata": {"user_id": "u1"}})
    request = server.requests[0]
    assert str(request.url) == f"{BASE}/messages"
    assert request.headers["x-api-key"] == KEY and request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert server.body(0) == {
        "model": "claude-test", "max_tokens": 20, "stop_sequences": ["END"], "metadata": {"user_id": "u1"},
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}]}
    assert response.text == "Paris." and response.finish_reason == "stop" and response.finish_message == "end_turn"
    # Cache reads are prompt tokens too: 14 uncached + 6 read from the cache.
    assert response.usage.model_dump(exclude_none=True) == {"input_tokens": 20, "output_tokens": 4, "total_tokens": 24,
                                                            "cached_content_tokens": 6, "cache_creation_tokens": 0}


def test_sampling_config_passes_through_as_the_author_wrote_it():
    # The anthropic SDK's request type (2.14) no longer lists temperature/top_p/top_k; older models still
    # take them, so the author's config is sent as written (the vendor check is off for this body only).
    server = Server("anthropic_text.json", conform=False)
    ask(server, prompt="hi", config={"temperature": 0, "topP": 0.9, "topK": 5})
    assert {k: server.body(0)[k] for k in ("temperature", "top_p", "top_k")} == {"temperature": 0, "top_p": 0.9, "top_k": 5}


def test_max_tokens_defaults_and_unknown_config_keys_pass_through():
    server = Server("anthropic_text.json")
    thinking = {"type": "enabled", "budget_tokens": 1024}
    ask(server, prompt="hi", config={"thinking": thinking, "metadata": {"user_id": "u-1"}})
    body = server.body(0)
    assert body["max_tokens"] == 4096 and body["thinking"] == thinking and body["metadata"] == {"user_id": "u-1"}
    assert "system" not in body and "tools" not in body and "stream" not in body


def test_media_becomes_image_and_document_blocks():
    server = Server("anthropic_text.json")
    ask(server, prompt=[{"text": "Compare."}, {"media": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                        {"media": {"url": "https://example.test/cat.jpg", "contentType": "image/jpeg"}},
                        {"media": {"url": "data:application/pdf;base64,JVBERi0x"}}])
    assert server.body(0)["messages"][0]["content"] == [
        {"type": "text", "text": "Compare."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.test/cat.jpg"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}}]


def test_stop_reasons_map_to_finish_reasons():
    replies = [{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}], "stop_reason": reason,
                "usage": {"input_tokens": 1, "output_tokens": 1}}
               for reason in ("max_tokens", "stop_sequence", "refusal", "pause_turn")]
    server = Server(*replies)
    model = model_for(server)
    request = GenerateRequest(messages=[user("x")])
    finishes = [asyncio.run(model.generate(request)).finish_reason for _ in replies]
    assert finishes == ["length", "stop", "blocked", "other"]


# -- tools -----------------------------------------------------------------------------------------

def test_tool_round_trip_through_the_loop():
    server = Server("anthropic_tool_use.json", "anthropic_tool_done.json")
    response = ask(server, prompt="2+3?", tools=[add], tool_choice="required")
    first = server.body(0)
    assert first["tools"] == [{"name": "add", "description": "Add two integers.", "input_schema": add.definition.input_schema}]
    assert first["tool_choice"] == {"type": "any"}
    assert server.body(1)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "2+3?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me add those."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "add", "input": {"a": 2, "b": 3}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "5"}]}]
    assert response.text == "2 + 3 = 5"


def test_a_failing_tool_is_reported_with_is_error():
    call = {"type": "message", "role": "assistant", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": "toolu_9", "name": "broken", "input": {"a": 1}}]}
    server = Server(call, "anthropic_tool_done.json")
    ask(server, prompt="x", tools=[broken])
    result = server.body(1)["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_9" and result["is_error"] is True
    assert "disk on fire" in json.loads(result["content"])["error"]


def test_history_gets_stable_ids_and_alternating_merged_turns():
    history = merge_history()
    server = Server("anthropic_text.json")
    ask(server, messages=history, tools=[add], tool_choice="none")
    body = server.body(0)
    assert body["tool_choice"] == {"type": "none"} and body["system"] == [{"type": "text", "text": "Be exact."}]
    sent = body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    assert sent[1]["content"] == [{"type": "tool_use", "id": "toolu_3_0", "name": "add", "input": {"a": 1, "b": 1}}]
    assert sent[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_3_0", "content": "{\"sum\": 2}"},
                                  {"type": "text", "text": "and now?"}]


def test_thinking_blocks_go_back_with_their_signature():
    reply = {"type": "message", "role": "assistant", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
             "content": [{"type": "thinking", "thinking": "I should add.", "signature": "sig-abc"},
                         {"type": "redacted_thinking", "data": "opaque"},
                         {"type": "tool_use", "id": "toolu_7", "name": "add", "input": {"a": 1, "b": 2}}]}
    server = Server(reply, "anthropic_tool_done.json")
    ask(server, prompt="1+2?", tools=[add], config={"thinking": {"type": "enabled", "budget_tokens": 2048}})
    assert server.body(1)["messages"][1]["content"] == reply["content"]


# -- constrained output ----------------------------------------------------------------------------

def test_unconstrained_output_is_instructions_in_the_system_prompt_not_a_schema_field():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
              "required": ["city"]}
    server = Server("anthropic_json.json")
    response = ask(server, system="You are terse.", prompt="Where is the Eiffel tower?", output_schema=schema,
                   output_constrained=False)
    body = server.body(0)
    assert not {"output_format", "output_config", "response_format", "schema"} & body.keys()
    first, instructions = body["system"]
    assert first == {"type": "text", "text": "You are terse."}
    assert "JSON" in instructions["text"] and json.dumps(schema, separators=(",", ":")) in instructions["text"]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Where is the Eiffel tower?"}]}]
    assert response.output == {"city": "Paris", "country": "France"}
    assert response.custom == {"structuredOutput": "instructions"}


def test_constrained_output_uses_native_structured_outputs():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
              "required": ["city"]}
    server = Server("anthropic_json.json")
    response = ask(server, system="You are terse.", prompt="Where is the Eiffel tower?", output_schema=schema)
    body = server.body(0)
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": {**schema, "additionalProperties": False}}}
    assert body["system"] == [{"type": "text", "text": "You are terse."}]  # no instructions: the API enforces the schema
    assert "tools" not in body and "tool_choice" not in body
    assert response.output == {"city": "Paris", "country": "France"}
    assert response.custom == {"structuredOutput": "native-strict"}


# -- streaming -------------------------------------------------------------------------------------

def test_streamed_text_chunks_and_final_usage():
    server = Server("anthropic_stream_text.sse")
    chunks = []
    response = asyncio.run(model_for(server).generate(GenerateRequest(messages=[user("hi")]), chunks.append))
    assert server.body(0)["stream"] is True
    assert [c.content[0].text for c in chunks] == ["Hello", ", world!"]
    assert response.message.text == "Hello, world!" and response.finish_reason == "stop"
    assert response.usage.model_dump(exclude_none=True) == {"input_tokens": 25, "output_tokens": 15, "total_tokens": 40}


def test_streamed_tool_call_through_the_loop():
    server = Server("anthropic_stream_tool.sse", sse_text("5"))
    chunks = []
    response = ask(server, prompt="2+3?", tools=[add], on_chunk=chunks.append)
    partial = [c.content[0].tool_request for c in chunks if c.content and c.content[0].tool_request]
    assert [p.input for p in partial] == ["", "", "{\"a\": 2,", "{\"a\": 2, \"b\": 3}"]
    assert all(p.partial and p.name == "add" and p.ref == "toolu_01T1x1fJ34qAmk2tNTrN7Up6" for p in partial)
    sent = server.body(1)["messages"]
    assert sent[1]["content"][1] == {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "add",
                                     "input": {"a": 2, "b": 3}}
    assert sent[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "content": "5"}]
    assert response.text == "5"


def test_invalid_streamed_tool_json_is_kept_raw_and_marked():
    server = Server("anthropic_stream_bad_json.sse")
    response = asyncio.run(model_for(server).generate(GenerateRequest(messages=[user("x")]), lambda chunk: None))
    part = response.message.content[0]
    assert part.tool_request.input == "{\"a\": 2, b: " and part.metadata == {
        "invalidArguments": "the model's tool-call arguments are not valid JSON"}


def test_invalid_tool_json_goes_back_wrapped_never_as_empty_input():
    server = Server("anthropic_stream_bad_json.sse", sse_text("sorry"))
    ask(server, prompt="x", tools=[add], on_chunk=lambda chunk: None)
    sent = server.body(1)["messages"]
    assert sent[1]["content"][0]["input"] == {"rawInput": "{\"a\": 2, b: "}
    assert sent[2]["content"][0]["is_error"] is True and "ToolInputError" in sent[2]["content"][0]["content"]


def test_streamed_server_tool_blocks_are_kept_whole_and_not_run():
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    server = Server(stream_of({"type": "content_block_start", "index": 0, "content_block": block},
                              {"type": "content_block_delta", "index": 0,
                               "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}},
                              {"type": "content_block_stop", "index": 0}))
    chunks: list = []
    response = asyncio.run(model_for(server).generate(GenerateRequest(messages=[user("x")]), chunks.append))
    assert chunks == [] and response.message.content[0].custom == {"anthropic": {
        "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}}


# -- errors ----------------------------------------------------------------------------------------

def test_http_400_carries_the_providers_explanation_and_request_id():
    server = Server(fixture("anthropic_error_400.json", 400, {"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"}))
    model = model_for(server)
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x"))
    error = caught.value
    assert (error.status, error.provider, error.request_id, error.retryable) == (
        400, "anthropic", "req_011CSHoEeqs5C35K2UUqR7Fy", False)
    assert "max_tokens: Field required" in str(error)
    for text in (str(error), repr(error), repr(model), repr(model.config), repr(model.http.config)):
        assert KEY not in text


@pytest.mark.parametrize(("name", "status", "headers", "after"), [
    ("anthropic_error_429.json", 429, {"retry-after": "7", "request-id": "req_011CSHoRateLimited"}, 7.0),
    ("anthropic_error_529.json", 529, {"request-id": "req_011CSHoOverloaded"}, None)])
def test_rate_limits_and_overload_are_retryable(name, status, headers, after):
    server = Server(fixture(name, status, headers))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x")
    error = caught.value
    assert error.retryable and error.retry_after == after and error.status == status
    assert error.request_id == headers["request-id"]
    assert json.loads((FIXTURES / name).read_text())["error"]["message"] in str(error)


def test_error_event_mid_stream_keeps_what_arrived():
    server = Server(fixture("anthropic_stream_error.sse", headers={"request-id": "req_stream"}))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    error = caught.value
    assert "Overloaded" in str(error) and error.retryable and error.request_id == "req_stream"
    assert error.partial["content"] == [{"type": "text", "text": "Once upon"}]


def test_malformed_sse_line_is_an_error_keeping_what_arrived():
    server = Server("anthropic_stream_malformed.sse")
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    assert "malformed stream event" in str(caught.value)
    assert caught.value.partial["content"] == [{"type": "text", "text": "Hel"}]


def test_a_stream_cut_before_message_stop_is_a_retryable_error():
    body = (FIXTURES / "anthropic_stream_text.sse").read_text().split("event: message_delta")[0]
    server = Server(httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    assert caught.value.retryable and caught.value.partial["content"] == [{"type": "text", "text": "Hello, world!"}]


# -- registration ----------------------------------------------------------------------------------

def test_the_anthropic_prefix_resolves_to_this_provider(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = resolve_model("anthropic/claude-registry-test")
    assert isinstance(model, AnthropicModel) and model.model_id == "claude-registry-test"
    assert model.info.constrained == "all" and KEY not in repr(model.config)

