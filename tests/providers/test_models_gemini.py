"""The Gemini provider against httpx mock transports serving the generateContent wire format."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dotprompt import Message, ModelError, generate, tool
from dotprompt.providers import resolve_model
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel, gemini_schema
from dotprompt.types import GenerateRequest
from tests.providers.mock_server import FIXTURES, Server, add, fixture, merge_history

KEY = "test-key"
BASE = "https://generativelanguage.test/v1beta"


@tool
def now() -> str:
    """The current time."""
    return "noon"


ADD_PARAMETERS = {"type": "OBJECT", "properties": {"a": {"type": "INTEGER"}, "b": {"type": "INTEGER"}},
                  "propertyOrdering": ["a", "b"], "required": ["a", "b"]}


def reply(*parts: dict, finish: str = "STOP") -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": finish, "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}


def sse_text(text: str) -> httpx.Response:
    body = f"data: {json.dumps(reply({'text': text}))}\r\n\r\n"
    return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})


def model_for(server: Server, **kwargs) -> GeminiModel:
    config = ProviderConfig(provider="googleai", base_url=BASE, api_key=KEY)
    return GeminiModel("googleai/gemini-test", config=config, transport=httpx.MockTransport(server), **kwargs)


def ask(server: Server, **options):
    return asyncio.run(generate(model=model_for(server), **options))


def call(server: Server, *messages: Message, stream: bool = False, chunks: list | None = None):
    on_chunk = (chunks.append if chunks is not None else lambda chunk: None) if stream else None
    return asyncio.run(model_for(server).generate(GenerateRequest(messages=list(messages)), on_chunk))


def user(text: str) -> Message:
    return Message(role="user", content=[{"text": text}])


# -- requests and replies --------------------------------------------------------------------------

def test_text_request_and_reply_field_by_field():
    server = Server("gemini_text.json")
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]
    response = ask(server, system="Be brief.", prompt="Capital of France?", config={
        "temperature": 0, "maxOutputTokens": 20, "topP": 0.9, "topK": 5, "stopSequences": ["END"], "candidateCount": 1,
        "thinkingConfig": {"thinkingBudget": 0}, "safetySettings": safety})
    request = server.requests[0]
    assert str(request.url) == f"{BASE}/models/gemini-test:generateContent"
    assert request.headers["x-goog-api-key"] == KEY and "key=" not in str(request.url)
    assert request.headers["content-type"] == "application/json"
    assert server.body(0) == {
        "contents": [{"role": "user", "parts": [{"text": "Capital of France?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "safetySettings": safety,  # a field of the request, not of generationConfig
        "generationConfig": {"temperature": 0, "maxOutputTokens": 20, "topP": 0.9, "topK": 5, "stopSequences": ["END"],
                             "candidateCount": 1, "thinkingConfig": {"thinkingBudget": 0}}}
    assert response.text == "Paris." and response.finish_reason == "stop"
    # Thinking tokens are output tokens too: 2 in the candidate + 3 thinking.
    assert response.usage.model_dump(exclude_none=True) == {"input_tokens": 9, "output_tokens": 5, "total_tokens": 14,
                                                            "thoughts_tokens": 3}


def test_unknown_config_keys_pass_through_into_generation_config():
    server = Server("gemini_text.json")
    ask(server, prompt="hi", config={"seed": 7, "responseLogprobs": True, "presencePenalty": 0.5})
    body = server.body(0)
    assert body["generationConfig"] == {"seed": 7, "responseLogprobs": True, "presencePenalty": 0.5}
    assert "tools" not in body and "systemInstruction" not in body


def test_model_ids_with_a_resource_prefix_are_used_as_they_are():
    server = Server("gemini_text.json")
    config = ProviderConfig(provider="googleai", base_url=BASE, api_key=KEY)
    model = GeminiModel("googleai/tuned", model_id="tunedModels/my-tune-123", config=config,
                        transport=httpx.MockTransport(server))
    asyncio.run(model.generate(GenerateRequest(messages=[user("hi")])))
    assert str(server.requests[0].url) == f"{BASE}/tunedModels/my-tune-123:generateContent"


def test_media_becomes_inline_data_and_file_data():
    server = Server("gemini_text.json")
    ask(server, prompt=[{"text": "Compare."}, {"media": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                        {"media": {"url": "https://example.test/talk.mp3"}},
                        {"media": {"url": "https://generativelanguage.test/v1beta/files/abc", "contentType": "video/mp4"}}])
    assert server.body(0)["contents"][0]["parts"] == [
        {"text": "Compare."}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"fileUri": "https://example.test/talk.mp3", "mimeType": "audio/mpeg"}},
        {"fileData": {"fileUri": "https://generativelanguage.test/v1beta/files/abc", "mimeType": "video/mp4"}}]


def test_finish_reasons_map_and_finish_message_is_kept():
    server = Server(reply({"text": "x"}, finish="MAX_TOKENS"), reply({"text": "x"}, finish="RECITATION"),
                    reply({"text": "x"}, finish="LANGUAGE"), "gemini_malformed_call.json")
    responses = [call(server, user("x")) for _ in range(4)]
    assert [r.finish_reason for r in responses] == ["length", "blocked", "other", "other"]
    assert responses[3].finish_message == "Malformed function call: add(a=2, b=)" and responses[3].message.content == []


def test_a_blocked_prompt_is_finish_blocked_with_the_reason():
    response = call(Server("gemini_blocked.json"), user("something dangerous"))
    assert response.finish_reason == "blocked" and "SAFETY" in response.finish_message
    assert response.message.content == [] and response.usage.input_tokens == 8


def test_a_reply_without_candidates_or_block_reason_is_an_error():
    with pytest.raises(ModelError, match="no candidates"):
        call(Server({"modelVersion": "gemini-test"}), user("x"))


# -- tools -----------------------------------------------------------------------------------------

def test_tool_round_trip_through_the_loop():
    server = Server("gemini_function_call.json", "gemini_tool_done.json")
    response = ask(server, prompt="2+3?", tools=[add, now], tool_choice="required")
    first = server.body(0)
    assert first["tools"] == [{"functionDeclarations": [
        {"name": "add", "description": "Add two integers.", "parameters": ADD_PARAMETERS},
        {"name": "now", "description": "The current time."}]}]  # no input: no parameters (an empty OBJECT is refused)
    assert first["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert server.body(1)["contents"] == [
        {"role": "user", "parts": [{"text": "2+3?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {"a": 2, "b": 3}},
                                     "thoughtSignature": "c2lnbmF0dXJlLTE="}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {"output": 5}}}]}]
    assert response.text == "2 + 3 = 5"


def test_synthesized_refs_are_stable_and_api_ids_go_back():
    parallel = reply({"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}},
                     {"functionCall": {"id": "fc-7", "name": "add", "args": {"a": 3, "b": 4}}})
    server = Server(parallel, "gemini_tool_done.json")
    ask(server, prompt="two sums", tools=[add])
    model_turn, results = server.body(1)["contents"][1:]
    assert model_turn["parts"] == [{"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}},
                                   {"functionCall": {"id": "fc-7", "name": "add", "args": {"a": 3, "b": 4}}}]
    assert results["parts"] == [{"functionResponse": {"name": "add", "response": {"output": 3}}},
                                {"functionResponse": {"id": "fc-7", "name": "add", "response": {"output": 7}}}]
    again = call(Server(parallel), user("x"))
    assert [p.tool_request.ref for p in again.message.content] == ["gemini-call-0", "fc-7"]


def test_history_turns_merge_and_tool_choice_none():
    history = merge_history()
    server = Server("gemini_text.json")
    ask(server, messages=history, tools=[add], tool_choice="none")
    body = server.body(0)
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "first"}, {"text": "second"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {"a": 1, "b": 1}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {"sum": 2}}}, {"text": "and now?"}]}]


def test_signed_thoughts_and_unknown_parts_go_back_and_unsigned_thoughts_do_not():
    executable = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    server = Server(reply({"text": "plan", "thought": True, "thoughtSignature": "c2ln"}, {"text": "musing", "thought": True},
                          executable, {"text": "done"}), "gemini_text.json")
    first = call(server, user("x"))
    asyncio.run(model_for(server).generate(GenerateRequest(messages=[user("x"), first.message, user("more")])))
    assert server.body(1)["contents"][1]["parts"] == [{"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
                                                      executable, {"text": "done"}]


# -- constrained output and schemas ----------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}}, "required": ["city"]}


def test_constrained_output_sends_response_schema():
    server = Server("gemini_json.json")
    response = ask(server, prompt="Where is the Eiffel tower?", output_schema=SCHEMA)
    body = server.body(0)
    assert body["generationConfig"] == {"responseMimeType": "application/json", "responseSchema": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}, "country": {"type": "STRING"}},
        "propertyOrdering": ["city", "country"], "required": ["city"]}}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Where is the Eiffel tower?"}]}]  # no instructions
    assert response.output == {"city": "Paris", "country": "France"}


def test_with_tools_the_schema_becomes_instructions():
    # Gemini 2.x refuses function declarations together with a JSON response MIME type.
    server = Server("gemini_json.json")
    response = ask(server, prompt="Where?", output_schema=SCHEMA, tools=[add])
    body = server.body(0)
    assert "generationConfig" not in body and body["tools"]
    assert "JSON" in body["contents"][0]["parts"][-1]["text"] and response.output["city"] == "Paris"


def test_json_schema_is_converted_to_the_openapi_subset():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Trip", "type": "object",
        "additionalProperties": False,
        "properties": {
            "when": {"type": ["string", "null"], "format": "date-time", "title": "When"},
            "mode": {"enum": ["car", "train", None]},
            "kind": {"const": "trip"},
            "stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}, "minItems": 1, "uniqueItems": True},
            "home": {"anyOf": [{"$ref": "#/$defs/Stop"}, {"type": "null"}], "default": None},
            "id": {"oneOf": [{"type": "string"}, {"type": "integer", "exclusiveMinimum": 0}]}},
        "required": ["stops", "missing"],
        "$defs": {"Stop": {"title": "Stop", "type": "object", "properties": {"name": {"type": "string"},
                                                                             "next": {"$ref": "#/$defs/Stop"}}}}}
    stop = {"type": "OBJECT", "properties": {"name": {"type": "STRING"}, "next": {"type": "OBJECT"}},
            "propertyOrdering": ["name", "next"]}
    assert gemini_schema(schema) == {
        "type": "OBJECT", "required": ["stops"],
        "propertyOrdering": ["when", "mode", "kind", "stops", "home", "id"],
        "properties": {
            "when": {"type": "STRING", "format": "date-time", "nullable": True},
            "mode": {"type": "STRING", "enum": ["car", "train"], "nullable": True},
            "kind": {"type": "STRING", "enum": ["trip"]},
            "stops": {"type": "ARRAY", "items": stop, "minItems": 1},
            "home": {**stop, "default": None, "nullable": True},
            "id": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}}}


# -- streaming -------------------------------------------------------------------------------------

def test_streamed_text_chunks_merge_into_one_part():
    server = Server("gemini_stream_text.sse")
    chunks: list = []
    response = call(server, user("hi"), stream=True, chunks=chunks)
    assert str(server.requests[0].url) == f"{BASE}/models/gemini-test:streamGenerateContent?alt=sse"
    assert [c.content[0].text for c in chunks] == ["Hello", ", world", "!"]
    assert [p.text for p in response.message.content] == ["Hello, world!"] and response.finish_reason == "stop"
    assert response.usage.model_dump(exclude_none=True) == {"input_tokens": 4, "output_tokens": 4, "total_tokens": 8}
    assert response.raw["responseId"] == "resp-stream-1"


def test_streamed_function_call_through_the_loop():
    # Gemini sends each function call whole, in one event: the chunk holds the finished request.
    server = Server("gemini_stream_call.sse", sse_text("5"))
    chunks = []
    response = ask(server, prompt="2+3?", tools=[add], on_chunk=chunks.append)
    requests = [p.tool_request for c in chunks for p in c.content if p.tool_request]
    assert [(r.name, r.ref, r.input) for r in requests] == [("add", "gemini-call-1", {"a": 2, "b": 3})]
    assert server.body(1)["contents"][1] == {"role": "model", "parts": [
        {"text": "Adding."},
        {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": "c2lnbmF0dXJlLTI="}]}
    assert server.body(1)["contents"][2]["parts"] == [{"functionResponse": {"name": "add", "response": {"output": 5}}}]
    assert response.text == "5"


def test_a_signature_streamed_after_its_text_stays_with_it():
    events = [reply({"text": "Thinking done", "thought": True}), reply({"text": "Answer: "}),
              reply({"text": "42"}), reply({"text": "", "thoughtSignature": "c2ln"})]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    server = Server(httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}))
    chunks: list = []
    response = call(server, user("x"), stream=True, chunks=chunks)
    assert len(chunks) == 3 and chunks[0].content[0].reasoning == "Thinking done"
    reasoning, text = response.message.content
    assert reasoning.reasoning == "Thinking done" and text.text == "Answer: 42"
    assert text.metadata == {"thoughtSignature": "c2ln"}


# -- errors ----------------------------------------------------------------------------------------

def test_http_400_carries_the_providers_explanation():
    server = Server(fixture("gemini_error_400.json", 400), conform=False)  # a body the API (and its types) refuse
    model = model_for(server)
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x", config={"temperature": "hot"}))
    error = caught.value
    # The Gemini API sends no request-id header on errors; the status and Google's message are what there is.
    assert (error.status, error.provider, error.request_id, error.retryable) == (400, "googleai", None, False)
    assert "Invalid value at 'generation_config.temperature'" in str(error)
    for text in (str(error), repr(error), repr(model), repr(model.config), repr(model.http.config)):
        assert KEY not in text


def test_429_takes_the_delay_from_retry_info_in_the_body():
    server = Server(fixture("gemini_error_429.json", 429))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x")
    error = caught.value
    assert error.retryable and error.status == 429 and error.retry_after == 17.0 and "exceeded your current quota" in str(error)


def test_a_retry_after_header_wins_over_the_body():
    server = Server(fixture("gemini_error_429.json", 429, {"retry-after": "3"}))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x")
    assert caught.value.retry_after == 3.0


def test_503_overloaded_is_retryable():
    server = Server(fixture("gemini_error_503.json", 503))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x")
    assert caught.value.retryable and caught.value.status == 503 and caught.value.retry_after is None


def test_malformed_sse_line_is_an_error_keeping_what_arrived():
    server = Server("gemini_stream_malformed.sse")
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    assert "malformed stream event" in str(caught.value)
    assert caught.value.partial["candidates"][0]["content"]["parts"] == [{"text": "Hel"}]


def test_an_error_object_mid_stream_keeps_what_arrived():
    server = Server("gemini_stream_error.sse")
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    error = caught.value
    assert error.status == 503 and error.retryable and "overloaded" in str(error)
    assert error.partial["candidates"][0]["content"]["parts"] == [{"text": "Once upon"}]


def test_a_stream_cut_before_the_finish_reason_is_a_retryable_error():
    body = (FIXTURES / "gemini_stream_text.sse").read_text().split("\n\n")[0] + "\n\n"
    server = Server(httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}))
    with pytest.raises(ModelError) as caught:
        ask(server, prompt="x", on_chunk=lambda chunk: None)
    assert caught.value.retryable and "finishReason" in str(caught.value)


# -- registration ----------------------------------------------------------------------------------

def test_the_googleai_prefix_resolves_to_this_provider(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    model = resolve_model("googleai/gemini-registry-test")
    assert isinstance(model, GeminiModel) and model.model_id == "gemini-registry-test"
    assert model.info.constrained == "no-tools" and KEY not in repr(model.config)
