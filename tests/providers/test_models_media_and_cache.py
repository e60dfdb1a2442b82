"""Media beyond images (PDF, audio, video, text documents) on each provider, the clear error where a provider
cannot take a type, the invoice example from a PDF, and Anthropic prompt caching (markers and usage)."""

from __future__ import annotations

import asyncio
import base64
import runpy
import subprocess
import sys

import pytest

from dotprompt import UsageError, generate
from tests.isolation import ROOT
from tests.providers.mock_server import Server, add, anthropic_model, gemini_model, openai_model
from tests.providers.vendor_types import check_anthropic_request, check_gemini_request, check_openai_request

PDF_BYTES = (ROOT / "examples" / "inputs" / "invoice.pdf").read_bytes()
PDF = "data:application/pdf;base64," + base64.b64encode(PDF_BYTES).decode()
WAV = "data:audio/wav;base64,UklGRiQAAABXQVZF"




def media(url: str, content_type: str | None = None) -> list[dict]:
    item = {"url": url, **({"contentType": content_type} if content_type else {})}
    return [{"text": "Read this."}, {"media": item}]


OPENAI_REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "usage": {
    "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}


def sent_part(make, reply, url: str, content_type: str | None = None) -> dict:
    server = Server(reply)
    asyncio.run(generate(model=make(server), prompt=media(url, content_type)))
    return server.body(0)


# -- OpenAI ----------------------------------------------------------------------------------------

def test_openai_pdf_is_a_file_part_and_audio_an_input_audio_part():
    body = sent_part(openai_model, OPENAI_REPLY, PDF)
    assert body["messages"][0]["content"][1] == {"type": "file", "file": {"filename": "document.pdf", "file_data": PDF}}
    body = sent_part(openai_model, OPENAI_REPLY, WAV)
    assert body["messages"][0]["content"][1] == {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF",
                                                                                       "format": "wav"}}
    body = sent_part(openai_model, OPENAI_REPLY, "data:;base64,SUQz", "audio/mpeg")  # the part's content type wins
    assert body["messages"][0]["content"][1]["input_audio"]["format"] == "mp3"


@pytest.mark.parametrize(("url", "content_type", "says"), [
    ("https://example.test/talk.wav", None, "'audio/x-wav'"),
    ("https://example.test/invoice.pdf", None, "pass the file inline as a data: URL"),
    ("data:video/mp4;base64,AAAA", None, "'video/mp4'"),
    ("data:audio/ogg;base64,AAAA", None, "'audio/ogg'"),
])
def test_openai_refuses_media_it_cannot_take_before_any_call(url, content_type, says):
    server = Server()
    with pytest.raises(UsageError) as caught:
        asyncio.run(generate(model=openai_model(server), prompt=media(url, content_type)))
    assert says in str(caught.value) and "OpenAI Chat Completions cannot take media" in str(caught.value)
    assert "it accepts images" in str(caught.value)
    assert not server.requests


# -- Anthropic -------------------------------------------------------------------------------------

def test_anthropic_pdf_and_text_are_document_blocks():
    body = sent_part(anthropic_model, "anthropic_text.json", PDF)
    assert body["messages"][0]["content"][1] == {"type": "document", "source": {
        "type": "base64", "media_type": "application/pdf", "data": base64.b64encode(PDF_BYTES).decode()}}
    body = sent_part(anthropic_model, "anthropic_text.json", "https://example.test/files/invoice.pdf")
    assert body["messages"][0]["content"][1] == {"type": "document", "source": {
        "type": "url", "url": "https://example.test/files/invoice.pdf"}}
    body = sent_part(anthropic_model, "anthropic_text.json", "data:text/plain;charset=utf-8,Total%3A%2042.50%20%E2%82%AC")
    assert body["messages"][0]["content"][1] == {"type": "document", "source": {
        "type": "text", "media_type": "text/plain", "data": "Total: 42.50 €"}}


@pytest.mark.parametrize(("url", "says"), [(WAV, "'audio/wav'"), ("data:image/bmp;base64,Qk0=", "'image/bmp'"),
                                           ("https://example.test/clip.mp4", "'video/mp4'")])
def test_anthropic_refuses_media_it_cannot_take_before_any_call(url, says):
    server = Server()
    with pytest.raises(UsageError, match="Anthropic cannot take media") as caught:
        asyncio.run(generate(model=anthropic_model(server), prompt=media(url)))
    assert says in str(caught.value) and not server.requests


# -- Gemini ----------------------------------------------------------------------------------------

def test_gemini_takes_pdf_audio_and_video_inline_or_by_uri():
    body = sent_part(gemini_model, "gemini_text.json", PDF)
    assert body["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "application/pdf",
                                                              "data": base64.b64encode(PDF_BYTES).decode()}}
    body = sent_part(gemini_model, "gemini_text.json", WAV)
    assert body["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "audio/wav", "data": "UklGRiQAAABXQVZF"}}
    body = sent_part(gemini_model, "gemini_text.json", "https://example.test/clip.mp4")
    assert body["contents"][0]["parts"][1] == {"fileData": {"fileUri": "https://example.test/clip.mp4",
                                                            "mimeType": "video/mp4"}}


def test_gemini_refuses_a_type_it_cannot_take():
    server = Server()
    with pytest.raises(UsageError, match="Gemini cannot take media of type 'application/zip'"):
        asyncio.run(generate(model=gemini_model(server), prompt=media("data:application/zip;base64,UEsDBA==")))
    assert not server.requests


# -- the invoice example, from a PDF ---------------------------------------------------------------

def test_the_invoice_example_builds_a_valid_request_per_provider_from_the_pdf():
    example = runpy.run_path(str(ROOT / "examples" / "invoice_from_pdf.py"))
    bodies = example["requests"](example["pdf_url"](ROOT / "examples" / "inputs" / "invoice.pdf"))
    encoded = base64.b64encode(PDF_BYTES).decode()
    check_openai_request(bodies["openai"])
    check_anthropic_request(bodies["anthropic"])
    check_gemini_request(bodies["googleai"])
    assert bodies["openai"]["messages"][1]["content"][1]["file"]["file_data"].endswith(encoded)
    assert bodies["openai"]["response_format"]["json_schema"]["strict"] is True
    assert bodies["anthropic"]["messages"][0]["content"][1]["source"]["data"] == encoded
    assert bodies["anthropic"]["output_config"]["format"]["type"] == "json_schema"
    assert bodies["googleai"]["contents"][0]["parts"][1]["inlineData"]["data"] == encoded
    assert "invoice_number" in bodies["googleai"]["generationConfig"]["responseSchema"]["properties"]


@pytest.mark.slow
def test_the_invoice_example_runs_as_a_script():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "invoice_from_pdf.py")], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert '"type": "file"' in done.stdout and '"type": "document"' in done.stdout and '"inlineData"' in done.stdout


# -- Anthropic prompt caching ----------------------------------------------------------------------

def cached_body(config: dict, *replies) -> tuple[Server, dict]:
    server = Server(*(replies or ("anthropic_cached.json",)))
    response = asyncio.run(generate(model=anthropic_model(server), system="Long policy text.", prompt="hi", tools=[add],
                                    config=config))
    return server, response


def test_cache_control_true_marks_the_tools_and_the_system_prompt():
    server, response = cached_body({"cacheControl": True})
    body = server.body(0)
    assert "cacheControl" not in body
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Long policy text.", "cache_control": {"type": "ephemeral"}}]
    assert not any("cache_control" in block for m in body["messages"] for block in m["content"])
    usage = response.usage
    assert (usage.input_tokens, usage.cached_content_tokens, usage.cache_creation_tokens) == (1212, 1200, 0)


def test_cache_control_ttl_and_breakpoints_and_one_message_marker_per_turn():
    call = {"id": "m1", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 5, "cache_creation_input_tokens": 900},
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}}]}
    server, response = cached_body({"cacheControl": {"ttl": "1h", "breakpoints": ["system", "messages"]}},
                                   call, "anthropic_cached.json")
    marker = {"type": "ephemeral", "ttl": "1h"}
    first, second = server.body(0), server.body(1)
    assert "cache_control" not in first["tools"][-1] and first["system"][-1]["cache_control"] == marker
    assert first["messages"][-1]["content"][-1]["cache_control"] == marker
    markers = [b for m in second["messages"] for b in m["content"] if "cache_control" in b]
    assert markers == [second["messages"][-1]["content"][-1]] and markers[0]["type"] == "tool_result"
    # The second turn read what the first wrote (a run's usage may be the last turn's or the sum: both read 1200).
    assert response.usage.cached_content_tokens == 1200


@pytest.mark.parametrize(("setting", "says"), [
    ("2h", 'ttl must be "5m" or "1h"'), ({"breakpoints": ["tools", "history"]}, "unknown breakpoints ['history']"),
    (5, 'expected true, "5m", "1h" or {ttl, breakpoints}'), ({"breakpoints": "system"}, "breakpoints must be a list")])
def test_a_bad_cache_control_setting_is_a_usage_error_before_any_call(setting, says):
    server = Server()
    with pytest.raises(UsageError, match="config cacheControl") as caught:
        asyncio.run(generate(model=anthropic_model(server), prompt="hi", config={"cacheControl": setting}))
    assert says in str(caught.value) and not server.requests


def test_the_anthropic_config_keys_are_dropped_by_the_other_providers():
    config = {"cacheControl": True, "structuredOutput": "tool", "temperature": 0}
    server = Server(OPENAI_REPLY)
    asyncio.run(generate(model=openai_model(server), prompt="hi", config=config))
    assert server.body(0)["temperature"] == 0 and not {"cacheControl", "structuredOutput"} & server.body(0).keys()
    server = Server("gemini_text.json")
    asyncio.run(generate(model=gemini_model(server), prompt="hi", config=config))
    assert server.body(0)["generationConfig"] == {"temperature": 0}


def test_a_text_document_that_is_not_utf8_is_a_usage_error():
    server = Server()
    with pytest.raises(UsageError, match="text/plain media part is not UTF-8"):
        asyncio.run(generate(model=anthropic_model(server), prompt=media("data:text/plain;base64,//79")))
    assert not server.requests
