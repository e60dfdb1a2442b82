"""`[tool.dotprompt]` is read from the nearest pyproject.toml once per version of the file."""

from __future__ import annotations

import os

from dotprompt.settings import project_settings, provider_sections


def test_the_table_is_parsed_once_and_again_when_the_file_changes(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.dotprompt]\nprompts_dir = "a"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    first, root = project_settings(tmp_path / "sub")
    again, _ = project_settings(tmp_path / "sub")
    assert root == tmp_path and first == {"prompts_dir": "a"}
    assert again is first  # not parsed a second time
    pyproject.write_text('[tool.dotprompt]\nprompts_dir = "bb"\n[tool.dotprompt.providers.vllm]\nbase_url = "http://h"\n',
                         encoding="utf-8")
    os.utime(pyproject, ns=(1, 1))  # even a file whose clock went back is read again: its size changed
    changed, _ = project_settings(tmp_path)
    assert changed == {"prompts_dir": "bb", "providers": {"vllm": {"base_url": "http://h"}}}


def test_a_broken_file_is_an_empty_table_until_it_is_fixed(tmp_path, monkeypatch):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.dotprompt\n", encoding="utf-8")
    assert project_settings(tmp_path) == ({}, tmp_path)
    pyproject.write_text('[tool.dotprompt.providers.x]\nbase_url = "http://x"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert provider_sections() == {"x": {"base_url": "http://x"}}
