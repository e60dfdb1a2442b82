"""The folder's MCP server driven by the SDK's own client, in process: what each list, get and call answers."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import anyio
import httpx
import mcp_types as mcp
from mcp import Client
from mcp.shared.exceptions import MCPError

from dotprompt.mcpserve.calls import MAX_ARGUMENT_CHARS
from dotprompt.mcpserve.messages import ROLE_META
from dotprompt.mcpserve.server import create_server
from dotprompt.prompts.library import PromptLibrary
from tests.mcpserve.project import PNG
from tests.providers.mock_server import Loopback, fixture


def talk(folder: Path, body):
    """`body(client)` against a fresh server on `folder`; its answer."""
    async def main():
        async with Client(create_server(PromptLibrary(folder))) as client:
            return await body(client)
    return anyio.run(main)


def refusal(folder: Path, body) -> MCPError:
    """The protocol error `body(client)` gets (caught inside the client's task group)."""
    async def main():
        async with Client(create_server(PromptLibrary(folder))) as client:
            try:
                await body(client)
            except MCPError as exc:
                return exc
        raise AssertionError("no protocol error")
    return anyio.run(main)


def test_every_prompt_that_loads_is_listed_with_its_arguments(folder):
    listed = talk(folder, lambda c: c.list_prompts())
    by_name = {p.name: p for p in listed.prompts}
    assert sorted(by_name) == ["letters", "look", "remote", "yesno", "yesno.formal"]  # broken.prompt left out
    yesno = by_name["yesno"]
    assert yesno.description == "Says yes or no."
    arguments = {a.name: a for a in yesno.arguments}
    assert list(arguments) == ["answer", "count", "tags"]
    assert arguments["answer"].required and not arguments["count"].required
    assert arguments["answer"].description == "what to say"
    assert "JSON" in arguments["count"].description and "how many times" in arguments["count"].description


def test_a_prompt_renders_with_its_string_arguments_json_decoded_where_the_schema_is_no_string(folder):
    got = talk(folder, lambda c: c.get_prompt("yesno", {"answer": "yes", "count": "3", "tags": '["a"]'}))
    assert [m.role for m in got.messages] == ["user"]
    assert json.loads(got.messages[0].content.text) == {"answer": "yes", "count": 3}


def test_an_argument_that_is_not_the_json_its_schema_wants_is_an_error_naming_it(folder):
    caught = refusal(folder, lambda c: c.get_prompt("yesno", {"answer": "yes", "count": "three"}))
    assert "'count'" in caught.message and "integer" in caught.message and "yesno" in caught.message


def test_a_missing_required_argument_is_the_input_schemas_error(folder):
    caught = refusal(folder, lambda c: c.get_prompt("yesno", {}))
    assert "answer" in caught.message and "yesno" in caught.message


def test_system_text_and_an_inline_image_become_mcp_content(folder):
    got = talk(folder, lambda c: c.get_prompt("look", {"question": "what is it?"}))
    kinds = [(m.role, type(m.content).__name__) for m in got.messages]
    assert kinds == [("user", "TextContent"), ("user", "TextContent"), ("user", "ImageContent")]
    system, question, image = (m.content for m in got.messages)
    assert system.text.strip() == "You describe pictures." and system.meta == {ROLE_META: "system"}
    assert question.text.strip() == "what is it?" and question.meta is None
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == base64.b64decode(PNG)


def test_a_variant_and_an_unknown_prompt(folder):
    got = talk(folder, lambda c: c.get_prompt("yesno.formal", {"answer": "no"}))
    assert json.loads(got.messages[0].content.text) == {"answer": "certainly no"}
    assert "no prompt named 'nope'" in refusal(folder, lambda c: c.get_prompt("nope", {})).message


def test_a_broken_file_asked_for_by_name_says_why_it_does_not_load(folder):
    caught = refusal(folder, lambda c: c.get_prompt("broken", {}))
    assert "does not load" in caught.message and "broken.prompt" in caught.message


def test_each_prompt_is_a_tool_with_its_schemas_beside_check_and_render(folder):
    tools = {t.name: t for t in talk(folder, lambda c: c.list_tools()).tools}
    assert sorted(tools) == ["check", "letters", "look", "remote", "render", "yesno", "yesno.formal"]
    yesno = tools["yesno"]
    assert yesno.input_schema["required"] == ["answer"] and "count" in yesno.input_schema["properties"]
    assert yesno.output_schema["properties"]["answer"] == {"type": "string"}
    assert tools["look"].output_schema is None  # text output: no schema
    letters = tools["letters"].output_schema  # a list: wrapped in an object, as MCP wants
    assert letters["required"] == ["result"] and letters["properties"]["result"]["type"] == "array"
    assert "Says yes or no." in yesno.description and "echo" in yesno.description


def test_listed_schemas_have_no_type_list(folder):
    """Picoschema's optional fields (`count?: integer`) are `["integer", "null"]` in the prompt's schema; the
    listing writes them as single-type `anyOf` branches (dotprompt.mcpserve.tools.single_types)."""
    tools = talk(folder, lambda c: c.list_tools()).tools
    for tool in tools:
        for schema in (tool.input_schema, tool.output_schema):
            assert '"type": [' not in json.dumps(schema), (tool.name, schema)
    yesno = next(t for t in tools if t.name == "yesno")
    assert yesno.input_schema["properties"]["count"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def test_calling_a_prompts_tool_runs_it_and_returns_the_validated_output(folder):
    result = talk(folder, lambda c: c.call_tool("yesno", {"answer": "yes", "count": 2}))
    assert not result.is_error
    assert result.structured_content == {"answer": "yes", "count": 2}
    assert json.loads(result.content[0].text) == {"answer": "yes", "count": 2}  # for clients that read text only
    letters = talk(folder, lambda c: c.call_tool("letters", {"word": "ab"}))
    assert letters.structured_content == {"result": [{"letter": "a"}, {"letter": "b"}]}


def test_a_tool_input_the_schema_refuses_is_an_error_result_naming_the_prompt(folder):
    result = talk(folder, lambda c: c.call_tool("yesno", {"answer": 5}))
    assert result.is_error and "yesno" in result.content[0].text and "answer" in result.content[0].text


def test_a_models_error_is_an_error_result_naming_the_prompt(folder, monkeypatch):
    with Loopback(lambda request: fixture("openai_error_400.json", status=400)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-0123456789abcdef")
        result = talk(folder, lambda c: c.call_tool("remote", {"question": "why?"}))
        assert server.requests, "the model was called"
    assert result.is_error
    text = result.content[0].text
    assert "'remote'" in text and "400" in text and "sk-test-secret-0123456789abcdef" not in text


def test_check_reports_the_broken_file_and_render_shows_what_would_be_sent(folder):
    checked = talk(folder, lambda c: c.call_tool("check", {}))
    assert not checked.is_error and checked.structured_content["errors"] >= 1
    broken = [d for d in checked.structured_content["diagnostics"] if d["path"] == "broken.prompt"]
    assert broken and broken[0]["line"] and broken[0]["level"] == "error"
    assert "broken.prompt:" in checked.content[0].text
    one = talk(folder, lambda c: c.call_tool("check", {"prompt": "yesno"}))
    assert one.structured_content["diagnostics"] == []
    rendered = talk(folder, lambda c: c.call_tool("render", {"prompt": "yesno", "input": {"answer": "hi"}}))
    assert rendered.structured_content["model"] == "echo"
    assert rendered.structured_content["messages"] == [{"role": "user", "content": [{"text": '{"answer": "hi"}'}]}]


def test_render_and_check_of_an_unknown_prompt_suggest_the_nearest(folder):
    for tool in ("render", "check"):
        result = talk(folder, lambda c, tool=tool: c.call_tool(tool, {"prompt": "yesnoo"}))
        assert result.is_error and "did you mean `yesno`" in result.content[0].text


def test_an_unknown_tool_is_a_protocol_error(folder):
    assert "no tool named 'nope'" in refusal(folder, lambda c: c.call_tool("nope", {})).message


def test_a_huge_input_is_refused_at_once_and_the_server_still_answers(folder):
    async def body(client):
        huge = await client.call_tool("yesno", {"answer": "x" * (MAX_ARGUMENT_CHARS + 10)})
        after = await client.call_tool("yesno", {"answer": "ok"})
        return huge, after

    huge, after = talk(folder, body)
    assert huge.is_error and "over the limit" in huge.content[0].text
    assert after.structured_content == {"answer": "ok"}


def test_a_file_added_or_broken_while_serving_shows_at_the_next_list(folder):
    async def body(client):
        before = {p.name for p in (await client.list_prompts()).prompts}
        (folder / "fresh.prompt").write_text("---\nmodel: echo\n---\nhello\n")
        (folder / "letters.prompt").write_text("---\ninput: [\n---\n")
        after = {p.name for p in (await client.list_prompts()).prompts}
        return before, after

    before, after = talk(folder, body)
    assert "fresh" not in before and "fresh" in after
    assert "letters" in before and "letters" not in after


def test_tool_names_keep_to_mcps_characters_and_stay_apart_from_the_built_in_tools(tmp_path):
    folder = tmp_path / "prompts"
    (folder / "team").mkdir(parents=True)
    for name in ("check.prompt", "team/reply.prompt", "team__reply.prompt"):
        (folder / name).write_text("---\nmodel: echo\n---\nhi\n")
    tools = [t.name for t in talk(folder, lambda c: c.list_tools()).tools]
    assert sorted(tools) == ["check", "check_prompt", "render", "team__reply", "team__reply_prompt"]
    result = talk(folder, lambda c: c.call_tool("check_prompt", {}))
    assert result.content[0].text.strip() == "user: hi" or "hi" in result.content[0].text


def test_the_http_error_type_stays_httpx():  # the loopback model server answers with httpx responses
    assert isinstance(fixture("openai_error_400.json", status=400), httpx.Response)
    assert mcp.INVALID_PARAMS == -32602
