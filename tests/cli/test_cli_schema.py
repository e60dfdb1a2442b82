"""`dotprompt schema`, run in-process (tests/cli_inprocess.py)."""

from __future__ import annotations

import json

from tests.cli_inprocess import cli


def test_schema_command(cli_env):
    done = cli("schema", "classify", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["enum"] == ["billing", "bug", "feature_request", "account", "other"]
    done = cli("schema", "extract", "--input", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["required"] == ["text"]
    done = cli("schema", "summarize", "--dir", "prompts", env=cli_env)
    assert done.returncode == 2 and "declares no output schema" in done.stderr


def test_schema_of_a_named_schema_nothing_defines_names_it(cli_env, tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "invoice.prompt").write_text("---\noutput:\n  schema: Invoice\n---\nRead it.\n", encoding="utf-8")
    done = cli("schema", "invoice", "--dir", str(folder), env=cli_env)
    assert done.returncode == 1, done.stderr
    assert "invoice.prompt:3:3" in done.stderr and "schema `Invoice` (in output.schema)" in done.stderr
    assert "[tool.dotprompt] schemas" in done.stderr and "declares no" not in done.stderr
    done = cli("schema", "invoice", "--input", "--dir", str(folder), env=cli_env)
    assert done.returncode == 2 and "declares no input schema" in done.stderr
