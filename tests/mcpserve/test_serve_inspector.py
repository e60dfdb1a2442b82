"""Our server listed and called by a client nobody here wrote: the MCP Inspector's CLI mode (npm
`@modelcontextprotocol/inspector`, pinned in tests/mcpserve/inspector/), over stdio and streamable HTTP."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.mcpserve.inspector import install
from tests.mcpserve.serving import command, environment, http_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inspector() -> Path:
    return install()  # from .ci/run's cache; installed here when missing (npm ci, the pinned lock)


def ask(inspector: Path, target: list[str], env: dict[str, str], *args: str, quiet: bool = False) -> dict:
    done = subprocess.run([str(inspector), "--cli", *target, *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    if quiet:  # the Inspector's --strict warns of a schema that is legal but less portable (a type list, say)
        assert "Warning" not in done.stderr, done.stderr[-2000:]
    return json.loads(done.stdout[done.stdout.index("{"):])


def test_the_inspector_lists_gets_and_calls_over_stdio(inspector, folder, tmp_path):
    env = {**environment(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    target = command(folder)
    prompts = ask(inspector, target, env, "--method", "prompts/list")
    assert [p["name"] for p in prompts["prompts"]] == ["letters", "look", "remote", "yesno", "yesno.formal"]
    got = ask(inspector, target, env, "--method", "prompts/get", "--prompt-name", "yesno",
              "--prompt-args", "answer=yes", "count=4")
    assert json.loads(got["messages"][0]["content"]["text"]) == {"answer": "yes", "count": 4}
    tools = ask(inspector, target, env, "--method", "tools/list", "--strict", quiet=True)  # --strict: exit 6 on an error
    assert {t["name"] for t in tools["tools"]} >= {"yesno", "letters", "check", "render"}
    called = ask(inspector, target, env, "--method", "tools/call", "--tool-name", "yesno", "--tool-arg", "answer=yes")
    assert called["structuredContent"] == {"answer": "yes"} and not called["isError"]
    checked = ask(inspector, target, env, "--method", "tools/call", "--tool-name", "check")
    assert checked["structuredContent"]["errors"] == 1 and "broken.prompt" in checked["content"][0]["text"]
    rendered = ask(inspector, target, env, "--method", "tools/call", "--tool-name", "render",
                   "--tool-arg", "prompt=yesno", 'input={"answer": "hi"}')
    assert rendered["structuredContent"]["messages"][0]["content"][0]["text"] == '{"answer": "hi"}'


def test_the_inspector_calls_over_streamable_http(inspector, folder, tmp_path):
    env = {**environment(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    with http_server(folder, env) as (url, _):
        tools = ask(inspector, [url], env, "--transport", "http", "--method", "tools/list")
        called = ask(inspector, [url], env, "--transport", "http", "--method", "tools/call",
                     "--tool-name", "yesno.formal", "--tool-arg", "answer=no")
    assert "yesno.formal" in {t["name"] for t in tools["tools"]}
    assert called["structuredContent"] == {"answer": "certainly no"}
