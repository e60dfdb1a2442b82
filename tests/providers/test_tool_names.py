"""Tool names the providers refuse (an MCP tool's `SERVER/TOOL`, a dotted or spaced name, a long one)
are sent wire-safe and the model's calls mapped back to the real tool, for every HTTP provider."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from dotprompt import generate, tool
from dotprompt.providers.tool_names import wire_names
from dotprompt.types import GenerateRequest, Message
from tests.providers import test_models_anthropic as anthropic_tests
from tests.providers import test_models_gemini as gemini_tests
from tests.providers import test_models_openai as openai_tests
from tests.providers import test_models_openai_responses as responses_tests
from tests.providers.mock_server import Server

# The vendors' rules: OpenAI's and Anthropic's documented pattern; Gemini's SDK docs (first character
# a letter or underscore; dots and colons allowed; at most 64 characters on the API).
RULES = {"openai": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"), "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
         "gemini": re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$"), "responses": re.compile(r"^[a-zA-Z0-9_-]{1,64}$")}

LONG = "knowledge-base/" + "search_the_whole_corporate_knowledge_base_for_" * 2 + "documents"


def make_tool(name: str) -> Any:
    def run(args: dict) -> str:
        return f"{name}:{args['q']}"
    return tool(run, name=name, description=f"the tool {name}",
                input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})


TOOLS = [make_tool(n) for n in ("files/read", "files.read", "my tool", "add", LONG)]


def anthropic_call(name: str) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {"q": "x"}}]}


def anthropic_text(text: str) -> dict:
    return {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}, "content": [{"type": "text", "text": text}]}


class Provider:
    def __init__(self, key: str, model_for: Callable[[Server], Any], call: Callable[[str], dict],
                 text: Callable[[str], dict], sent: Callable[[dict], list[str]], history: Callable[[dict], str]):
        self.key, self.model_for, self.call, self.text, self.sent, self.history = key, model_for, call, text, sent, history


PROVIDERS = [
    Provider("openai", openai_tests.model_for,
             lambda n: openai_tests.completion({"role": "assistant", "content": None, "tool_calls": [
                 {"id": "call_1", "type": "function", "function": {"name": n, "arguments": "{\"q\": \"x\"}"}}]}, "tool_calls"),
             lambda t: openai_tests.completion({"role": "assistant", "content": t}),
             lambda body: [t["function"]["name"] for t in body["tools"]],
             lambda body: body["messages"][1]["tool_calls"][0]["function"]["name"]),
    Provider("anthropic", anthropic_tests.model_for, anthropic_call, anthropic_text,
             lambda body: [t["name"] for t in body["tools"]],
             lambda body: body["messages"][1]["content"][0]["name"]),
    Provider("gemini", gemini_tests.model_for,
             lambda n: gemini_tests.reply({"functionCall": {"name": n, "args": {"q": "x"}}}),
             lambda t: gemini_tests.reply({"text": t}),
             lambda body: [d["name"] for d in body["tools"][0]["functionDeclarations"]],
             lambda body: body["contents"][1]["parts"][0]["functionCall"]["name"]),
    Provider("responses", responses_tests.model_for,
             lambda n: responses_tests.reply(responses_tests.call_item(n, "{\"q\": \"x\"}")),
             lambda t: responses_tests.reply(responses_tests.text_item(t)),
             lambda body: [t["name"] for t in body["tools"]],
             lambda body: next(i["name"] for i in body["input"] if i.get("type") == "function_call")),
]


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.key for p in PROVIDERS])
@pytest.mark.parametrize("real", ["files/read", "files.read", "my tool", LONG])
def test_a_refused_name_is_sent_wire_safe_and_the_call_runs_the_real_tool(provider, real):
    names = wire_names([t.definition.name for t in TOOLS])
    server = Server(provider.call(names[real]), provider.text("done"))
    response = asyncio.run(generate(model=provider.model_for(server), prompt="go", tools=TOOLS))
    sent = provider.sent(server.body(0))
    assert all(provider_rule(provider).match(n) for n in sent), sent
    assert len(set(sent)) == len(TOOLS)  # collision-free: files/read and files.read differ on the wire
    assert "add" in sent  # a name already safe is kept
    assert provider.history(server.body(1)) == names[real]  # the history goes back in wire names
    # the loop ran the real tool, and what the caller sees (and records) carries the real names
    request = next(p.tool_request for m in response.messages for p in m.content if p.tool_request)
    answer = next(p.tool_response for m in response.messages for p in m.content if p.tool_response)
    assert request.name == real and answer.name == real and answer.output == f"{real}:x"
    assert response.text == "done"


def provider_rule(provider: Provider) -> re.Pattern[str]:
    return RULES[provider.key]


def test_wire_names_are_deterministic_short_and_collision_free():
    names = ["a/b", "a.b", "a b", "a__b", "9lives", "-x", LONG, LONG + "2", "ok_name"]
    first, again = wire_names(names), wire_names(list(reversed(names)))
    assert first == again
    wire = [first.get(n, n) for n in names]
    assert len(set(wire)) == len(names)
    assert all(re.match(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$", w) for w in wire), wire
    assert first["a/b"] != "a__b" and "a__b" not in first  # the real a__b keeps its name; a/b gets a hash
    assert "ok_name" not in first


def test_streamed_tool_calls_reach_on_chunk_with_the_real_name():
    wire = wire_names(["files/read"])["files/read"]
    events = [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
               "function": {"name": wire, "arguments": "{\"q\": \"x\"}"}}]}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    import httpx
    server = Server(httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"}))
    chunks: list = []
    request = GenerateRequest(messages=[Message(role="user", content=[{"text": "go"}])],
                              tools=[make_tool("files/read").definition])
    response = asyncio.run(openai_tests.model_for(server).generate(request, chunks.append))
    streamed = [p.tool_request.name for c in chunks for p in c.content if p.tool_request]
    assert streamed and set(streamed) == {"files/read"}
    assert response.message.content[0].tool_request.name == "files/read"


def test_the_wire_preview_shows_what_is_sent():
    request = GenerateRequest(messages=[Message(role="user", content=[{"text": "go"}])],
                              tools=[make_tool("files/read").definition])
    body = openai_tests.model_for(Server()).wire_request(request)
    assert [t["function"]["name"] for t in body["tools"]] == ["files__read"]
