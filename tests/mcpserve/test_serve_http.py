"""`dotprompt mcp serve --http`: a real process on loopback, the SDK's own client over streamable HTTP,
the workbench's Host and Origin rules, and a client that drops its connection in the middle of a call."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mcp import Client

from tests.mcpserve.serving import Stalled, environment, http_server

pytestmark = pytest.mark.slow

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_the_sdks_client_lists_and_calls_over_streamable_http(folder, tmp_path):
    with http_server(folder, environment(tmp_path)) as (url, process):
        async def main():
            with anyio.fail_after(60):
                async with Client(url) as client:
                    prompts = [p.name for p in (await client.list_prompts()).prompts]
                    got = await client.get_prompt("yesno.formal", {"answer": "yes"})
                    called = await client.call_tool("letters", {"word": "hi"})
                    checked = await client.call_tool("check", {"prompt": "yesno"})
                    return prompts, got, called, checked

        prompts, got, called, checked = anyio.run(main)
    stderr = process.stderr.read() if process.stderr else ""
    assert process.returncode == 0 and "Traceback" not in stderr, stderr  # Ctrl-C ends it cleanly
    assert "yesno.formal" in prompts and "broken" not in prompts
    assert json.loads(got.messages[0].content.text) == {"answer": "certainly yes"}
    assert called.structured_content == {"result": [{"letter": "h"}, {"letter": "i"}]}
    assert checked.structured_content["errors"] == 0


@pytest.mark.parametrize("headers", [
    {"host": "evil.example"},                      # DNS rebinding: another site's name on our address
    {"origin": "http://evil.example"},             # a page of another site
    {"origin": "http://localhost:1"},              # another port of this machine is another origin
    {"sec-fetch-site": "cross-site"},              # a browser says another site sent it
])
def test_requests_from_another_host_or_origin_are_refused(folder, tmp_path, headers):
    with http_server(folder, environment(tmp_path)) as (url, _):
        refused = httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)
        own = httpx.post(url, json=INITIALIZE, headers={**ACCEPT, "origin": url.rsplit("/", 1)[0]}, timeout=30)
    assert refused.status_code == 403, refused.text
    assert own.status_code == 200, own.text


def test_a_client_that_drops_mid_call_leaves_the_server_serving_others(folder, tmp_path):
    with Stalled() as model, http_server(folder, environment(tmp_path, model.url)) as (url, process):
        with httpx.Client(timeout=30) as raw:
            hello = raw.post(url, json=INITIALIZE, headers=ACCEPT)
            session = {"mcp-session-id": hello.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            raw.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**ACCEPT, **session})
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "remote", "arguments": {"question": "hello?"}}}
            with raw.stream("POST", url, json=call, headers={**ACCEPT, **session}):
                assert model.asked.wait(60), "the call never reached the model"
            # the response stream is closed with the call still running: the client is gone

        async def main():
            with anyio.fail_after(60):
                async with Client(url) as client:
                    return await client.call_tool("yesno", {"answer": "still here"})

        after = anyio.run(main)
        assert process.poll() is None
    assert after.structured_content == {"answer": "still here"}
