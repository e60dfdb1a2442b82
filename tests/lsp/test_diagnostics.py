"""Diagnostics over a real LSP client: the words of `dotprompt check`, at the right range, live."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from dotprompt.lint.check import check_prompt
from dotprompt.prompts.library import PromptInfo, PromptLibrary
from tests.lsp.client import change_file, diagnostics, open_file, serving, start, until

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # each test starts a server process

TYPO = """---
input:
  schema:
    name: string
---
😀😀 日本 {{ nmae }}
"""


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "prompts"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return tmp_path


async def test_a_typo_is_reported_with_checks_words_at_its_utf16_range(tmp_path):
    root = _folder(tmp_path, {"greet.prompt": TYPO})
    path = root / "prompts" / "greet.prompt"
    expected = check_prompt(PromptLibrary(root / "prompts"), PromptInfo("greet", None, str(path)))
    async with serving(root) as client:
        found = await diagnostics(client, open_file(client, path))
    assert [d.message for d in found] == [d.message for d in expected]
    assert "`nmae`" in found[0].message and found[0].severity == types.DiagnosticSeverity.Error
    # 😀 is two UTF-16 code units, 日 and 本 one each: `nmae` starts at unit 11 of line 6
    assert found[0].range == types.Range(types.Position(5, 11), types.Position(5, 15))
    assert found[0].source == "dotprompt"
    assert [d.code for d in found] == [d.code for d in expected] == ["undeclared-variable"]  # check's codes


async def test_the_server_honours_the_files_ignore_line_in_unsaved_text(tmp_path):
    root = _folder(tmp_path, {"p.prompt": "---\nfoo: 1\n---\nhi\n"})
    path = root / "prompts" / "p.prompt"
    async with serving(root) as client:
        uri = open_file(client, path)
        assert [d.code for d in await diagnostics(client, uri)] == ["unknown-key"]
        change_file(client, uri, "# dotprompt: ignore[unknown-key]\n---\nfoo: 1\n---\nhi\n", 2)
        assert await diagnostics(client, uri) == []


async def test_positions_follow_the_negotiated_encoding(tmp_path):
    root = _folder(tmp_path, {"greet.prompt": TYPO})
    async with serving(root, encodings=["utf-8"]) as client:
        found = await diagnostics(client, open_file(client, root / "prompts" / "greet.prompt"))
    # in UTF-8, 😀 is 4 bytes and 日, 本 3 each: 4+4+1+3+3+1+3
    assert found[0].range.start == types.Position(5, 19)


async def test_unsaved_edits_are_checked_and_a_fix_clears_the_diagnostic(tmp_path):
    root = _folder(tmp_path, {"greet.prompt": TYPO})
    path = root / "prompts" / "greet.prompt"
    async with serving(root) as client:
        uri = open_file(client, path)
        assert len(await diagnostics(client, uri)) == 1
        change_file(client, uri, TYPO.replace("nmae", "name"), 2)
        assert await diagnostics(client, uri) == []
        change_file(client, uri, TYPO.replace("nmae", "custmer"), 3)
        again = await diagnostics(client, uri)
    assert [d.message.split(" (")[0] for d in again] == ["template variable `custmer` is not declared in input.schema"]


async def test_an_analysis_past_its_time_limit_is_stopped_and_reported_and_the_server_stays_up(tmp_path):
    # a template nested deep enough to take the checker a while: with a tiny limit it is stopped
    deep = "---\ninput:\n  schema:\n    n: integer\n---\n" + "{% if n %}" * 300 + "x" + "{% endif %}" * 300 + "\n"
    root = _folder(tmp_path, {"deep.prompt": deep, "greet.prompt": TYPO})
    async with serving(root, options={"analysisTimeout": 0.001}) as client:
        found = await diagnostics(client, open_file(client, root / "prompts" / "deep.prompt"))
        assert len(found) == 1 and found[0].message.startswith("analysis stopped after"), found
        assert "analysisTimeout" in found[0].message and "dotprompt check" in found[0].message
        # the worker is free again: the next file is analysed (and stopped too, at this limit)
        assert await diagnostics(client, open_file(client, root / "prompts" / "greet.prompt"))


async def test_edits_faster_than_analysis_end_with_the_newest_texts_diagnostics(tmp_path):
    root = _folder(tmp_path, {"greet.prompt": TYPO})
    async with serving(root, options={"debounceMs": 0}) as client:
        uri = open_file(client, root / "prompts" / "greet.prompt")
        assert await diagnostics(client, uri)
        for version in range(2, 60):
            change_file(client, uri, TYPO.replace("nmae", f"v{version}"), version)
        change_file(client, uri, TYPO.replace("nmae", "name"), 60)
        await until(client, uri, lambda found: found == [])
        change_file(client, uri, TYPO.replace("nmae", "last"), 61)
        found = await until(client, uri, lambda found: len(found) == 1)
        await asyncio.sleep(0.5)  # nothing older arrives after the newest text's diagnostics
        assert list(client.diagnostics[uri]) == found
    assert "`last`" in found[0].message


async def test_a_partial_changed_on_disk_rechecks_its_includers(tmp_path):
    including = "---\ninput:\n  schema:\n    name: string\n---\n{% include 'header' %}\nHi {{ name }}\n"
    root = _folder(tmp_path, {"greet.prompt": including, "_header.prompt": "Header\n"})
    partial = root / "prompts" / "_header.prompt"
    async with serving(root) as client:
        uri = open_file(client, root / "prompts" / "greet.prompt")
        assert await diagnostics(client, uri) == []
        partial.write_text("{% if %}broken\n", encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            [types.FileEvent(partial.as_uri(), types.FileChangeType.Changed)]))
        found = await diagnostics(client, uri)
        assert found and all(d.severity == types.DiagnosticSeverity.Error for d in found)
        assert found[0].range.start.line == 5 and found[0].message.startswith("_header.prompt:1: ")
        partial_found = await diagnostics(client, partial.as_uri())
        assert partial_found, "the partial itself is checked too"


async def test_project_settings_are_honoured(tmp_path):
    # prompts_dir from pyproject.toml: the prompts live in `src/prompts`, and a partial there resolves
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "src/prompts"\n', encoding="utf-8")
    folder = tmp_path / "src" / "prompts"
    folder.mkdir(parents=True)
    (folder / "_header.prompt").write_text("Header\n", encoding="utf-8")
    (folder / "greet.prompt").write_text("{% include 'header' %}\n{% include 'missing' %}\n", encoding="utf-8")
    async with serving(tmp_path) as client:
        found = await diagnostics(client, open_file(client, folder / "greet.prompt"))
    assert len(found) == 1 and "missing" in found[0].message and "header" not in found[0].message.split("(")[0]


async def test_a_server_killed_is_restarted_by_the_client_and_serves_again(tmp_path):
    root = _folder(tmp_path, {"greet.prompt": TYPO})
    client = await start(root)
    try:
        client._server.kill()  # the editor's server dies (OOM killer, a crash)
        await client._server.wait()
    finally:
        await client.stop()
    async with serving(root) as again:  # the client starts a new one
        found = await diagnostics(again, open_file(again, root / "prompts" / "greet.prompt"))
    assert len(found) == 1 and "`nmae`" in found[0].message


async def test_a_test_file_is_checked_as_check_checks_it(tmp_path):
    from dotprompt.lint.check import check_test_file

    root = _folder(tmp_path, {"greet.prompt": TYPO.replace("nmae", "name"),
                              "greet.test.yaml": "cases:\n  - name: wrong\n    input: {name: 7}\n"})
    path = root / "prompts" / "greet.test.yaml"
    expected = check_test_file(PromptLibrary(root / "prompts"), path)
    async with serving(root) as client:
        found = await diagnostics(client, open_file(client, path))
    assert expected and [d.message for d in found] == [d.message for d in expected]
    assert found[0].range.start.line == expected[0].line - 1
