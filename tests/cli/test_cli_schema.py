"""`dotprompt schema`, run as a real subprocess."""

from __future__ import annotations

import json

from tests.cli_process import run


def test_schema_command(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "schema", "classify", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["enum"] == ["billing", "bug", "feature_request", "account", "other"]
    done = run(dotprompt_cmd, "schema", "extract", "--input", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["required"] == ["text"]
    done = run(dotprompt_cmd, "schema", "summarize", "--dir", "prompts", env=cli_env)
    assert done.returncode == 2 and "declares no output schema" in done.stderr
