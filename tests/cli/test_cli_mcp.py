"""`dotprompt mcp`, run in-process (tests/cli_inprocess.py): its subcommands and their command-line errors.
The server itself is tested in tests/mcpserve/."""

from __future__ import annotations

from dotprompt.cli.mcp import SUBCOMMANDS
from tests.cli_inprocess import cli


def test_mcp_without_a_subcommand_shows_its_subcommands(cli_env):
    done = cli("mcp", env=cli_env)
    assert done.returncode == 2 and "serve" in done.stderr and "tools" in done.stderr
    assert SUBCOMMANDS == ("mcp_tools", "mcp_serve")


def test_serve_help_names_its_transports(cli_env):
    done = cli("mcp", "serve", "--help", env=cli_env)
    assert done.returncode == 0 and "--http" in done.stdout and "--port" in done.stdout and "stdio" in done.stdout


def test_a_port_without_http_and_a_missing_folder_are_usage_errors(cli_env, tmp_path):
    done = cli("mcp", "serve", "--port", "9000", env=cli_env)
    assert done.returncode == 2 and "--port is for --http" in done.stderr
    done = cli("mcp", "serve", "--http", "--port", "70000", env=cli_env)
    assert done.returncode == 2 and "between 0 and 65535" in done.stderr
    done = cli("mcp", "serve", "--dir", str(tmp_path / "nowhere"), env=cli_env)
    assert done.returncode == 2 and "does not exist" in done.stderr
