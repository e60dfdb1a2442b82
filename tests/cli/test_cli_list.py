"""`dotprompt list`, run as a real subprocess."""

from __future__ import annotations

from tests.cli_process import run


def test_list_command(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "list", "prompts", env=cli_env)
    labels = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert labels == ["assistant", "billing/refund_reason", "classify", "extract", "extract.fast", "extract.worse", "summarize"]
