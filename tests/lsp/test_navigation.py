"""Definition, references, rename and code actions over a real LSP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.client import WAIT, at, diagnostics, open_file, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # each test starts a server process

GREET = """---
input:
  schema:
    customer:
      name: string
    count?: integer
---
{% include 'header' %}
Hello {{ customer.name }}, {{ count }} items. {% for c in customer %}{{ c }}{% endfor %}
"""
TOOLS_PY = '''from dotprompt import tool


@tool
def lookup(sku: str) -> str:
    """Find a product."""
    return sku


class Order:
    pass
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["shoptools"]\nschemas = ["shoptools"]\n',
                                             encoding="utf-8")
    (tmp_path / "shoptools.py").write_text(TOOLS_PY, encoding="utf-8")
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "greet.prompt").write_text(GREET, encoding="utf-8")
    (folder / "greet.short.prompt").write_text("---\nvariant: short\n---\n{% include 'header' %}Hi\n", encoding="utf-8")
    (folder / "_header.prompt").write_text("Welcome.\n", encoding="utf-8")
    (folder / "tooly.prompt").write_text("---\ntools: [lookup]\noutput:\n  schema: Order\n---\nGo\n", encoding="utf-8")
    return tmp_path


def _id(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(path.as_uri())


async def test_definition_goes_to_the_partial_the_tool_the_schema_class_and_the_base_prompt(tmp_path):
    root = _project(tmp_path)
    folder = root / "prompts"
    async with serving(root) as client:
        open_file(client, folder / "greet.prompt")
        open_file(client, folder / "tooly.prompt")
        open_file(client, folder / "greet.short.prompt")

        async def where(path: Path, needle: str, offset: int = 1) -> list[tuple[str, int]]:
            position = at(path.read_text(encoding="utf-8"), needle)
            position.character += offset
            found = await asyncio.wait_for(client.text_document_definition_async(
                types.DefinitionParams(_id(path), position)), WAIT)
            return [(Path(types_uri(loc.uri)).name, loc.range.start.line) for loc in found or []]

        partial = await where(folder / "greet.prompt", "header'")
        tool = await where(folder / "tooly.prompt", "lookup")
        schema = await where(folder / "tooly.prompt", "Order")
        base = await where(folder / "greet.short.prompt", "short")
    assert partial == [("_header.prompt", 0)]
    assert tool == [("shoptools.py", 4)]  # the `def lookup` line (zero-based)
    assert schema == [("shoptools.py", 9)]
    assert base == [("greet.prompt", 0)]


def types_uri(uri: str) -> str:
    return uri.removeprefix("file://")


async def test_references_of_a_partial_are_every_include_in_the_folder(tmp_path):
    root = _project(tmp_path)
    folder = root / "prompts"
    async with serving(root) as client:
        open_file(client, folder / "_header.prompt")
        found = await asyncio.wait_for(client.text_document_references_async(types.ReferenceParams(
            context=types.ReferenceContext(True), text_document=_id(folder / "_header.prompt"),
            position=types.Position(0, 0))), WAIT)
    assert sorted((Path(types_uri(loc.uri)).name, loc.range.start.line, loc.range.start.character)
                  for loc in found) == [("greet.prompt", 7, 12), ("greet.short.prompt", 3, 12)]


async def test_rename_an_input_variable_across_schema_and_template_and_a_partial_across_the_folder(tmp_path):
    root = _project(tmp_path)
    folder = root / "prompts"
    async with serving(root) as client:
        open_file(client, folder / "greet.prompt")
        position = at(GREET, "customer.name")
        edit = await asyncio.wait_for(client.text_document_rename_async(types.RenameParams(
            _id(folder / "greet.prompt"), position, "client")), WAIT)
        partial = await asyncio.wait_for(client.text_document_rename_async(types.RenameParams(
            _id(folder / "greet.prompt"), at(GREET, "header'"), "banner")), WAIT)
        with pytest.raises(Exception, match="no variable name"):
            await asyncio.wait_for(client.text_document_rename_async(types.RenameParams(
                _id(folder / "greet.prompt"), position, "not a name")), WAIT)
    (change,) = edit.document_changes
    lines = GREET.split("\n")
    renamed = list(lines)
    for text_edit in sorted(change.edits, key=lambda e: (e.range.start.line, -e.range.start.character)):
        line = renamed[text_edit.range.start.line]
        renamed[text_edit.range.start.line] = (line[:text_edit.range.start.character] + text_edit.new_text
                                               + line[text_edit.range.end.character:])
    assert renamed[3] == "    client:" and renamed[5] == "    count?: integer"
    assert renamed[8] == "Hello {{ client.name }}, {{ count }} items. {% for c in client %}{{ c }}{% endfor %}"
    files = {Path(types_uri(c.text_document.uri)).name for c in partial.document_changes if hasattr(c, "edits")}
    moves = [c for c in partial.document_changes if isinstance(c, types.RenameFile)]
    assert files == {"greet.prompt", "greet.short.prompt"}
    assert [(Path(types_uri(m.old_uri)).name, Path(types_uri(m.new_uri)).name) for m in moves] == [
        ("_header.prompt", "_banner.prompt")]


async def test_code_actions_apply_the_did_you_mean_declare_the_variable_and_convert_handlebars(tmp_path):
    root = _project(tmp_path)
    folder = root / "prompts"
    typo = GREET.replace("{{ count }}", "{{ cuont }}")
    (folder / "typo.prompt").write_text(typo, encoding="utf-8")
    handlebars = "---\ninput:\n  schema:\n    items(array): string\n---\n{{#each items}}- {{this}}\n{{/each}}\n"
    (folder / "hb.prompt").write_text(handlebars, encoding="utf-8")
    async with serving(root) as client:
        uri = open_file(client, folder / "typo.prompt")
        found = await diagnostics(client, uri)
        actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            _id(folder / "typo.prompt"), found[0].range, types.CodeActionContext(found))), WAIT)
        open_file(client, folder / "hb.prompt")
        whole = types.Range(types.Position(0, 0), types.Position(0, 0))
        converts = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            _id(folder / "hb.prompt"), whole, types.CodeActionContext([]))), WAIT)
    titles = [a.title for a in actions]
    assert titles == ["Change to `count`", "Declare `cuont` in input.schema"]
    fix = actions[0].edit.document_changes[0].edits[0]
    assert fix.new_text == "count" and fix.range == found[0].range
    declare = actions[1].edit.document_changes[0].edits[0]
    assert declare.new_text == "    cuont: string\n" and declare.range.start == types.Position(3, 0)
    assert [a.title for a in converts] == ["Convert this Handlebars file to jinja2"]
    converted = converts[0].edit.document_changes[0].edits[0].new_text
    assert "{% for" in converted and "{{#each" not in converted
