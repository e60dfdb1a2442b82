"""Hostile files against every request: each answers (or errs) within the time limit and the server
stays up. The server is a child process with a memory limit (tests/lsp/client.py)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.lsp.client import WAIT, diagnostics, open_file, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

LAUGHS = "---\n" + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]\n"
    for i in range(1, 9)) + "---\n{{ a8 }}\n"
DEEP_SCHEMA = "---\ninput:\n  schema:\n" + "".join("  " * (i + 2) + f"f{i}(object):\n" for i in range(200)) + "---\n{{ f0. }}\n"
HUGE_RENDER = "---\ninput:\n  schema:\n    n: integer\n  default:\n    n: 1\n---\n" + \
    "{% for a in range(100000) %}{% for b in range(100000) %}xxxxxxxxxx{% endfor %}{% endfor %}\n"
LONG_LINE = "---\ninput:\n  schema:\n    x: string\n---\n" + "{{ x }} " * 200_000 + "\n"
HOSTILE = {"laughs.prompt": LAUGHS, "deep.prompt": DEEP_SCHEMA, "huge.prompt": HUGE_RENDER, "long.prompt": LONG_LINE,
           "_loop.prompt": "{% include 'loop' %}\n", "selfish.prompt": "{% include 'loop' %}\n"}


async def test_hostile_files_get_answers_and_the_server_stays_up(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    for name, text in HOSTILE.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "fine.prompt").write_text("---\ninput:\n  schema:\n    name: string\n---\n{{ nmae }}\n", encoding="utf-8")
    async with serving(tmp_path) as client:
        for name in HOSTILE:
            path = folder / name
            uri = open_file(client, path)
            await diagnostics(client, uri, wait=WAIT * 2)  # each is checked, stopped or reported: never silent
            document = types.TextDocumentIdentifier(uri)
            last = len(path.read_text(encoding="utf-8").split("\n")) - 2
            position = types.Position(max(last, 0), 5)
            requests = [
                client.text_document_completion_async(types.CompletionParams(document, position)),
                client.text_document_hover_async(types.HoverParams(document, position)),
                client.text_document_definition_async(types.DefinitionParams(document, position)),
                client.text_document_references_async(types.ReferenceParams(
                    context=types.ReferenceContext(True), text_document=document, position=position)),
                client.workspace_execute_command_async(types.ExecuteCommandParams("dotprompt.renderPreview", [uri])),
            ]
            for request in requests:
                try:
                    await asyncio.wait_for(request, WAIT)
                except TimeoutError:
                    raise AssertionError(f"{name}: no answer within {WAIT} s") from None
                except Exception as exc:  # an error answer is an answer; a dead server is not
                    assert "exited" not in str(exc), f"{name}: {exc}"
        preview = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            "dotprompt.renderPreview", [(folder / "huge.prompt").as_uri()])), WAIT)
        found = await diagnostics(client, open_file(client, folder / "fine.prompt"))
    error = preview.get("error") or preview["renders"][0].get("error", "")
    assert any(word in error.lower() for word in ("budget", "limit", "stopped")), preview
    assert len(found) == 1 and "`nmae`" in found[0].message  # the server is still up and checking
