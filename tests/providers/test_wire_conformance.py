"""Every request body our providers build, and every reply fixture, checked against the vendors' own SDK types.

Requests are built for each provider and mode (text, tools, tool results, media, structured output,
cache markers, streaming) and validated with vendor_types.py; the checker itself is shown to refuse
wrong bodies, including the role "usr" that a bare `validate_python` lets through.
"""

from __future__ import annotations

import base64
import json

import pydantic
import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from dotprompt import Message
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OpenAIModel
from dotprompt.types import GenerateRequest, OutputConfig
from tests.conftest import ROOT
from tests.providers.mock_server import FIXTURES, add, merge_history
from tests.providers.vendor_types import (
    VendorTypeError,
    check_anthropic_error,
    check_anthropic_event,
    check_anthropic_request,
    check_anthropic_response,
    check_gemini_error,
    check_gemini_event,
    check_gemini_request,
    check_gemini_response,
    check_openai_error,
    check_openai_event,
    check_openai_request,
    check_openai_response,
    sse_data,
)

PDF = "data:application/pdf;base64," + base64.b64encode(
    (ROOT / "examples" / "inputs" / "invoice.pdf").read_bytes()).decode()
PNG = "data:image/png;base64,iVBORw0KGgo="
WAV = "data:audio/wav;base64,UklGRiQAAABXQVZF"
MP3 = "data:audio/mpeg;base64,SUQzBAAAAAAA"
TEXT_DOC = "data:text/plain;base64," + base64.b64encode(b"Total: 42.50 EUR").decode()
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string", "maxLength": 5}},
          "required": ["city"]}
FREE_FORM = {"type": "object", "properties": {"tags": {"type": "object"}}, "required": ["tags"]}
ARRAY = {"type": "array", "items": {"type": "string"}}

OPENAI = OpenAIModel("openai/gpt-test", config=ProviderConfig("openai", "https://api.example.test/v1", "k"))
ANTHROPIC = AnthropicModel("anthropic/claude-test", config=ProviderConfig("anthropic", "https://api.example.test/v1", "k"))
GEMINI = GeminiModel("googleai/gemini-2.5-flash", config=ProviderConfig("googleai", "https://api.example.test/v1beta", "k"))
GEMINI3 = GeminiModel("googleai/gemini-3-pro", config=ProviderConfig("googleai", "https://api.example.test/v1beta", "k"))


def request(*messages: dict, **fields) -> GenerateRequest:
    return GenerateRequest(messages=[Message.model_validate(m) for m in messages], **fields)


def user(*parts: dict) -> dict:
    return {"role": "user", "content": list(parts)}


SYSTEM = {"role": "system", "content": [{"text": "Be exact."}]}
TOOLS = {"tools": [add.definition]}


def structured(schema: dict, constrained: bool = True) -> dict:
    return {"output": OutputConfig(format="json", schema=schema, constrained=constrained or None)}


# Modes every provider builds; media and config per provider below.
COMMON = {
    "text": request(SYSTEM, user({"text": "hi"})),
    "tools-auto": request(user({"text": "2+3?"}), **TOOLS, tool_choice="auto"),
    "tools-required": request(user({"text": "2+3?"}), **TOOLS, tool_choice="required"),
    "tools-none": request(user({"text": "2+3?"}), **TOOLS, tool_choice="none"),
    "tool-results": GenerateRequest(messages=merge_history(), tools=[add.definition]),
    "tool-error-result": request(
        user({"text": "2+3?"}), {"role": "model", "content": [{"toolRequest": {"name": "add", "ref": "c1", "input": {}}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "ref": "c1", "output": "boom"},
                                      "metadata": {"toolError": True}}]}, **TOOLS),
    "structured-strict": request(user({"text": "where?"}), **structured(SCHEMA)),
    "structured-fallback": request(user({"text": "where?"}), **structured(FREE_FORM)),
    "structured-array": request(user({"text": "list"}), **structured(ARRAY)),
    "structured-instructions": request(user({"text": "where?"}), **structured(SCHEMA, constrained=False)),
    "structured-with-tools": request(user({"text": "where?"}), **TOOLS, **structured(SCHEMA)),
    "image": request(user({"text": "what?"}, {"media": {"url": PNG}})),
    "image-url": request(user({"media": {"url": "https://example.test/cat.png"}})),
    "pdf": request(user({"text": "extract"}, {"media": {"url": PDF}})),
}
OPENAI_ONLY = {
    "audio-wav": request(user({"text": "transcribe"}, {"media": {"url": WAV}})),
    "audio-mp3": request(user({"media": {"url": MP3}})),
    "config": request(user({"text": "hi"}), config={"temperature": 0, "maxOutputTokens": 9, "topP": 1, "seed": 3,
                                                     "stopSequences": ["x"], "presencePenalty": 0.1}),
}
ANTHROPIC_ONLY = {
    "text-document": request(user({"media": {"url": TEXT_DOC}})),
    "pdf-url": request(user({"media": {"url": "https://example.test/invoice.pdf"}})),
    "structured-tool": request(user({"text": "where?"}), **structured(SCHEMA), config={"structuredOutput": "tool"}),
    "structured-tool-thinking": request(user({"text": "where?"}), **structured(FREE_FORM),
                                        config={"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    "cache-default": request(SYSTEM, user({"text": "hi"}), **TOOLS, config={"cacheControl": True}),
    "cache-all-1h": request(SYSTEM, user({"text": "hi"}), **TOOLS,
                            config={"cacheControl": {"ttl": "1h", "breakpoints": ["tools", "system", "messages"]}}),
    "config": request(user({"text": "hi"}), config={"maxOutputTokens": 9, "stopSequences": ["x"],
                                                     "metadata": {"user_id": "u"}}),
    "signed-thinking-echo": request(user({"text": "q"}), {"role": "model", "content": [
        {"reasoning": "hmm", "metadata": {"signature": "sig"}}, {"text": "a"}]}, user({"text": "more"})),
}
GEMINI_ONLY = {
    "audio": request(user({"media": {"url": WAV}})),
    "video-url": request(user({"media": {"url": "https://example.test/clip.mp4"}})),
    "text-document": request(user({"media": {"url": TEXT_DOC}})),
    "config": request(user({"text": "hi"}), config={"temperature": 0, "maxOutputTokens": 9, "topK": 3,
                                                     "thinkingConfig": {"thinkingBudget": 0},
                                                     "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH",
                                                                         "threshold": "BLOCK_NONE"}]}),
    "signed-call-echo": request(user({"text": "q"}), {"role": "model", "content": [
        {"toolRequest": {"name": "add", "ref": "gemini-call-0", "input": {"a": 1}}, "metadata": {"thoughtSignature": "c2ln"}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "ref": "gemini-call-0", "output": 2}}]}, **TOOLS),
}


def cases(extra: dict) -> list:
    return [pytest.param(r, stream, id=f"{name}{'-stream' if stream else ''}")
            for name, r in {**COMMON, **extra}.items() for stream in (False, True)]


@pytest.mark.parametrize(("req", "stream"), cases(OPENAI_ONLY))
def test_openai_request_bodies_conform_to_the_sdk_types(req, stream):
    check_openai_request(OPENAI.wire_request(req, stream=stream))


@pytest.mark.parametrize(("req", "stream"), cases(ANTHROPIC_ONLY))
def test_anthropic_request_bodies_conform_to_the_sdk_types(req, stream):
    check_anthropic_request(ANTHROPIC.wire_request(req, stream=stream))


@pytest.mark.parametrize(("req", "stream"), [*cases(GEMINI_ONLY)])
def test_gemini_request_bodies_conform_to_the_sdk_types(req, stream):
    check_gemini_request(GEMINI.wire_request(req, stream=stream))
    check_gemini_request(GEMINI3.wire_request(req, stream=stream))


def test_the_modes_build_what_they_claim():
    """The conformance cases above are the modes they are named for (a case that silently built plain text
    would conform and prove nothing)."""
    strict = OPENAI.wire_request(COMMON["structured-strict"])["response_format"]["json_schema"]
    assert strict["strict"] is True and strict["schema"]["required"] == ["city", "zip"]
    assert OPENAI.wire_request(COMMON["structured-fallback"])["response_format"]["json_schema"]["strict"] is False
    assert [p["type"] for p in OPENAI.wire_request(COMMON["pdf"])["messages"][0]["content"]] == ["text", "file"]
    assert OPENAI.wire_request(OPENAI_ONLY["audio-mp3"])["messages"][0]["content"][0]["input_audio"]["format"] == "mp3"
    assert "output_config" in ANTHROPIC.wire_request(COMMON["structured-strict"])
    tool_body = ANTHROPIC.wire_request(ANTHROPIC_ONLY["structured-tool"])
    assert tool_body["tool_choice"] == {"type": "tool", "name": "dotprompt_output"}
    assert ANTHROPIC.wire_request(COMMON["structured-fallback"])["tool_choice"] == {"type": "tool", "name": "dotprompt_output"}
    assert ANTHROPIC.wire_request(ANTHROPIC_ONLY["structured-tool-thinking"])["tool_choice"] == {"type": "auto"}
    cached = ANTHROPIC.wire_request(ANTHROPIC_ONLY["cache-all-1h"])
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert cached["tools"][-1]["cache_control"] == cached["system"][-1]["cache_control"] == marker
    assert cached["messages"][-1]["content"][-1]["cache_control"] == marker
    assert ANTHROPIC.wire_request(COMMON["pdf"])["messages"][0]["content"][1]["type"] == "document"
    assert GEMINI.wire_request(COMMON["pdf"])["contents"][0]["parts"][1]["inlineData"]["mimeType"] == "application/pdf"
    both = GEMINI3.wire_request(COMMON["structured-with-tools"])
    assert "tools" in both and both["generationConfig"]["responseMimeType"] == "application/json"


# -- the checker can fail --------------------------------------------------------------------------

def test_a_bare_validate_python_lets_a_wrong_role_through_and_the_checker_does_not():
    body = {"model": "m", "messages": [{"role": "usr", "content": "hi"}]}
    pydantic.TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(body)  # lazy: nothing checked yet
    with pytest.raises(pydantic.ValidationError, match="usr"):
        check_openai_request(body)


@pytest.mark.parametrize("body", [
    pytest.param({"model": "m", "messages": [{"role": "user", "content": "hi"}], "respose_format": {}}, id="misspelt-field"),
    pytest.param({"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "url": "x"}]}]}, id="bad-part"),
    pytest.param({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "AA", "format": "ogg"}}]}]}, id="audio-format"),
    pytest.param({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                  "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}, id="schema-without-name"),
    pytest.param({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True, "stream_options": []},
                 id="stream-options-list"),
])
def test_the_openai_checker_rejects_wrong_bodies(body):
    with pytest.raises(pydantic.ValidationError):
        check_openai_request(body)


@pytest.mark.parametrize("body", [
    pytest.param({"model": "m", "max_tokens": 1, "messages": [{"role": "usr", "content": "hi"}]}, id="role"),
    pytest.param({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, id="no-max-tokens"),
    pytest.param({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "audio/wav", "data": "AA"}}]}]}, id="audio-document"),
    pytest.param({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}],
                  "output_format": {"type": "json_schema", "schema": {}}}, id="beta-field-name"),
    pytest.param({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}],
                  "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]},
                 id="cache-ttl"),
])
def test_the_anthropic_checker_rejects_wrong_bodies(body):
    with pytest.raises(pydantic.ValidationError):
        check_anthropic_request(body)


@pytest.mark.parametrize("body", [
    pytest.param({"contents": [{"role": "user", "parts": [{"txt": "hi"}]}]}, id="part-key"),
    pytest.param({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                  "generationConfig": {"responseSchema": {"type": "OBJEKT"}}}, id="schema-type"),
    pytest.param({"contents": [{"role": "usr", "parts": [{"text": "hi"}]}]}, id="role"),
    pytest.param({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                  "safetySettings": [{"category": "HARM_CATEGORY_HATE", "threshold": "BLOCK_NONE"}]}, id="harm-category"),
    pytest.param({"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "x/y", "data": "not base64!"}}]}]},
                 id="inline-data-not-base64"),
    pytest.param({"contents": [], "generationConfig": {"maxTokens": 5}}, id="openai-name"),
])
def test_the_gemini_checker_rejects_wrong_bodies(body):
    with pytest.raises((pydantic.ValidationError, VendorTypeError)):
        check_gemini_request(body)


# -- replies ---------------------------------------------------------------------------------------

TORN = {"anthropic_stream_malformed.sse", "gemini_stream_malformed.sse"}  # torn JSON on purpose: no type can parse it
RESPONSE = {"openai": check_openai_response, "anthropic": check_anthropic_response, "gemini": check_gemini_response}
ERROR = {"openai": check_openai_error, "anthropic": check_anthropic_error, "gemini": check_gemini_error}
EVENT = {"openai": check_openai_event, "anthropic": check_anthropic_event, "gemini": check_gemini_event}


REPLIES = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".sse") and p.name not in TORN)


@pytest.mark.parametrize("name", REPLIES)
def test_every_reply_fixture_parses_with_the_vendor_models(name):
    provider = name.split("_")[0]
    text = (FIXTURES / name).read_text()
    if name.endswith(".sse"):
        events = sse_data(text)
        assert events, name
        for event in events:
            EVENT[provider](event)
    else:
        (ERROR if "_error_" in name else RESPONSE)[provider](json.loads(text))


def test_the_torn_fixtures_are_really_torn():
    for name in TORN:
        with pytest.raises(ValueError):
            sse_data((FIXTURES / name).read_text())


def test_the_reply_checkers_reject_wrong_replies():
    with pytest.raises(pydantic.ValidationError):
        check_openai_response({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": 5}, "finish_reason": "stop"}]})
    with pytest.raises(pydantic.ValidationError):
        check_anthropic_response({"id": "x", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                                  "content": [{"type": "text"}], "usage": {"input_tokens": 1, "output_tokens": 1}})
    with pytest.raises(pydantic.ValidationError):
        check_anthropic_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "txt": "a"}})
    with pytest.raises(pydantic.ValidationError):
        check_gemini_response({"candidates": [{"content": {"parts": [{"text": 5}]}}]})
    with pytest.raises(VendorTypeError):
        check_gemini_response({"candidates": [{"finishReason": "DONE"}]})
