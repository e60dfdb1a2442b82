"""A scripted provider endpoint for httpx.MockTransport, shared by the provider tests."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from dotprompt import Message, tool
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OpenAIModel

FIXTURES = Path(__file__).parent / "fixtures"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Server:
    """Serves scripted replies (fixture names, dicts or responses) and records every request.

    Every request body is first checked against the vendor SDK's own request type for its endpoint
    (vendor_types.py): a body the vendor's types reject fails the test that sent it."""

    def __init__(self, *replies, conform: bool = True):
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.conform = conform

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.conform:
            from tests.models.vendor_types import check_request  # the SDKs load on first use: children that never check skip them

            check_request(request.url.path, json.loads(request.content))
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return fixture(reply)
        return reply if isinstance(reply, httpx.Response) else httpx.Response(200, json=reply)

    def body(self, index: int) -> dict:
        return json.loads(self.requests[index].content)


def fixture(name: str, status: int = 200, headers: dict | None = None) -> httpx.Response:
    kind = "text/event-stream" if name.endswith(".sse") else "application/json"
    return httpx.Response(status, content=(FIXTURES / name).read_bytes(), headers={"content-type": kind, **(headers or {})})


def merge_history() -> list[Message]:
    """A system message, two user turns in a row, a tool round and a user turn: what providers must merge and map."""
    return [Message.model_validate(m) for m in (
        {"role": "system", "content": [{"text": "Be exact."}]},
        {"role": "user", "content": [{"text": "first"}]},
        {"role": "user", "content": [{"text": "second"}]},
        {"role": "model", "content": [{"toolRequest": {"name": "add", "input": {"a": 1, "b": 1}}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "output": {"sum": 2}}}]},
        {"role": "user", "content": [{"text": "and now?"}]})]


def openai_model(server: Server) -> OpenAIModel:
    """`openai/gpt-test` answering through `server` (no network)."""
    return OpenAIModel("openai/gpt-test", config=ProviderConfig("openai", "https://api.example.test/v1", "k"),
                       transport=httpx.MockTransport(server))


def anthropic_model(server: Server) -> AnthropicModel:
    return AnthropicModel("anthropic/claude-test", config=ProviderConfig("anthropic", "https://api.example.test/v1", "k"),
                          transport=httpx.MockTransport(server))


def gemini_model(server: Server, name: str = "googleai/gemini-2.5-flash") -> GeminiModel:
    return GeminiModel(name, config=ProviderConfig("googleai", "https://api.example.test/v1beta", "k"),
                       transport=httpx.MockTransport(server))
