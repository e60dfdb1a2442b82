"""A tool's exception that quotes a key (`*_API_KEY`) is redacted before `run` prints it and before it
becomes the tool-response part sent back to the model.

The provider is a real HTTP server on 127.0.0.1 speaking OpenAI's chat completions
(tests/providers/mock_server.Loopback); it asks for the tool, then captures the next request's body.
The command runs in a child process with a time and memory limit (tests/channels/limited_cli.py)."""

from __future__ import annotations

import json

import pytest

from tests.channels.limited_cli import cli
from tests.providers.mock_server import Loopback

pytestmark = pytest.mark.slow  # a child process and a real server

SECRET = "acme-live-7f3a9c1e5b2d"  # ACME_API_KEY: any *_API_KEY is a secret
PROVIDER_KEY = "sk-test-provider-key-123"
TOOLS = '''
import os
from dotprompt import tool


@tool
def charge(amount: int) -> str:
    """Charges a card."""
    raise RuntimeError(f"payment API refused key {os.environ['ACME_API_KEY']} (and {os.environ['OPENAI_API_KEY']})")
'''
PROMPT = "---\nmodel: openai/gpt-loop\ntools: [charge]\n---\nCharge 5."


def completion(message: dict) -> dict:
    return {"id": "c1", "object": "chat.completion", "model": "gpt-loop",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def provider(request):
    body = json.loads(request.content)
    if any(m.get("role") == "tool" for m in body["messages"]):
        return completion({"content": "The charge failed."})
    call = {"id": "call_1", "type": "function", "function": {"name": "charge", "arguments": '{"amount": 5}'}}
    return completion({"content": None, "tool_calls": [call]})


@pytest.mark.parametrize("errors", ["return", "raise"])
def test_a_key_in_a_tool_error_reaches_neither_the_terminal_nor_the_model(tmp_path, errors):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "pay.prompt").write_text(PROMPT)
    with Loopback(provider) as server:
        done = cli("run", "pay", "--tool-errors", errors, cwd=tmp_path,
                   env={"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": PROVIDER_KEY, "ACME_API_KEY": SECRET,
                        "XDG_DATA_HOME": str(tmp_path / "data")})
        bodies = [request.content.decode() for request in server.requests]
    shown = done.stdout + done.stderr
    assert SECRET not in shown and PROVIDER_KEY not in shown, shown
    assert "payment API refused key *** (and ***)" in done.stderr, done.stderr
    assert all(SECRET not in body and PROVIDER_KEY not in body for body in bodies)
    if errors == "return":
        assert done.returncode == 0 and done.stdout == "The charge failed.\n", shown
        (tool_message,) = [m for m in json.loads(bodies[1])["messages"] if m["role"] == "tool"]
        assert "payment API refused key *** (and ***)" in tool_message["content"], tool_message
    else:
        assert done.returncode == 1 and len(bodies) == 1, shown
