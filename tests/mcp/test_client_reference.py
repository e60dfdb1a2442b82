"""Prompt files using the tools of the MCP reference servers (npm), end to end through load_prompt:
a scripted model calls their tools over stdio, and over streamable HTTP where the server offers it."""

from __future__ import annotations

import json

import pytest

from dotprompt import PromptLibrary, Resume
from dotprompt.doubles import ScriptedModel, tool_call
from tests.mcp.reference import everything, filesystem, processes_in

pytestmark = pytest.mark.slow  # node processes: seconds each


def _library(tmp_path, servers, text, name="ask"):
    (tmp_path / f"{name}.prompt").write_text(text, encoding="utf-8")
    return PromptLibrary(tmp_path, mcp_servers=servers)


def test_a_prompt_uses_two_reference_servers_tools_end_to_end(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("the launch is on Tuesday", encoding="utf-8")
    lib = _library(tmp_path, {"everything": everything(), "fs": filesystem(docs)},
                   "---\ntools: [everything/get-sum, fs/read_text_file]\n---\nWhen is the launch?")
    model = ScriptedModel([
        [tool_call("fs/read_text_file", {"path": str(docs / "note.txt")}, ref="1"),
         tool_call("everything/get-sum", {"a": 2, "b": 3}, ref="2")],
        "Tuesday, and 2 + 3 = 5."])
    try:
        response = lib.load("ask").generate_sync({}, model=model)
    finally:
        lib.close()
    assert response.text == "Tuesday, and 2 + 3 = 5."
    sent = {d.name: d for d in model.requests[0].tools}
    assert set(sent) == {"everything/get-sum", "fs/read_text_file"}
    assert sent["everything/get-sum"].input_schema["properties"].keys() >= {"a", "b"}
    answers = {p.tool_response.name: p.tool_response.output for p in model.requests[1].messages[-1].content}
    assert answers["fs/read_text_file"] == {"content": "the launch is on Tuesday"}  # its structured content
    assert "5" in json.dumps(answers["everything/get-sum"])


def test_a_whole_server_and_a_pattern_name_its_tools(tmp_path):
    lib = _library(tmp_path, {"everything": everything()},
                   "---\ntools: ['everything/get-*']\n---\nhi")
    model = ScriptedModel(["ok"])
    try:
        lib.load("ask").generate_sync({}, model=model)
        names = {d.name for d in model.requests[0].tools}
        assert "everything/get-sum" in names and "everything/echo" not in names
        assert all(n.startswith("everything/get-") for n in names)
        (tmp_path / "all.prompt").write_text("---\ntools: ['everything/*']\n---\nhi", encoding="utf-8")
        model = ScriptedModel(["ok"])
        lib.load("all").generate_sync({}, model=model)
        assert {"everything/echo", "everything/get-sum"} <= {d.name for d in model.requests[0].tools}
    finally:
        lib.close()


def test_structured_content_and_its_output_schema_reach_the_model(tmp_path):
    lib = _library(tmp_path, {"everything": everything()},
                   "---\ntools: [everything/get-structured-content]\n---\nweather?")
    model = ScriptedModel([tool_call("everything/get-structured-content", {"location": "New York"}), "done"])
    try:
        lib.load("ask").generate_sync({}, model=model)
    finally:
        lib.close()
    assert model.requests[0].tools[0].output_schema is not None
    output = model.requests[1].messages[-1].content[0].tool_response.output
    assert set(output) >= {"temperature", "conditions", "humidity"}


def test_an_image_result_becomes_a_media_part(tmp_path):
    lib = _library(tmp_path, {"everything": everything()}, "---\ntools: [everything/get-tiny-image]\n---\nimg")
    model = ScriptedModel([tool_call("everything/get-tiny-image", {}), "seen"])
    try:
        lib.load("ask").generate_sync({}, model=model)
    finally:
        lib.close()
    response = model.requests[1].messages[-1].content[0].tool_response
    media = [p.media for p in response.content or () if p.media is not None]
    assert media and media[0].url.startswith("data:image/png;base64,")


def test_one_server_process_serves_every_run_of_a_library_and_close_stops_it(tmp_path):
    lib = _library(tmp_path, {"everything": everything(cwd=str(tmp_path))}, "---\ntools: [everything/echo]\n---\nsay")
    prompt = lib.load("ask")
    assert processes_in(tmp_path) == []  # loading a prompt starts nothing
    try:
        for word in ("one", "two", "three"):
            model = ScriptedModel([tool_call("everything/echo", {"message": word}), "ok"])
            prompt.generate_sync({}, model=model)
            assert model.requests[1].messages[-1].content[0].tool_response.output == f"Echo: {word}"
            assert len(processes_in(tmp_path)) == 1
    finally:
        lib.close()
    assert processes_in(tmp_path) == []


def test_a_tool_marked_for_approval_interrupts_and_runs_once_approved(tmp_path):
    lib = _library(tmp_path, {"everything": everything(approve=["echo"])}, "---\ntools: [everything/echo]\n---\nsay")
    prompt = lib.load("ask")
    try:
        first = prompt.generate_sync({}, model=ScriptedModel([tool_call("everything/echo", {"message": "hi"})]))
        assert first.finish_reason == "interrupted"
        interrupt = first.interrupts[0]
        assert interrupt.metadata["interrupt"] == {"mcpApproval": {"server": "everything", "tool": "echo"}}
        tool = lib.tool("everything/echo")
        model = ScriptedModel(["approved and echoed"])
        done = prompt.generate_sync({}, model=model, messages=first.messages, resume=Resume(restart=[tool.restart(interrupt)]))
        assert done.text == "approved and echoed"
        assert model.requests[0].messages[-1].content[0].tool_response.output == "Echo: hi"
    finally:
        lib.close()


def test_load_prompt_uses_the_servers_of_the_projects_pyproject(tmp_path, monkeypatch):
    import json as _json

    from dotprompt import default_library, load_prompt

    server = everything()
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "sum.prompt").write_text("---\ntools: [everything/get-sum]\n---\nadd 1 and 2")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dotprompt]\nprompts_dir = "prompts"\n\n[tool.dotprompt.mcp.servers.everything]\n'
        f"command = {_json.dumps(server['command'])}\nargs = {_json.dumps(server['args'])}\n")
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel([tool_call("everything/get-sum", {"a": 1, "b": 2}), "3"])
    try:
        assert load_prompt("sum", directory=tmp_path / "prompts")({}, model=model).text == "3"
    finally:
        default_library(tmp_path / "prompts").close()
    assert "3" in str(model.requests[1].messages[-1].content[0].tool_response.output)
