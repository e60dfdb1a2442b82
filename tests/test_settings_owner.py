"""Whose `[tool.dotprompt]` is obeyed: as git's `safe.directory`, a pyproject.toml another user owns
(one in a shared parent folder, /tmp...) is ignored with a warning, unless the user trusts its folder
(`DOTPROMPT_SAFE_DIRECTORIES`). Its tools module would run as this user, and `run` would send this
user's key to its `base_url`.

The files are given to another user with os.chown, which needs root (the suite runs as root)."""

from __future__ import annotations

import json
import logging
import os

import pytest

from dotprompt.settings import project_settings, provider_sections
from tests.cli_inprocess import cli
from tests.cli_process import dotprompt
from tests.providers.mock_server import Loopback

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a file to another user (os.chown) needs root")

OTHER_UID = 65534  # nobody


def _shared_parent(tmp_path, table: str):
    """tmp/pyproject.toml owned by another user; the user works in tmp/work, which has none."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.dotprompt]\n{table}", encoding="utf-8")
    os.chown(pyproject, OTHER_UID, OTHER_UID)
    work = tmp_path / "work"
    (work / "prompts").mkdir(parents=True)
    return pyproject, work


def test_a_pyproject_another_user_owns_is_ignored_with_a_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("DOTPROMPT_SAFE_DIRECTORIES", raising=False)
    pyproject, work = _shared_parent(tmp_path, 'prompts_dir = "elsewhere"\n')
    with caplog.at_level(logging.WARNING, logger="dotprompt.settings"):
        assert project_settings(work) == ({}, None)
    [warning] = [r.getMessage() for r in caplog.records]
    assert str(pyproject) in warning and f"uid {OTHER_UID}" in warning and "DOTPROMPT_SAFE_DIRECTORIES" in warning
    caplog.clear()
    assert project_settings(work) == ({}, None)
    assert caplog.records == []  # said once per file, not on every lookup


@pytest.mark.parametrize("trusted", ["{parent}", "{parent}/", "*", "/nowhere" + os.pathsep + "{parent}"])
def test_a_folder_the_user_trusts_is_obeyed(tmp_path, monkeypatch, trusted):
    _, work = _shared_parent(tmp_path, 'prompts_dir = "elsewhere"\n')
    monkeypatch.setenv("DOTPROMPT_SAFE_DIRECTORIES", trusted.format(parent=tmp_path))
    assert project_settings(work) == ({"prompts_dir": "elsewhere"}, tmp_path)


def test_trusting_a_subfolder_does_not_trust_its_parent(tmp_path, monkeypatch):
    _, work = _shared_parent(tmp_path, 'prompts_dir = "elsewhere"\n')
    monkeypatch.setenv("DOTPROMPT_SAFE_DIRECTORIES", str(work))
    assert project_settings(work) == ({}, None)


def test_under_sudo_the_invoking_users_files_are_trusted(tmp_path, monkeypatch):
    """As git: root running through sudo trusts the files of the user who ran sudo (SUDO_UID)."""
    monkeypatch.delenv("DOTPROMPT_SAFE_DIRECTORIES", raising=False)
    _, work = _shared_parent(tmp_path, 'prompts_dir = "elsewhere"\n')
    monkeypatch.setenv("SUDO_UID", str(OTHER_UID))
    assert project_settings(work)[0] == {"prompts_dir": "elsewhere"}


def test_its_tools_module_does_not_run(tmp_path, cli_env):
    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    _, work = _shared_parent(tmp_path, 'tools = ["evil.py"]\n')
    (work / "prompts" / "hi.prompt").write_text("hello", encoding="utf-8")
    done = cli("render", "hi", cwd=work, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "pyproject.toml" in done.stderr and "DOTPROMPT_SAFE_DIRECTORIES" in done.stderr


def _completion(request):
    return {"id": "c1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def test_run_does_not_send_the_users_key_to_its_base_url(tmp_path, cli_env):
    """A real process: the in-process runner forgets the modules a command first imports from outside this
    venv (the worktree's dependencies are another venv's), and httpx's connection modules must not be."""
    with Loopback(_completion) as planted, Loopback(_completion) as own:
        _, work = _shared_parent(tmp_path, f'[tool.dotprompt.providers.openai]\nbase_url = "{planted.url}/v1"\n')
        (work / "prompts" / "hi.prompt").write_text("---\nmodel: openai/gpt-4o-mini\n---\nhello", encoding="utf-8")
        env = {**cli_env, "OPENAI_API_KEY": "sk-users-own-key-123", "OPENAI_BASE_URL": f"{own.url}/v1",
               "XDG_DATA_HOME": str(tmp_path / "data")}
        env.pop("DOTPROMPT_SAFE_DIRECTORIES", None)
        done = dotprompt("run", "hi", cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert planted.requests == []
    assert [r.headers["authorization"] for r in own.requests] == ["Bearer sk-users-own-key-123"]
    assert json.loads(own.requests[0].content)["model"] == "gpt-4o-mini"


def test_the_users_own_and_roots_files_are_obeyed(tmp_path, monkeypatch):
    monkeypatch.delenv("DOTPROMPT_SAFE_DIRECTORIES", raising=False)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.providers.x]\nbase_url = "http://x"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert provider_sections() == {"x": {"base_url": "http://x"}}  # this user (root) owns it
