"""Hostile MCP servers (tests/mcp/hostile_server.py): each a clear error naming the server, within a
time and memory bound (the run is a child process under limits: tests/isolation.py)."""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes

pytestmark = pytest.mark.slow  # a child interpreter and a server process each

RUN = """
import json, sys
from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel, tool_call
server = {{"command": sys.executable, "args": [{script!r}, {mode!r}], "timeout": {timeout}, "startup_timeout": 3}}
lib = PromptLibrary(None, mcp_servers={{"h": server}})
prompt = lib.from_source("---\\ntools: [{tools}]\\n---\\nhi")
model = ScriptedModel([tool_call("h/echo", {{"text": "yo"}}), tool_call("h/echo", {{"text": "again"}}), "done"])
try:
    response = prompt.generate_sync({{}}, model=model, tool_errors={errors!r})
    outputs = [p.tool_response.output for m in response.messages if m.role == "tool" for p in m.content]
    print(json.dumps({{"outputs": outputs}}))
except Exception as exc:
    print(json.dumps({{"error": type(exc).__name__, "message": str(exc)}}))
finally:
    lib.close()
"""


def run(mode: str, *, tools: str = "h/echo", timeout: float = 3, errors: str = "raise", limit: float = 40) -> dict:
    from pathlib import Path

    script = str(Path(__file__).parent / "hostile_server.py")
    code = RUN.format(script=script, mode=mode, tools=tools, timeout=timeout, errors=errors)
    return assert_finishes(code, timeout=limit, memory_mb=1536).json()


def test_a_server_that_never_answers_fails_its_start_within_the_startup_timeout():
    found = run("never")
    assert found["error"] == "McpServerError"
    assert "MCP server 'h' did not answer `initialize` within 3s" in found["message"]
    assert "startup_timeout" in found["message"]


def test_a_server_writing_garbage_to_stdout_is_named_with_what_it_wrote():
    found = run("garbage")
    assert found["error"] == "McpServerError"
    assert "not JSON-RPC" in found["message"] and "this is not JSON" in found["message"]


def test_a_list_of_ten_thousand_tools_is_refused():
    found = run("tools10k", tools="h/*")
    assert found["error"] == "McpServerError"
    assert "lists more than 1000 tools" in found["message"]


def test_a_tool_list_of_the_wrong_shape_says_where():
    found = run("shapes")
    assert found["error"] == "McpServerError"
    assert "tools/list: out of shape: tools.0.inputSchema" in found["message"]


def test_a_huge_result_is_refused_not_sent_to_the_model():
    found = run("huge", timeout=30, limit=90)
    assert found["error"] == "ToolExecutionError"
    assert "MCP tool 'h/echo' returned 20,000,000 characters" in found["message"]


def test_a_slow_call_is_bounded_by_the_timeout():
    found = run("slow", timeout=1)
    assert found["error"] == "ToolExecutionError"
    assert "MCP server 'h' did not answer tool 'echo' within 1s" in found["message"]


def test_a_crash_mid_run_names_the_server_and_what_it_said_and_the_next_call_starts_it_again():
    found = run("crash", errors="return")
    first, second = found["outputs"]
    for output in (first, second):  # each call: the server started again, and crashed again
        assert "MCP server 'h' stopped during tool 'echo'" in output["error"]
        assert "out of cheese" in output["error"]
