"""`dotprompt list`, run in-process (tests/cli_inprocess.py)."""

from __future__ import annotations

from tests.cli_inprocess import cli


def test_list_command(cli_env):
    done = cli("list", "prompts", env=cli_env)
    labels = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert labels == ["assistant", "billing/refund_reason", "classify", "extract", "extract.fast", "extract.fewshot",
                      "extract.ordered", "extract.tight", "extract.tight_fewshot", "extract.worse", "summarize"]
