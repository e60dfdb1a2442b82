"""Completion, hover and the render preview over a real LSP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.client import WAIT, at, open_file, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # each test starts a server process

ORDER = """---
model: openai/gpt-4o
input:
  schema:
    customer:
      name: string, the customer's full name
      email: string
    count?: integer, how many items
  default:
    count: 3
output:
  format: json
tools: [lookup]
---
{{ role "system" }}
{% include 'header' %}
日本 😀 Hello {{ customer.name }}, you ordered {{ count }} things.
"""
TESTS = """cases:
  - name: alice
    input: {customer: {name: Alice, email: a@example.com}}
  - name: bob
    input: {customer: {name: Bob, email: b@example.com}, count: 7}
"""


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "order.prompt").write_text(ORDER.replace('{{ role "system" }}\n', ""), encoding="utf-8")
    (folder / "order.test.yaml").write_text(TESTS, encoding="utf-8")
    (folder / "_header.prompt").write_text("Welcome to the shop.\n", encoding="utf-8")
    (folder / "_footer.prompt").write_text("Bye.\n", encoding="utf-8")
    return tmp_path


async def _complete(client, uri: str, text: str, line: int, prefix: str) -> list[str]:
    lines = text.split("\n")
    character = len(lines[line][: lines[line].index(prefix) + len(prefix)].encode("utf-16-le")) // 2
    found = await asyncio.wait_for(client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), types.Position(line, character))), WAIT)
    items = found.items if isinstance(found, types.CompletionList) else found
    return [item.label for item in items or []]


async def test_completion_offers_keys_values_variables_fields_partials_and_filters(tmp_path):
    root = _project(tmp_path)
    path = root / "prompts" / "order.prompt"
    text = path.read_text(encoding="utf-8")
    async with serving(root) as client:
        uri = open_file(client, path, text)
        edited = text.replace("{{ customer.name }}", "{{ customer. }}").replace("{{ count }}", "{{ count | up }}")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri), [types.TextDocumentContentChangeWholeDocument(edited)]))
        body = edited.split("\n").index("日本 😀 Hello {{ customer. }}, you ordered {{ count | up }} things.")
        fields = await _complete(client, uri, edited, body, "{{ customer.")
        variables = await _complete(client, uri, edited, body, "Hello {{ ")
        filters = await _complete(client, uri, edited, body, "{{ count | ")
        partials = await _complete(client, uri, edited, body - 1, "{% include '")
        keys = await _complete(client, uri, edited, 1, "")
        formats = await _complete(client, uri, edited, 11, "  format: ")
        models = await _complete(client, uri, edited, 1, "model: ")
    assert fields == ["name", "email"]  # `customer.` offers the nested fields, in schema order
    assert variables[:2] == ["customer", "count"] and "role" in variables
    assert {"upper", "json", "length"} <= set(filters)
    assert partials == ["footer", "header"]
    assert {"model", "input", "output", "tools", "use"} <= set(keys)
    assert {"json", "jsonl", "text", "enum"} <= set(formats)
    assert "echo" in models and "openai/" in models


async def test_hover_shows_a_variables_type_description_and_default_and_a_partials_text(tmp_path):
    root = _project(tmp_path)
    path = root / "prompts" / "order.prompt"
    text = path.read_text(encoding="utf-8")
    async with serving(root) as client:
        uri = open_file(client, path, text)

        async def hover_at(needle: str, offset: int = 0) -> str | None:
            position = at(text, needle)
            position.character += offset
            found = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
                types.TextDocumentIdentifier(uri), position)), WAIT)
            return found.contents.value if found is not None else None

        name = await hover_at("customer.name }}", len("customer.n"))
        count = await hover_at("count }}")
        partial = await hover_at("header'")
        field = await hover_at("email: string")
        model = await hover_at("openai/gpt-4o", 3)
        nothing = await hover_at("Hello")
    assert name is not None and name.startswith("**customer.name**: string") and "full name" in name
    assert count is not None and "how many items" in count and "default: 3" in count
    assert partial is not None and "Welcome to the shop." in partial
    assert field is not None and field.startswith("**email**: string")
    assert model is not None and "provider openai" in model and "OPENAI\\_API\\_KEY" in model
    assert nothing is None


async def test_the_render_preview_renders_each_test_cases_input(tmp_path):
    root = _project(tmp_path)
    path = root / "prompts" / "order.prompt"
    async with serving(root) as client:
        open_file(client, path)
        found = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            "dotprompt.renderPreview", [path.as_uri()])), WAIT)
        (root / "prompts" / "order.test.yaml").unlink()
        defaults = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            "dotprompt.renderPreview", [path.as_uri()])), WAIT)
    assert found["prompt"] == "order" and [r["case"] for r in found["renders"]] == ["alice", "bob"]
    texts = [r["rendered"]["messages"][0]["content"][0]["text"] for r in found["renders"]]
    assert "Welcome to the shop." in texts[0] and "Hello Alice, you ordered 3 things." in texts[0]
    assert "Hello Bob, you ordered 7 things." in texts[1]
    assert defaults["renders"][0]["case"] is None and "error" in defaults["renders"][0]  # customer is required
