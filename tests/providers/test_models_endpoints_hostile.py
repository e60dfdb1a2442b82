"""Hostile replies to the new endpoints (Responses API, Azure, Vertex): each ends as a ModelError naming
the provider and what was wrong, keeping what had streamed; nothing hangs or runs out of memory.

Floods, drips and torn streams run in a child process with time and memory limits (tests/isolation.py).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dotprompt import ModelError, generate
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai_responses import OpenAIResponsesModel
from tests.isolation import ROOT, assert_finishes
from tests.providers.mock_server import Server, add

PROVIDER = "openai-responses"


def ask(reply, *, stream: bool = False, **kwargs) -> ModelError:
    model = OpenAIResponsesModel(f"{PROVIDER}/m", config=ProviderConfig(PROVIDER, "https://api.example.test/v1", "k"),
                                 transport=httpx.MockTransport(Server(reply)))
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x", on_chunk=(lambda c: None) if stream else None, **kwargs))
    assert caught.value.provider == PROVIDER
    return caught.value


def sse(*data: str) -> httpx.Response:
    return httpx.Response(200, content="".join(f"data: {d}\n\n" for d in data).encode(),
                          headers={"content-type": "text/event-stream"})


@pytest.mark.parametrize(("reply", "field"), [
    ([1], "the reply is a list"),
    ({"output": "text"}, "output is a string"),
    ({"output": [{"type": "message", "content": [{"type": "output_text", "text": 5}]}]}, "output[0].content[0].text"),
    ({"output": [{"type": "message", "content": "hi"}]}, "output[0].content is a string"),
    ({"output": [{"type": "function_call", "call_id": "c", "name": "add", "arguments": {"a": 1}}]},
     "output[0].arguments is an object"),
    ({"output": [], "usage": {"input_tokens": "many"}}, "usage.input_tokens"),
    ({"output": [], "usage": {"input_tokens_details": {"cached_tokens": 1.5}}}, "usage.input_tokens_details.cached_tokens"),
    ({"status": 3, "output": []}, "status is a number"),
])
def test_wrongly_shaped_replies_name_the_field(reply, field):
    assert field in str(ask(reply))


@pytest.mark.parametrize(("events", "field"), [
    (["[1]"], "a stream event is a list"),
    (['{"type": "response.output_text.delta", "output_index": 0, "delta": 5}'], "a stream event field delta"),
    (['{"type": "response.output_item.added", "output_index": "0", "item": {}}'], "output_index"),
    (['{"type": "response.output_item.added", "output_index": 0, "item": [1]}'], "a stream event field item"),
    (['{"type": "response.completed", "response": {"output": {"a": 1}}}'], "response.output"),
    (["not json"], "malformed stream event"),
])
def test_wrongly_shaped_stream_events_name_the_field(events, field):
    assert field in str(ask(sse(*events), stream=True))


def test_deeply_nested_json_is_a_model_error_not_a_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    assert "not JSON" in str(ask(httpx.Response(200, content=deep.encode())))
    assert "malformed stream event" in str(ask(sse(deep), stream=True))


def test_tool_arguments_nested_past_the_parser_are_kept_raw():
    deep = "[" * 100_000 + "]" * 100_000
    reply = {"status": "completed", "output": [{"type": "function_call", "call_id": "c", "name": "add", "arguments": deep}]}
    model = OpenAIResponsesModel(f"{PROVIDER}/m", config=ProviderConfig(PROVIDER, "https://x.test/v1", "k"),
                                 transport=httpx.MockTransport(Server(reply)))
    response = asyncio.run(generate(model=model, prompt="x", tools=[add], return_tool_requests=True))
    assert response.message.content[0].tool_request.input == deep
    assert "invalidArguments" in response.message.content[0].metadata


def test_an_error_event_without_a_type_name_still_ends_the_stream():
    error = ask(httpx.Response(200, content=b'event: error\ndata: {"code": "server_error", "message": "boom"}\n\n',
                               headers={"content-type": "text/event-stream"}), stream=True)
    assert "boom" in str(error) and error.retryable


# -- floods, drips and torn streams: child processes with limits --------------------------------------

PRELUDE = """
import asyncio, json, sys, time
import httpx
from dotprompt import ModelError, generate
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai_responses import OpenAIResponsesModel
from dotprompt.providers.azure import AzureOpenAIModel
from dotprompt.providers.vertex import VertexGeminiModel

def responses(handler, **kw):
    config = ProviderConfig("openai-responses", "https://api.example.test/v1", "k", timeout=5.0)
    return OpenAIResponsesModel("openai-responses/m", config=config, transport=httpx.MockTransport(handler), **kw)

def stream_of(events):
    return lambda request: httpx.Response(200, content=events(), headers={"content-type": "text/event-stream"})

DELTA = b'data: {"type": "response.output_text.delta", "output_index": 0, "delta": "%s"}\\n\\n'

def outcome(m, stream=True):
    started = time.monotonic()
    try:
        asyncio.run(generate(model=m, prompt="x", on_chunk=(lambda c: None) if stream else None))
        print(json.dumps({"error": None}))
    except ModelError as exc:
        print(json.dumps({"error": str(exc), "partial": exc.partial, "seconds": time.monotonic() - started}))
"""


def run_child(body: str, *, timeout: float = 60, memory_mb: int = 1024) -> list[dict]:
    done = assert_finishes(PRELUDE + body, timeout=timeout, memory_mb=memory_mb, cwd=ROOT)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_a_300_mb_stream_of_deltas_is_a_model_error_keeping_the_text():
    result = run_child("""
async def flood():
    piece = DELTA % (b"x" * 65000)
    for _ in range(300 * 1024 * 1024 // len(piece)):
        yield piece
outcome(responses(stream_of(flood)))
""", memory_mb=900, timeout=120)[-1]
    assert "larger than max_response_bytes=67108864" in result["error"]
    assert len(result["partial"]["output"][0]["content"][0]["text"]) > 10_000_000


@pytest.mark.slow
def test_a_delta_every_quarter_second_forever_ends_at_the_deadline():
    result = run_child("""
async def drip():
    while True:
        yield DELTA % b"t"
        await asyncio.sleep(0.25)
outcome(responses(stream_of(drip), deadline=1.5))
""")[-1]
    assert "deadline" in result["error"] and result["seconds"] < 30
    assert result["partial"]["output"][0]["content"][0]["text"].startswith("t")


@pytest.mark.slow
def test_a_stream_torn_mid_event_is_a_retryable_error_keeping_what_arrived():
    result = run_child("""
async def torn():
    yield DELTA % b"Hello"
    yield b'data: {"type": "response.output_text.delta", "output_index": 0, "del'
outcome(responses(stream_of(torn)))
""")[-1]
    assert "malformed stream event" in result["error"] or "without response.completed" in result["error"]
    assert result["partial"]["output"][0]["content"][0]["text"] == "Hello"


@pytest.mark.slow
def test_a_stream_cut_after_the_text_without_completed_is_an_error_not_a_reply():
    result = run_child("""
async def cut():
    yield DELTA % b"Hello"
outcome(responses(stream_of(cut)))
""")[-1]
    assert "without response.completed after 5 characters" in result["error"]


@pytest.mark.slow
def test_azure_and_vertex_floods_end_at_the_size_cap():
    # A smaller cap than the default (the mechanism is the one the 300 MB test above proves), to spare CI time.
    results = run_child("""
async def flood(piece):
    for _ in range(40 * 1024 * 1024 // len(piece)):
        yield piece
chat = b'data: {"choices":[{"delta":{"content":"' + b"x" * 65000 + b'"}}]}\\n\\n'
gemini = b'data: {"candidates":[{"content":{"parts":[{"text":"' + b"x" * 65000 + b'"}]}}]}\\n\\n'
sse = lambda piece: (lambda r: httpx.Response(200, content=flood(piece), headers={"content-type": "text/event-stream"}))
env = {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_OPENAI_API_KEY": "k" * 20,
       "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_OAUTH_ACCESS_TOKEN": "t" * 20}
outcome(AzureOpenAIModel("azure/d", env=env, transport=httpx.MockTransport(sse(chat)), max_response_bytes=8_000_000))
outcome(VertexGeminiModel("vertexai/gemini-2.5-flash", env=env, transport=httpx.MockTransport(sse(gemini)),
                          max_response_bytes=8_000_000))
""", memory_mb=900, timeout=120)
    assert len(results) == 2 and all("larger than max_response_bytes=8000000" in r["error"] for r in results)


@pytest.mark.slow
def test_a_flood_of_tiny_argument_deltas_is_handled_in_linear_time():
    # 100,000 one-character deltas: handing on the whole arguments with every one would copy ~5 GB.
    result = run_child("""
async def many():
    yield (b'data: {"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", '
           b'"call_id": "c", "name": "add", "arguments": ""}}\\n\\n')
    piece = b'data: {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "x"}\\n\\n'
    for _ in range(10):
        yield piece * 10_000
outcome(responses(stream_of(many)))
""", timeout=90)[-1]
    assert "without response.completed after 100000 characters" in result["error"]
    assert result["partial"]["output"][0]["arguments"] == "x" * 100_000
