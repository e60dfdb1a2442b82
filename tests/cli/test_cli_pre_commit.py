"""`.pre-commit-hooks.yaml`: a well-formed pre-commit manifest whose hooks run the real CLI on prompt files."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli_process import run
from tests.conftest import ROOT

HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
REQUIRED = {"id", "name", "entry", "language"}
# The keys pre-commit reads from a manifest (pre-commit's clientlib MANIFEST_HOOK_DICT).
KNOWN = REQUIRED | {"alias", "files", "exclude", "types", "types_or", "exclude_types", "additional_dependencies", "args",
                    "always_run", "fail_fast", "pass_filenames", "description", "language_version", "log_file",
                    "minimum_pre_commit_version", "require_serial", "stages", "verbose"}


CHECKS = [hook for hook in HOOKS if hook["id"].startswith("dotprompt-check")]


def test_manifest_is_well_formed():
    assert isinstance(HOOKS, list)
    assert {h["id"] for h in HOOKS} == {"dotprompt-check", "dotprompt-check-strict", "dotprompt-types"}
    for hook in HOOKS:
        assert REQUIRED <= set(hook) <= KNOWN, hook
        assert hook["language"] == "python" and hook["pass_filenames"] is False
    for hook in CHECKS:
        assert shlex.split(hook["entry"])[:2] == ["dotprompt", "check"]
    [types] = [hook for hook in HOOKS if hook["id"] == "dotprompt-types"]
    assert shlex.split(types["entry"]) == ["dotprompt", "types", "--check"]
    assert re.search(types["files"], "prompts/extract.prompt") and not re.search(types["files"], "x.test.yaml")


def test_hooks_fire_on_prompt_and_test_files_only():
    for hook in CHECKS:
        files = re.compile(hook["files"])
        assert files.search("prompts/extract.prompt") and files.search("prompts/billing/_policy.prompt")
        assert files.search("prompts/extract.test.yaml")
        assert not files.search("README.md") and not files.search("prompts/__recordings__/extract.jsonl")
        assert not files.search("notes.prompt.md")


@pytest.mark.slow
def test_hook_entries_run_the_real_cli(tmp_path, cli_env):
    # pre-commit runs the entry from the repository root with the hook's venv on PATH.
    script = shutil.which("dotprompt", path=str(Path(sys.executable).parent))
    assert script is not None
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "ok.prompt").write_text("---\nmodle: x\n---\nhello")
    results = {}
    for hook in CHECKS:
        command = [script, *shlex.split(hook["entry"])[1:]]
        results[hook["id"]] = run(command, cwd=tmp_path, env=cli_env)
    assert results["dotprompt-check"].returncode == 0  # an unknown key is a warning
    assert "unknown key `modle`" in results["dotprompt-check"].stdout
    assert results["dotprompt-check-strict"].returncode == 1
    (tmp_path / "prompts" / "bad.prompt").write_text("---\nmaxTurns: 0\n---\nx")
    assert run([script, "check"], cwd=tmp_path, env=cli_env).returncode == 1
