"""Hostile provider replies (issue class 7): every one ends as a ModelError naming the provider and
what was wrong, keeping what had streamed; nothing hangs, nothing runs out of memory.

Anything that could hang or blow up memory runs in a child process with a time and memory limit
(tests/isolation.py). Timing is never asserted tightly: only that a call ends, and long before the
child's limit.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dotprompt import ModelError, generate
from dotprompt._http.client import retry_after
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OPENAI, OpenAIModel
from tests.isolation import assert_finishes
from tests.providers.mock_server import Server

KEY = "sk-hostile-test-key-0000"
MAX_RETRY_AFTER = 600.0  # dotprompt.errors.MAX_RETRY_AFTER (checked below; a literal so each test fails alone before the fix)
MODELS = {"openai": OpenAIModel, "anthropic": AnthropicModel, "googleai": GeminiModel}


def model_for(provider: str, server, **kwargs):
    config = ProviderConfig(provider, "https://api.example.test/v1", KEY)
    return MODELS[provider](f"{provider}/m", config=config, transport=httpx.MockTransport(server), **kwargs)


def ask(provider: str, reply, *, stream: bool = False, **kwargs) -> ModelError:
    """Run one call against `reply` and return the ModelError it must raise."""
    model = model_for(provider, Server(reply), **kwargs)
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x", on_chunk=(lambda c: None) if stream else None))
    assert caught.value.provider == provider
    return caught.value


def sse(*events: str) -> httpx.Response:
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


# -- wrongly shaped 200 replies -------------------------------------------------------------------

OPENAI_TEXT = '{"choices":[{"index":0,"delta":{"content":"Hel"}}]}'
ANTHROPIC_START = ['{"type":"message_start","message":{"usage":{"input_tokens":1}}}',
                   '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
                   '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}']
GEMINI_TEXT = '{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}]}'

SHAPES = [  # (provider, reply, field path the error must name)
    ("openai", {"choices": ["x"]}, "choices[0]"),
    ("openai", {"choices": [{"message": {"content": 5}, "finish_reason": "stop"}]}, "choices[0].message.content"),
    ("openai", {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
                             "finish_reason": "tool_calls"}]}, "choices[0].message.tool_calls[0].function.arguments"),
    ("openai", {"choices": [{"message": {"content": "x"}, "finish_reason": ["stop"]}]}, "choices[0].finish_reason"),
    ("openai", {"choices": [{"message": {"content": "x"}}], "usage": {"total_tokens": "many"}}, "usage.total_tokens"),
    ("openai", {"choices": [{"message": {"tool_calls": ["f"]}}]}, "choices[0].message.tool_calls[0]"),
    ("openai", [1, 2], "the reply is a list"),
    ("anthropic", {"content": 5}, "content"),
    ("anthropic", {"content": ["x"]}, "content[0]"),
    ("anthropic", {"content": [{"type": "text", "text": 5}]}, "content[0].text"),
    ("anthropic", {"content": [{"type": "tool_use", "id": "t", "name": 5, "input": {}}]}, "content[0].name"),
    ("anthropic", {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": [1]}]}, "content[0].input"),
    ("anthropic", {"content": [], "stop_reason": {"x": 1}}, "stop_reason"),
    ("anthropic", {"content": [], "usage": {"input_tokens": "1"}}, "usage.input_tokens"),
    ("anthropic", "just text", "the reply is a string"),
    ("googleai", {"candidates": ["x"]}, "candidates[0]"),
    ("googleai", {"candidates": [{"content": {"parts": [{"text": 5}]}}]}, "candidates[0].content.parts[0].text"),
    ("googleai", {"candidates": [{"content": {"parts": [None]}}]}, "candidates[0].content.parts[0]"),
    ("googleai", {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]},
     "candidates[0].content.parts[0].functionCall.args"),
    ("googleai", {"candidates": [{"content": {"parts": "x"}}]}, "candidates[0].content.parts"),
    ("googleai", {"candidates": [{"finishReason": ["STOP"]}]}, "candidates[0].finishReason"),
    ("googleai", {"candidates": [], "usageMetadata": {"promptTokenCount": "x"}}, "usageMetadata.promptTokenCount"),
    ("googleai", {"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": 1, "data": "x"}}]}}]},
     "candidates[0].content.parts[0].inlineData.mimeType"),
]

STREAM_SHAPES = [  # (provider, events, field path the error must name, partial text expected)
    ("openai", [OPENAI_TEXT, "[1]"], "a stream event is a list", "Hel"),
    ("openai", [OPENAI_TEXT, '{"choices":[{"delta":{"content":5}}]}'], "choices[0].delta.content", "Hel"),
    ("openai", [OPENAI_TEXT, '{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}}]}'],
     "choices[0].delta.tool_calls[0].function.arguments", "Hel"),
    ("openai", [OPENAI_TEXT, '{"choices":"x"}'], "choices", "Hel"),
    ("openai", [OPENAI_TEXT, '"text"'], "a stream event is a string", "Hel"),
    ("anthropic", [*ANTHROPIC_START, "[1]"], "a stream event is a list", "Hel"),
    ("anthropic", [*ANTHROPIC_START, '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}'],
     "delta.text", "Hel"),
    ("anthropic", [*ANTHROPIC_START, '{"type":["x"]}'], "type", "Hel"),
    ("anthropic", [*ANTHROPIC_START, '{"type":"content_block_start","index":"1","content_block":{"type":"text"}}'],
     "index", "Hel"),
    ("anthropic", [*ANTHROPIC_START, '{"type":"message_delta","delta":{"stop_reason":["end_turn"]}}'],
     "delta.stop_reason", "Hel"),
    ("googleai", [GEMINI_TEXT, "[1]"], "a stream event is a list", "Hel"),
    ("googleai", [GEMINI_TEXT, '{"candidates":[{"content":{"parts":[{"text":5}]}}]}'],
     "candidates[0].content.parts[0].text", "Hel"),
    ("googleai", [GEMINI_TEXT, '{"candidates":[{"content":{"parts":[7]}}]}'], "candidates[0].content.parts[0]", "Hel"),
]


def partial_text(provider: str, partial) -> str:
    if provider == "openai":
        return partial["choices"][0]["message"]["content"]
    if provider == "anthropic":
        return "".join(b.get("text", "") for b in partial["content"])
    return "".join(p.get("text", "") for p in partial["candidates"][0]["content"]["parts"])


@pytest.mark.parametrize(("provider", "reply", "path"), SHAPES)
def test_a_wrongly_shaped_reply_is_a_model_error_naming_the_field(provider, reply, path):
    error = ask(provider, httpx.Response(200, json=reply))
    assert "unexpected reply shape" in str(error) and path in str(error), str(error)
    assert error.__cause__ is None or isinstance(error.__cause__, ModelError)  # not a library exception underneath


@pytest.mark.parametrize(("provider", "events", "path", "kept"), STREAM_SHAPES)
def test_a_wrongly_shaped_stream_event_is_a_model_error_keeping_the_partial(provider, events, path, kept):
    error = ask(provider, sse(*events), stream=True)
    assert "unexpected reply shape" in str(error) and path in str(error), str(error)
    assert partial_text(provider, error.partial) == kept


# -- mid-stream error events ----------------------------------------------------------------------

def test_openai_error_event_mid_stream_keeps_the_providers_message_and_the_partial():
    error = ask("openai", sse(OPENAI_TEXT, '{"error":{"message":"The server had an error","type":"server_error"}}'),
                stream=True)
    assert "The server had an error" in str(error) and "finish reason" not in str(error)
    assert error.retryable and partial_text("openai", error.partial) == "Hel"


def test_a_plain_text_error_event_is_reported_with_its_text():
    body = f"data: {OPENAI_TEXT}\n\nevent: error\ndata: upstream model crashed\n\n".encode()
    error = ask("openai", httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}), stream=True)
    assert "upstream model crashed" in str(error) and "malformed" not in str(error)
    assert partial_text("openai", error.partial) == "Hel"


def test_anthropic_error_event_without_a_type_field_still_ends_the_stream():
    body = "".join(f"event: x\ndata: {e}\n\n" for e in ANTHROPIC_START)
    body += 'event: error\ndata: {"error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    error = ask("anthropic", httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}),
                stream=True)
    assert "Overloaded" in str(error) and "message_stop" not in str(error) and error.retryable
    assert partial_text("anthropic", error.partial) == "Hel"


def test_gemini_error_object_mid_stream_carries_its_status():
    error = ask("googleai", sse(GEMINI_TEXT, '{"error":{"code":503,"message":"The model is overloaded.",'
                                             '"status":"UNAVAILABLE"}}'), stream=True)
    assert "The model is overloaded." in str(error) and error.status == 503 and error.retryable
    assert partial_text("googleai", error.partial) == "Hel"


# -- line separators inside tokens ----------------------------------------------------------------

ODD = "a\u2028b\u2029c\u0085d\x1ce\x1df\x1eg\x0bh\x0ci"  # all of these are line breaks to str.splitlines()


@pytest.mark.parametrize("provider", ["openai", "anthropic", "googleai"])
def test_unicode_line_separators_inside_a_token_survive_the_stream(provider):
    token = json.dumps(ODD, ensure_ascii=False)
    events = {
        "openai": [f'{{"choices":[{{"delta":{{"content":{token}}}}}]}}',
                   '{"choices":[{"delta":{},"finish_reason":"stop"}]}'],
        "anthropic": [*ANTHROPIC_START[:2],
                      f'{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{token}}}}}',
                      '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}', '{"type":"message_stop"}'],
        "googleai": [f'{{"candidates":[{{"content":{{"parts":[{{"text":{token}}}]}},"finishReason":"STOP"}}]}}'],
    }[provider]
    model = model_for(provider, Server(sse(*events)))
    response = asyncio.run(generate(model=model, prompt="x", on_chunk=lambda c: None))
    assert response.text == ODD


def test_crlf_and_lone_cr_line_endings_even_when_cut_between_chunks():
    async def body():
        for piece in (b'data: {"choices":[{"delta":{"content":"A"}}]}\r', b'\n\r', b'\ndata: {"choices":[{"delta":',
                      b'{"content":"B"}}]}\r\r', b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\r\r'):
            yield piece

    model = model_for("openai", Server(httpx.Response(200, content=body(), headers={"content-type": "text/event-stream"})))
    response = asyncio.run(generate(model=model, prompt="x", on_chunk=lambda c: None))
    assert response.text == "AB"


# -- Retry-After ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "nan"}, None), ({"retry-after": "NaN"}, None), ({"retry-after-ms": "nan"}, None),
    ({"retry-after": "inf"}, MAX_RETRY_AFTER), ({"retry-after": "1e308"}, MAX_RETRY_AFTER),
    ({"retry-after": "-5"}, None), ({"retry-after-ms": "-5000"}, 0.0), ({"retry-after-ms": "inf"}, MAX_RETRY_AFTER),
    ({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}, MAX_RETRY_AFTER), ({"retry-after": "soon"}, None),
    ({"retry-after": "7"}, 7.0)])
def test_retry_after_is_a_finite_bounded_wait(headers, expected):
    # Retry-After of 0 or less is no hint (as before): the retry middleware's own backoff applies.
    error = ask("openai", httpx.Response(429, json={"error": {"message": "slow down"}}, headers=headers))
    assert error.retry_after == expected and error.retryable


def test_a_huge_google_retry_delay_is_clamped():
    body = {"error": {"code": 429, "message": "quota", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "99999999999s"}]}}
    assert ask("googleai", httpx.Response(429, json=body)).retry_after == MAX_RETRY_AFTER


def test_retry_after_parsing_itself_never_returns_nan():
    assert retry_after({"retry-after": "nan"}) is None and retry_after({"retry-after-ms": "NaN"}) is None


def test_the_retry_middleware_never_sleeps_nan():
    from dotprompt.generation.policies import retry

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    model = model_for("openai", Server(httpx.Response(429, json={"error": {"message": "x"}}, headers={"retry-after": "nan"}),
                                       httpx.Response(200, json={"choices": [{"message": {"content": "ok"},
                                                                              "finish_reason": "stop"}]})))
    response = asyncio.run(generate(model=model, prompt="x", use=[retry(max_retries=1, sleep=sleep)]))
    assert response.text == "ok" and len(waits) == 1 and waits[0] == waits[0]  # NaN != NaN


# -- limits: documented defaults ------------------------------------------------------------------

def test_the_limits_have_generous_defaults_and_are_configurable():
    from dotprompt._http.client import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_BYTES
    from dotprompt.errors import MAX_RETRY_AFTER as MAX

    assert MAX == MAX_RETRY_AFTER
    model = model_for("openai", Server())
    assert model.http.deadline == DEFAULT_DEADLINE >= 600 and model.http.max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES
    tuned = model_for("openai", Server(), deadline=5, max_response_bytes=1000)
    assert (tuned.http.deadline, tuned.http.max_response_bytes) == (5, 1000)
    slow = OpenAIModel("openai/m", config=ProviderConfig("openai", "http://x", KEY, timeout=7200.0))
    assert slow.http.deadline == 7200.0  # never shorter than one read timeout
    from dotprompt.providers.config import provider_config
    config = provider_config(OPENAI, env={"OPENAI_API_KEY": KEY}, settings={"deadline": 30, "max_response_bytes": 99})
    assert (config.deadline, config.max_response_bytes) == (30, 99)


# -- hangs and floods: child processes with limits ------------------------------------------------

PRELUDE = """
import asyncio, json, sys, time
import httpx
from dotprompt import ModelError, generate
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai import OpenAIModel
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.gemini import GeminiModel
MODELS = {"openai": OpenAIModel, "anthropic": AnthropicModel, "googleai": GeminiModel}

def model(provider, handler=None, base="https://api.example.test/v1", **kw):
    transport = httpx.MockTransport(handler) if handler else None
    return MODELS[provider](provider + "/m", config=ProviderConfig(provider, base, "k", timeout=5.0),
                            transport=transport, **kw)

def outcome(m, stream=True):
    started = time.monotonic()
    try:
        asyncio.run(generate(model=m, prompt="x", on_chunk=(lambda c: None) if stream else None))
        print(json.dumps({"error": None}))
    except ModelError as exc:
        print(json.dumps({"error": str(exc), "partial": exc.partial, "seconds": time.monotonic() - started}))
"""


def run_child(body: str, *, timeout: float = 40, memory_mb: int = 1024) -> list[dict]:
    """Run `body` after PRELUDE in a limited child; every `outcome(...)` it printed, in order."""
    from tests.isolation import ROOT

    done = assert_finishes(PRELUDE + body, timeout=timeout, memory_mb=memory_mb, cwd=ROOT)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_a_stream_of_keep_alives_from_a_real_server_ends_at_the_deadline():
    # A loopback server that accepts the request and then sends an SSE comment every 0.2 s, forever.
    result = run_child("""
import socket, threading
listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen()
def serve():
    conn, _ = listener.accept(); conn.recv(65536)
    conn.sendall(b"HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\ntransfer-encoding: chunked\\r\\n\\r\\n")
    while True:
        conn.sendall(b"e\\r\\n: keep-alive\\n\\n\\r\\n"); time.sleep(0.2)
threading.Thread(target=serve, daemon=True).start()
outcome(model("openai", base=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", deadline=2))
""")[-1]
    assert "deadline of 2 s" in result["error"] and result["seconds"] < 30


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic", "googleai"])
def test_a_token_every_quarter_second_forever_ends_at_the_deadline_keeping_the_tokens(provider):
    event = {"openai": '{"choices":[{"delta":{"content":"t"}}]}',
             "anthropic": '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"t"}}',
             "googleai": '{"candidates":[{"content":{"parts":[{"text":"t"}]}}]}'}[provider]
    result = run_child(f"""
async def drip():
    while True:
        yield b"data: " + {event!r}.encode() + b"\\n\\n"
        await asyncio.sleep(0.25)
handler = lambda request: httpx.Response(200, content=drip(), headers={{"content-type": "text/event-stream"}})
outcome(model({provider!r}, handler, deadline=1.5))
""")[-1]
    assert "deadline" in result["error"] and result["seconds"] < 30
    assert "t" in json.dumps(result["partial"])  # the tokens that arrived are kept


@pytest.mark.slow
def test_a_reply_body_trickling_forever_ends_at_the_deadline():
    result = run_child("""
async def trickle():
    yield b'{"choices": ['
    while True:
        yield b" "
        await asyncio.sleep(0.1)
outcome(model("openai", lambda request: httpx.Response(200, content=trickle()), deadline=1.5), stream=False)
""")[-1]
    assert "deadline" in result["error"] and result["seconds"] < 30


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["events", "one-line"])
def test_a_300_mb_stream_is_a_model_error_not_a_memory_error(shape):
    # The default cap applies; the child may use far less memory than the stream's size.
    piece = ('b"data: " + json.dumps({"choices": [{"delta": {"content": "x" * 65000}}]}).encode() + b"\\n\\n"'
             if shape == "events" else 'b"x" * 65536')
    result = run_child(f"""
async def flood():
    piece = {piece}
    for _ in range(300 * 1024 * 1024 // len(piece)):
        yield piece
handler = lambda request: httpx.Response(200, content=flood(), headers={{"content-type": "text/event-stream"}})
outcome(model("openai", handler))
""", memory_mb=900, timeout=90)[-1]
    assert "larger than max_response_bytes=67108864" in result["error"]
    if shape == "events":
        assert len(result["partial"]["choices"][0]["message"]["content"]) > 10_000_000  # what arrived is kept


@pytest.mark.slow
def test_a_300_mb_json_reply_and_a_300_mb_error_body_end_cleanly():
    result = run_child("""
async def flood(opening):
    yield opening
    for _ in range(300 * 16):
        yield b"x" * 65536
outcome(model("openai", lambda request: httpx.Response(200, content=flood(b'{"choices":"'))), stream=False)
outcome(model("openai", lambda request: httpx.Response(500, content=flood(b'{"error":"'))), stream=False)
""", memory_mb=900, timeout=90)
    assert "larger than max_response_bytes" in result[0]["error"]
    assert "HTTP 500" in result[1]["error"]  # only the start of the error body was read
