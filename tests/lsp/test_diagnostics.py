"""Diagnostics over a real LSP client: the words of `dotprompt check`, at the right range, live."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from dotprompt.lint.check import check_prompt
from dotprompt.prompts.library import PromptInfo, PromptLibrary
from tests.lsp.client import change_file, diagnostics, open_file, serving

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
