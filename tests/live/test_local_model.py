"""The generate loop against the real llama-server through the OpenAI-compatible provider.

A 135M model answers poorly, so these tests check structure (schemas, tool calls, streaming, errors),
not correctness; temperature 0 and small token limits keep them deterministic and fast.
"""

from __future__ import annotations

import os
import signal
import sys

import jsonschema
import pytest

from dotprompt import ModelError, generate_sync, tool
from dotprompt.local.model import LlamaServer, LocalModel, local_paths
from dotprompt.types import GenerateRequest
from tests.isolation_procs import run_owner_and_kill

pytestmark = pytest.mark.live

FAST = {"temperature": 0, "maxOutputTokens": 48}

ORDER = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "items": {
            "type": "array", "minItems": 1, "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "product": {"type": "string"},
                    "quantity": {"type": "integer"},
                    "size": {"type": "string", "enum": ["small", "medium", "large"]},
                },
                "required": ["product", "quantity", "size"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["customer", "items"],
    "additionalProperties": False,
}


def weather_tool(calls: list[str]):
    @tool
    def get_weather(city: str) -> dict:
        """Get the current weather for a city."""
        calls.append(city)
        return {"city": city, "temperature_c": 21, "sky": "sunny"}

    return get_weather


def test_plain_chat(local_model: LocalModel):
    response = generate_sync(model=local_model, prompt="What is the capital of France?", config=FAST)
    assert "Paris" in response.text
    assert response.finish_reason == "stop" and response.usage.output_tokens > 0


def test_streaming_chunks_join_to_the_final_text(local_model: LocalModel):
    chunks = []
    response = generate_sync(model=local_model, prompt="Say hello.", config=FAST, on_chunk=chunks.append)
    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 1 and "".join(texts) == response.text != ""


def test_constrained_json_matches_a_nested_schema(local_model: LocalModel):
    response = generate_sync(model=local_model, system="Extract the order as JSON.",
                             prompt="Ana ordered two small coffees and one large tea.", output_schema=ORDER,
                             config={"temperature": 0, "maxOutputTokens": 200})
    jsonschema.validate(response.output, ORDER)
    assert response.request.output.constrained  # sent as response_format: llama-server's grammar did it


def test_tool_round_trip_through_the_loop(local_model: LocalModel):
    calls: list[str] = []
    sent: list[GenerateRequest] = []

    async def required_then_answer(request: GenerateRequest, next_):
        # "required" on every turn would call the tool forever; once a result is back, let it answer.
        answered = any(m.role == "tool" for m in request.messages)
        sent.append(request)
        return await next_(request.model_copy(update={"tool_choice": "none" if answered else "required"}))

    response = generate_sync(model=local_model, prompt="What is the weather in Paris?", tools=[weather_tool(calls)],
                             tool_choice="required", use=[required_then_answer], config=FAST)
    assert calls == ["Paris"]
    assert len(sent) == 2
    result = sent[1].messages[-1].content[0].tool_response
    assert result.name == "get_weather" and result.output == {"city": "Paris", "temperature_c": 21, "sky": "sunny"}
    assert response.finish_reason == "stop" and not response.tool_requests


def test_streamed_tool_call(local_model: LocalModel):
    chunks = []
    response = generate_sync(model=local_model, prompt="What is the weather in Paris?", tools=[weather_tool([])],
                             tool_choice="required", return_tool_requests=True, config=FAST, on_chunk=chunks.append)
    partial = [r for c in chunks for r in c.tool_requests]
    assert len(partial) > 1 and all(r.partial for r in partial) and partial[0].name == "get_weather"
    assert isinstance(partial[-1].input, str) and "Paris" in partial[-1].input  # raw argument text so far
    [final] = response.tool_requests
    assert final.name == "get_weather" and final.input == {"city": "Paris"} and not final.partial


def test_a_rejected_request_is_a_model_error_with_the_servers_message(local_model: LocalModel):
    with pytest.raises(ModelError) as caught:
        generate_sync(model=local_model, prompt="hi", config={"temperature": "hot"})
    assert caught.value.status == 400 and not caught.value.retryable
    assert "Field 'temperature'" in str(caught.value) and "type must be number" in str(caught.value)


def test_server_killed_mid_stream(local_model: LocalModel):
    server = LlamaServer(local_paths()).start()  # its own server: the shared one stays up
    texts: list[str] = []

    def kill_after_a_few(chunk) -> None:
        if chunk.text:
            texts.append(chunk.text)
        if len(texts) == 3:
            os.kill(server.process.pid, signal.SIGKILL)

    try:
        with pytest.raises(ModelError) as caught:
            generate_sync(model=LocalModel(server=server), prompt="Write a long story about a dragon.",
                          config={"temperature": 0, "maxOutputTokens": 400}, on_chunk=kill_after_a_few)
    finally:
        server.stop()
    error = caught.value
    assert "died during the request (signal SIGKILL)" in str(error) and str(server.log_path) in str(error)
    kept = error.partial["choices"][0]["message"]["content"]
    assert kept.startswith("".join(texts[:3])) and len(texts) >= 3
    assert server.log_path.exists()  # kept for reading, since the server failed
    server.log_path.unlink()
    assert generate_sync(model=local_model, prompt="Say hello.", config=FAST).text  # the shared server is unharmed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_real_server_dies_with_a_killed_parent_mid_generation(local_model: LocalModel):
    # The issue: a killed parent left llama-server generating at full CPU. One thread, to spare the runner.
    verdict = run_owner_and_kill(local_paths().root, "SIGKILL", "--keep-generating", delay=1.0, timeout=240.0,
                                 memory_mb=8192, env={"DOTPROMPT_LOCAL_THREADS": "1"})
    assert verdict["gone"], verdict
