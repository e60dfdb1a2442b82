"""The reference server `server-everything` over its streamable HTTP transport, on loopback: a prompt's
tool call goes to it through the SDK's HTTP client, with headers taken from named variables."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel, tool_call
from tests.mcp.reference import EVERYTHING, reference_servers

pytestmark = pytest.mark.slow  # a node server


@pytest.fixture
def everything_http():
    reference_servers()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([shutil.which("node") or "node", str(EVERYTHING), "streamableHttp"],
                              env={**os.environ, "PORT": str(port)}, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_prompt_calls_a_tool_over_streamable_http(everything_http, monkeypatch):
    monkeypatch.setenv("EVERYTHING_TOKEN", "tok-abcdefgh12345")
    lib = PromptLibrary(None, mcp_servers={"web": {"url": everything_http,
                                                   "headers": {"Authorization": "Bearer ${EVERYTHING_TOKEN}"}}})
    prompt = lib.from_source("---\ntools: [web/get-sum, web/echo]\n---\nadd")
    model = ScriptedModel([[tool_call("web/get-sum", {"a": 40, "b": 2}, ref="1"),
                            tool_call("web/echo", {"message": "over http"}, ref="2")], "42"])
    try:
        response = prompt.generate_sync({}, model=model)
    finally:
        lib.close()
    assert response.text == "42"
    answers = {p.tool_response.name: p.tool_response.output for p in model.requests[1].messages[-1].content}
    assert "42" in str(answers["web/get-sum"]) and answers["web/echo"] == "Echo: over http"
