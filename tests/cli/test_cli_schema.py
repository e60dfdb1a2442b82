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
