"""A real `dotprompt mcp serve` process over stdio, driven by the SDK's own client and by a raw client
that goes away in the middle of a call."""

from __future__ import annotations

import json
import select
import subprocess
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.isolation import assert_finishes
from tests.mcpserve.serving import Stalled, command, environment

pytestmark = pytest.mark.slow


def test_the_sdks_client_lists_gets_and_calls_over_stdio(folder, tmp_path):
    cmd = command(folder)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=environment(tmp_path))

    async def main():
        with anyio.fail_after(90):
            async with Client(params) as client:
                prompts = [p.name for p in (await client.list_prompts()).prompts]
                got = await client.get_prompt("yesno", {"answer": "yes", "count": "2"})
                tools = [t.name for t in (await client.list_tools()).tools]
                called = await client.call_tool("yesno", {"answer": "yes"})
                checked = await client.call_tool("check", {})
                rendered = await client.call_tool("render", {"prompt": "look", "input": {"question": "?"}})
                return prompts, got, tools, called, checked, rendered

    prompts, got, tools, called, checked, rendered = anyio.run(main)
    assert prompts == ["letters", "look", "remote", "yesno", "yesno.formal"]
    assert json.loads(got.messages[0].content.text) == {"answer": "yes", "count": 2}
    assert "yesno" in tools and "check" in tools and "render" in tools
    assert called.structured_content == {"answer": "yes"}
    assert [d["path"] for d in checked.structured_content["diagnostics"] if d["level"] == "error"] == ["broken.prompt"]
    assert rendered.structured_content["messages"][0]["role"] == "system"


def test_a_huge_input_over_stdio_is_refused_and_the_server_answers_the_next_call(folder, tmp_path):
    # the client and the server it starts share the child's limits: a blow-up or a hang fails the test
    outcome = assert_finishes(f"""
        import anyio, json
        from mcp import Client, StdioServerParameters
        cmd = {command(folder)!r}
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={environment(tmp_path)!r})
        async def main():
            async with Client(params) as client:
                huge = await client.call_tool("yesno", {{"answer": "x" * 5_000_000}})
                after = await client.call_tool("yesno", {{"answer": "ok"}})
                print(json.dumps([huge.is_error, huge.content[0].text[:200], after.structured_content]))
        anyio.run(main)
    """, timeout=120, memory_mb=3072)
    is_error, text, after = outcome.json()
    assert is_error and "over the limit" in text
    assert after == {"answer": "ok"}


def frame(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


HELLO = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "leaver", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def test_a_client_that_goes_away_mid_call_ends_the_server_cleanly(folder, tmp_path):
    with Stalled() as model:
        process = subprocess.Popen(command(folder), env=environment(tmp_path, model.url), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert process.stdin is not None and process.stdout is not None
            for message in HELLO:
                process.stdin.write(frame(message))
            process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": "remote", "arguments": {"question": "hello?"}}}))
            process.stdin.flush()
            assert json.loads(process.stdout.readline())["id"] == 1
            assert model.asked.wait(60), "the call never reached the model"
            process.stdin.close()  # the client is gone, its call still running
            started = time.monotonic()
            code = process.wait(30)
            err = process.stderr.read() if process.stderr else b""
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert code == 0, err.decode()
    assert b"Traceback" not in err, err.decode()
    assert time.monotonic() - started < 30


def read_until(stream, wanted: str, seconds: float) -> list[str]:
    """The methods of the messages read from `stream` until one is `wanted` (or the time is up)."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and wanted not in seen:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = stream.readline()
        if not line:
            break
        seen.append(json.loads(line).get("method", "(answer)"))
    return seen


def test_a_prompt_added_while_serving_is_announced_to_a_client_that_listed(folder, tmp_path):
    process = subprocess.Popen(command(folder), env=environment(tmp_path), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdin is not None and process.stdout is not None
        for message in [*HELLO, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}]:
            process.stdin.write(frame(message))
        process.stdin.flush()
        hello = json.loads(process.stdout.readline())
        assert hello["result"]["capabilities"]["prompts"]["listChanged"] is True
        assert read_until(process.stdout, "(answer)", 60) == ["(answer)"]
        (folder / "fresh.prompt").write_text("---\nmodel: echo\n---\nhello\n")
        seen = read_until(process.stdout, "notifications/tools/list_changed", 30)
    finally:
        process.kill()
        process.wait()
    assert seen == ["notifications/prompts/list_changed", "notifications/tools/list_changed"]
