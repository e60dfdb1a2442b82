"""MCP tools in the one tool loop, against a small well-behaved server (tests/mcp/hostile_server.py
`well`): `isError`, `notifications/tools/list_changed`, the env allow-list and its redaction, the
sync and async APIs sharing one session."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from dotprompt import McpServerError, PromptLibrary, ToolExecutionError, UsageError
from dotprompt.doubles import ScriptedModel, tool_call
from tests.mcp.reference import processes_in

pytestmark = pytest.mark.slow  # a server process each

SCRIPT = str(Path(__file__).parent / "hostile_server.py")


def server(mode: str = "well", **extra) -> dict:
    return {"command": sys.executable, "args": [SCRIPT, mode], "timeout": 10, **extra}


def outputs(response) -> list:
    return [p.tool_response.output for m in response.messages if m.role == "tool" for p in m.content]


def test_is_error_goes_back_to_the_model_as_the_tools_error_and_bad_input_never_reaches_the_server():
    lib = PromptLibrary(None, mcp_servers={"h": server()})
    try:
        prompt = lib.from_source("---\ntools: [h/fail, h/echo]\n---\nhi")
        model = ScriptedModel([[tool_call("h/fail", {}, ref="1"), tool_call("h/echo", {"text": 5}, ref="2")], "ok"])
        response = prompt.generate_sync({}, model=model)
        failed, bad_input = outputs(response)
        assert failed == {"error": "RuntimeError: MCP tool 'h/fail' reported an error: the disk is full"}
        assert "text: " in bad_input["error"]  # our check of the input schema, before any call
        with pytest.raises(ToolExecutionError, match="the disk is full"):
            prompt.generate_sync({}, model=ScriptedModel([tool_call("h/fail", {}), "ok"]), tool_errors="raise")
    finally:
        lib.close()


def test_a_list_changed_notification_makes_the_next_run_see_the_new_tool():
    lib = PromptLibrary(None, mcp_servers={"h": server()})
    try:
        prompt = lib.from_source("---\ntools: ['h/*']\n---\nhi")
        model = ScriptedModel([tool_call("h/add_tool", {}), "ok"])
        prompt.generate_sync({}, model=model)
        assert {d.name for d in model.requests[0].tools} == {"h/echo", "h/add_tool", "h/fail"}
        model = ScriptedModel(["ok"])
        prompt.generate_sync({}, model=model)
        assert {d.name for d in model.requests[0].tools} == {"h/echo", "h/add_tool", "h/fail", "h/extra"}
    finally:
        lib.close()


def test_a_stdio_server_sees_only_the_variables_it_is_allowed_and_they_never_reach_the_log(monkeypatch, tmp_path):
    monkeypatch.setenv("SERVICE_CREDENTIAL", "cred-1234567890-secret")  # a name redact() would not guess
    monkeypatch.setenv("OTHER_THING", "not-for-the-server")
    (tmp_path / "env.prompt").write_text("---\ntools: [h/echo]\n---\nhi", encoding="utf-8")
    lib = PromptLibrary(tmp_path, mcp_servers={"h": server("env", env=["SERVICE_CREDENTIAL"])}, log=tmp_path / "runs.db")
    try:
        prompt = lib.load("env")
        response = prompt.generate_sync({}, model=ScriptedModel([tool_call("h/echo", {}), "ok"]))
    finally:
        lib.close()
    seen = outputs(response)[0]
    assert "OTHER_THING" not in seen
    assert json.loads(seen)["SERVICE_CREDENTIAL"] == "***"  # it printed the value: masked before the model saw it
    assert "cred-1234567890-secret" not in json.dumps(response.model_dump())
    lib.run_log.flush()
    lib.run_log.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("runs.db*"))
    assert b"SERVICE_CREDENTIAL" in stored and b"cred-1234567890-secret" not in stored


def test_the_async_api_on_its_own_event_loops_shares_the_session(tmp_path):
    lib = PromptLibrary(None, mcp_servers={"h": server(cwd=str(tmp_path))})
    prompt = lib.from_source("---\ntools: [h/echo]\n---\nhi")
    try:
        for word in ("a", "b"):  # two asyncio.run calls: two event loops, one server
            model = ScriptedModel([tool_call("h/echo", {"text": word}), "ok"])
            response = asyncio.run(prompt.generate({}, model=model))
            assert outputs(response) == [word]
        assert len(processes_in(tmp_path)) == 1
    finally:
        lib.close()


def test_a_tool_the_server_does_not_offer_is_an_error_with_a_did_you_mean():
    lib = PromptLibrary(None, mcp_servers={"h": server()})
    try:
        prompt = lib.from_source("---\ntools: [h/ecko]\n---\nhi")
        with pytest.raises(UsageError, match=r"MCP server 'h' has no tool 'ecko' \(did you mean h/echo\?\)"):
            prompt.generate_sync({}, model=ScriptedModel(["ok"]))
        prompt = lib.from_source("---\ntools: ['h/zz*']\n---\nhi")
        with pytest.raises(UsageError, match="matches none of the tools of MCP server 'h'"):
            prompt.generate_sync({}, model=ScriptedModel(["ok"]))
    finally:
        lib.close()


def test_a_server_that_cannot_start_is_a_dotprompt_error_naming_it():
    lib = PromptLibrary(None, mcp_servers={"h": {"command": "/nonexistent/server-binary"}})
    prompt = lib.from_source("---\ntools: [h/echo]\n---\nhi")
    with pytest.raises(McpServerError, match="MCP server 'h' could not start"):
        prompt.generate_sync({}, model=ScriptedModel(["ok"]))


def test_a_relative_cwd_is_the_configuring_pyprojects_folder_not_the_working_one(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "deep" / "down").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.dotprompt.mcp.servers.h]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = [{json.dumps(SCRIPT)}, "cwd"]\ncwd = "data"\ntimeout = 10\n')
    monkeypatch.chdir(tmp_path / "deep" / "down")  # a run started below the project's root
    lib = PromptLibrary(None)
    try:
        prompt = lib.from_source("---\ntools: [h/echo]\n---\nhi")
        response = prompt.generate_sync({}, model=ScriptedModel([tool_call("h/echo", {}), "ok"]))
        assert outputs(response) == [str((tmp_path / "data").resolve())]
    finally:
        lib.close()


def test_a_librarys_relative_cwd_is_its_project_root(tmp_path, monkeypatch):
    (tmp_path / "proj" / "prompts").mkdir(parents=True)
    (tmp_path / "proj" / "data").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text("[tool.dotprompt]\n")
    monkeypatch.chdir(tmp_path)  # elsewhere: the library's folder decides
    lib = PromptLibrary(tmp_path / "proj" / "prompts", mcp_servers={"h": server("cwd", cwd="data")})
    try:
        prompt = lib.from_source("---\ntools: [h/echo]\n---\nhi")
        response = prompt.generate_sync({}, model=ScriptedModel([tool_call("h/echo", {}), "ok"]))
        assert outputs(response) == [str((tmp_path / "proj" / "data").resolve())]
    finally:
        lib.close()


def test_a_cwd_that_is_no_folder_is_an_error_naming_the_server_and_the_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lib = PromptLibrary(None, mcp_servers={"h": server("cwd", cwd="missing")})
    try:
        prompt = lib.from_source("---\ntools: [h/echo]\n---\nhi")
        with pytest.raises((McpServerError, UsageError)) as caught:
            prompt.generate_sync({}, model=ScriptedModel([tool_call("h/echo", {}), "ok"]))
        assert "cwd" in str(caught.value) and str(tmp_path / "missing") in str(caught.value)
    finally:
        lib.close()
