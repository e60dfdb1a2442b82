"""The OpenAI Responses API model (`openai-responses/`) against mock transports serving its wire format.

Every request body we build is checked against the openai SDK's own request params (vendor_types.check_responses_request),
and every reply and stream event we serve is first parsed with the SDK's own models, so a field name
that the real API does not have fails here.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from pydantic import TypeAdapter

from dotprompt import Message, ModelError, UsageError, generate
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai_responses import OpenAIResponsesModel, to_body
from dotprompt.types import GenerateRequest, OutputConfig
from tests.providers.mock_server import Server, add
from tests.providers.vendor_types import check_responses_request

openai_types = pytest.importorskip("openai.types.responses")
from openai.types.responses import Response, ResponseStreamEvent  # noqa: E402

KEY = "sk-responses-test-key-0000"
USAGE = {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 16}, "output_tokens": 12,
         "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 52}


def reply(*output: dict, status: str = "completed", usage: dict | None = USAGE, **extra) -> dict:
    """A whole Response object; the SDK's Response model must accept it."""
    data = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5-mini", "status": status,
            "output": list(output), "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": usage, **extra}
    Response.model_validate(data)
    return data


def text_item(text: str) -> dict:
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call_item(name: str, arguments: str, call_id: str = "call_1") -> dict:
    return {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name, "arguments": arguments,
            "status": "completed"}


def model_for(server: Server) -> OpenAIResponsesModel:
    config = ProviderConfig("openai-responses", "https://api.example.test/v1", KEY)
    return OpenAIResponsesModel("openai-responses/gpt-5-mini", config=config, transport=httpx.MockTransport(server))


def sse(*events: dict) -> httpx.Response:
    """A stream of events, each first parsed with the SDK's ResponseStreamEvent."""
    adapter = TypeAdapter(ResponseStreamEvent)
    lines = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        adapter.validate_python(event)
        lines.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return httpx.Response(200, content="".join(lines).encode(), headers={"content-type": "text/event-stream"})


# -- requests ----------------------------------------------------------------------------------------

def test_text_request_field_by_field_and_reply():
    server = Server(reply(text_item("Paris.")))
    response = asyncio.run(generate(model=model_for(server), system="Be brief.", prompt="Capital of France?",
                                    config={"temperature": 0, "maxOutputTokens": 20}))
    request = server.requests[0]
    assert str(request.url) == "https://api.example.test/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = server.body(0)
    assert body == {"model": "gpt-5-mini", "instructions": "Be brief.", "temperature": 0, "max_output_tokens": 20,
                    "input": [{"type": "message", "role": "user", "content": "Capital of France?"}]}
    check_responses_request(body)
    assert response.text == "Paris." and response.finish_reason == "stop"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (40, 12, 52)
    assert (usage.cached_content_tokens, usage.cache_creation_tokens, usage.thoughts_tokens) == (8, 16, 4)


def test_tool_round_trip_uses_function_call_items_and_strict_false_tools():
    server = Server(reply(call_item("add", '{"a": 2, "b": 3}')), reply(text_item("5")))
    response = asyncio.run(generate(model=model_for(server), prompt="2+3?", tools=[add], tool_choice="required"))
    first, second = server.body(0), server.body(1)
    assert first["tools"] == [{"type": "function", "name": "add", "description": "Add two integers.",
                               "parameters": add.definition.input_schema, "strict": False}]
    assert first["tool_choice"] == "required"
    assert second["input"][1:] == [
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "5"}]
    for body in (first, second):
        check_responses_request(body)
    assert response.text == "5"


def test_history_without_refs_pairs_calls_and_outputs_and_keeps_assistant_text():
    history = [Message.model_validate(m) for m in (
        {"role": "user", "content": [{"text": "q"}]},
        {"role": "model", "content": [{"text": "Let me add."}, {"toolRequest": {"name": "add", "input": {"a": 1, "b": 1}}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "output": {"sum": 2}}}]})]
    body = to_body(GenerateRequest(messages=history), "gpt-5-mini")
    assistant, call, output = body["input"][1:]
    assert assistant == {"type": "message", "role": "assistant", "content": "Let me add."}
    assert call["call_id"] == output["call_id"] and json.loads(output["output"]) == {"sum": 2}
    check_responses_request(body)


def test_structured_output_is_strict_in_text_format_and_the_added_nulls_are_removed():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
              "required": ["city"]}
    server = Server(reply(text_item('{"city": "Paris", "zip": null}')))
    response = asyncio.run(generate(model=model_for(server), prompt="Where?", output_schema=schema))
    body = server.body(0)
    assert body["text"] == {"format": {"type": "json_schema", "name": "output", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["city", "zip"],
        "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}}}}}
    check_responses_request(body)
    assert response.output == {"city": "Paris"}  # the null strict mode asked for is not the author's data
    assert response.custom == {"structuredOutput": "native-strict"}


def test_a_schema_strict_mode_cannot_take_goes_non_strict_and_says_why(caplog):
    schema = {"type": "object", "properties": {"extra": {"type": "object"}}}  # a free-form object
    server = Server(reply(text_item('{"extra": {"a": 1}}')))
    response = asyncio.run(generate(model=model_for(server), prompt="x", output_schema=schema))
    assert server.body(0)["text"]["format"] == {"type": "json_schema", "name": "output", "schema": schema, "strict": False}
    assert response.custom["structuredOutput"] == "native" and response.custom["structuredOutputFallback"]
    assert "not strictly" in caplog.text and response.output == {"extra": {"a": 1}}


@pytest.mark.parametrize(("media", "expected"), [
    ({"url": "https://x.test/cat.png"}, {"type": "input_image", "image_url": "https://x.test/cat.png", "detail": "auto"}),
    ({"url": "data:image/png;base64,AAAA"}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA",
                                              "detail": "auto"}),
    ({"url": "data:application/pdf;base64,JVBERi0x"}, {"type": "input_file", "filename": "input.pdf",
                                                       "file_data": "data:application/pdf;base64,JVBERi0x"}),
    ({"url": "https://x.test/invoice.pdf", "contentType": "application/pdf"},
     {"type": "input_file", "file_url": "https://x.test/invoice.pdf"}),
])
def test_media_parts_as_the_responses_api_takes_them(media, expected):
    message = Message.model_validate({"role": "user", "content": [{"text": "What is this?"}, {"media": media}]})
    body = to_body(GenerateRequest(messages=[message]), "gpt-5-mini")
    assert body["input"][0]["content"] == [{"type": "input_text", "text": "What is this?"}, expected]
    check_responses_request(body)


@pytest.mark.parametrize("media", [{"url": "https://x.test/a.wav", "contentType": "audio/wav"},
                                   {"url": "data:audio/wav;base64,UklGRg=="}, {"url": "data:video/mp4;base64,AAAA"}])
def test_audio_and_video_it_cannot_take_are_a_clear_error(media):
    # The SDK's input message content is input_text | input_image | input_file: no audio part exists there.
    message = Message.model_validate({"role": "user", "content": [{"media": media}]})
    with pytest.raises(UsageError, match=r"cannot take (audio|video)/.* input"):
        to_body(GenerateRequest(messages=[message]), "gpt-5-mini")


def test_config_the_api_has_no_field_for_is_refused_before_any_call():
    server = Server()
    with pytest.raises(UsageError, match="no stop sequences"):
        asyncio.run(generate(model=model_for(server), prompt="x", config={"stopSequences": ["END"]}))
    assert server.requests == []


def test_dotprompts_own_config_keys_are_not_sent():
    message = Message.model_validate({"role": "user", "content": [{"text": "hi"}]})
    body = to_body(GenerateRequest(messages=[message], config={"cacheControl": True, "temperature": 0.2}), "gpt-5-mini")
    assert "cacheControl" not in body and body["temperature"] == 0.2
    check_responses_request(body)


def test_streaming_body_conforms():
    request = GenerateRequest(messages=[Message.model_validate({"role": "user", "content": [{"text": "hi"}]})],
                              output=OutputConfig(format="json", schema={"type": "object"}, constrained=True))
    body = to_body(request, "gpt-5-mini", stream=True)
    assert body["stream"] is True
    check_responses_request(body)


# -- replies -----------------------------------------------------------------------------------------

def test_reasoning_items_become_reasoning_parts_and_go_back_verbatim():
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Adding."}],
                 "encrypted_content": "opaque"}
    server = Server(reply(reasoning, call_item("add", '{"a": 1, "b": 2}')), reply(text_item("3")))
    response = asyncio.run(generate(model=model_for(server), prompt="1+2?", tools=[add]))
    first_reply = response.messages[1]
    assert first_reply.content[0].reasoning == "Adding."
    assert server.body(1)["input"][1] == reasoning  # returned as it came, before its function call
    check_responses_request(server.body(1))


def test_a_reasoning_item_goes_back_before_the_message_it_led_to():
    reasoning = {"type": "reasoning", "id": "rs_2", "summary": []}
    server = Server(reply(reasoning, text_item("Hi.")), reply(text_item("Bye.")))
    first = asyncio.run(generate(model=model_for(server), prompt="hello"))
    follow_up = Message.model_validate({"role": "user", "content": [{"text": "bye"}]})
    asyncio.run(generate(model=model_for(server), messages=[*first.messages, follow_up]))
    sent = server.body(1)["input"]
    assert [i["type"] for i in sent] == ["message", "reasoning", "message", "message"]
    assert sent[1] == reasoning and sent[2] == {"type": "message", "role": "assistant", "content": "Hi."}
    check_responses_request(server.body(1))


def test_incomplete_and_refused_replies_have_their_finish_reasons():
    cut = reply(text_item("Par"), status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    refusal = {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
               "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    model = model_for(Server(cut, reply(refusal)))
    first = asyncio.run(model.generate(GenerateRequest(messages=[Message.model_validate(
        {"role": "user", "content": [{"text": "x"}]})])))
    assert first.finish_reason == "length" and first.message.text == "Par"
    second = asyncio.run(model.generate(GenerateRequest(messages=[Message.model_validate(
        {"role": "user", "content": [{"text": "x"}]})])))
    assert second.finish_reason == "blocked" and second.message.text == "I can't help with that."


def test_a_failed_response_is_a_model_error_with_the_apis_message():
    failed = reply(status="failed", usage=None, error={"code": "server_error", "message": "The model crashed."})
    with pytest.raises(ModelError, match="The model crashed") as caught:
        asyncio.run(generate(model=model_for(Server(failed)), prompt="x"))
    assert caught.value.retryable and caught.value.provider == "openai-responses"


def test_bad_tool_arguments_are_kept_raw_not_turned_into_an_empty_object():
    server = Server(reply(call_item("add", '{"a": 1,')))
    response = asyncio.run(generate(model=model_for(server), prompt="x", tools=[add], return_tool_requests=True))
    part = response.message.content[0]
    assert part.tool_request.input == '{"a": 1,' and "invalidArguments" in part.metadata


def test_http_errors_carry_status_and_message():
    error = httpx.Response(429, json={"error": {"message": "Rate limit reached", "type": "requests"}},
                           headers={"retry-after": "3"})
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model_for(Server(error)), prompt="x"))
    assert caught.value.status == 429 and caught.value.retryable and caught.value.retry_after == 3
    assert "Rate limit reached" in str(caught.value)


# -- streaming ---------------------------------------------------------------------------------------

def text_stream(*deltas: str, final: dict | None = None) -> list[dict]:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
    events = [{"type": "response.created", "response": reply(status="in_progress", usage=None)},
              {"type": "response.output_item.added", "output_index": 0, "item": item}]
    events += [{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "delta": d, "logprobs": []} for d in deltas]
    return [*events, {"type": "response.completed", "response": final or reply(text_item("".join(deltas)))}]


def test_streamed_text_arrives_in_chunks_and_the_completed_event_gives_the_reply():
    server = Server(sse(*text_stream("Hel", "lo", " there")))
    chunks: list[str] = []
    response = asyncio.run(generate(model=model_for(server), prompt="hi", on_chunk=lambda c: chunks.append(c.text)))
    assert chunks == ["Hel", "lo", " there"]
    assert response.text == "Hello there" and response.usage.total_tokens == 52
    assert server.body(0)["stream"] is True
    check_responses_request(server.body(0))


def test_streamed_tool_call_arguments_build_up_and_the_loop_runs_the_tool():
    added = {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "add", "arguments": "",
             "status": "in_progress"}
    events = [{"type": "response.output_item.added", "output_index": 0, "item": added},
              *({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": d}
                for d in ('{"a": 4', ', "b": 5}')),
              {"type": "response.output_item.done", "output_index": 0,
               "item": {**added, "arguments": '{"a": 4, "b": 5}', "status": "completed"}},
              {"type": "response.completed", "response": reply(call_item("add", '{"a": 4, "b": 5}', "call_9"))}]
    server = Server(sse(*events), sse(*text_stream("9")))
    partials: list[str] = []

    def seen(chunk):
        partials.extend(p.tool_request.input for p in chunk.content if p.tool_request is not None)

    response = asyncio.run(generate(model=model_for(server), prompt="4+5?", tools=[add], on_chunk=seen))
    assert partials == ['{"a": 4', '{"a": 4, "b": 5}']
    assert server.body(1)["input"][-1] == {"type": "function_call_output", "call_id": "call_9", "output": "9"}
    assert response.text == "9"


def test_a_server_that_leaves_the_completed_output_empty_gets_the_streamed_items():
    final = reply(usage=USAGE)  # output: []
    response = asyncio.run(generate(model=model_for(Server(sse(*text_stream("a", "b", final=final)))), prompt="x",
                                    on_chunk=lambda c: None))
    assert response.text == "ab"


def test_an_error_event_is_a_model_error_keeping_what_streamed():
    events = [*text_stream("Hel")[:-1], {"type": "error", "code": "server_error", "message": "overloaded", "param": None}]
    with pytest.raises(ModelError, match="overloaded") as caught:
        asyncio.run(generate(model=model_for(Server(sse(*events))), prompt="x", on_chunk=lambda c: None))
    assert caught.value.retryable
    assert caught.value.partial["output"][0]["content"][0]["text"] == "Hel"


def test_a_failed_event_is_a_model_error():
    failed = reply(status="failed", usage=None, error={"code": "rate_limit_exceeded", "message": "Slow down."})
    events = [*text_stream("x")[:-1], {"type": "response.failed", "response": failed}]
    with pytest.raises(ModelError, match="Slow down") as caught:
        asyncio.run(generate(model=model_for(Server(sse(*events))), prompt="x", on_chunk=lambda c: None))
    assert caught.value.retryable


def test_a_stream_without_completed_is_a_retryable_error_keeping_the_text():
    events = text_stream("Hel", "lo")[:-1]
    with pytest.raises(ModelError, match=r"without response\.completed") as caught:
        asyncio.run(generate(model=model_for(Server(sse(*events))), prompt="x", on_chunk=lambda c: None))
    assert caught.value.retryable and caught.value.partial["output"][0]["content"][0]["text"] == "Hello"


def test_registered_by_prefix_with_the_openai_key(monkeypatch):
    from dotprompt.providers.registry import resolve_model

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = resolve_model("openai-responses/gpt-5-nano")
    assert isinstance(model, OpenAIResponsesModel) and model.model_id == "gpt-5-nano"
    assert model.config.base_url == "https://api.openai.com/v1"
