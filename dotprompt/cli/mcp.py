"""`dotprompt mcp`: the Model Context Protocol, one subcommand module each (the extra `dotprompt-toolkit[mcp]`).

`SUBCOMMANDS` names the modules (below `dotprompt.cli`); each has `add_subparser(subparsers)` (its
name, help and options; returns its parser) and `run(args) -> exit code`. Adding a subcommand is one
module and one line here. The modules are light: each imports the SDK only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from .common import usage

__all__ = ["INSTALL", "SUBCOMMANDS", "add_parser", "run"]

INSTALL = "pip install 'dotprompt-toolkit[mcp]'"
HELP = "the Model Context Protocol: the configured servers' tools, and the prompt folder served to MCP clients"

SUBCOMMANDS: tuple[str, ...] = (
    "mcp_tools",  # dotprompt mcp tools [--refresh]: the configured servers' tools, cached for `check`
    "mcp_serve",  # dotprompt mcp serve: the prompt folder as an MCP server
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("mcp", help=HELP,
                                   description="The Model Context Protocol (the extra dotprompt-toolkit[mcp]).")
    commands = parser.add_subparsers(dest="mcp_command", help="what to do (`dotprompt mcp COMMAND --help` for more)")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"{__package__}.{name}")
        module.add_subparser(commands).set_defaults(mcp_run=module.run)
    return parser


def run(args: argparse.Namespace) -> int:
    chosen = getattr(args, "mcp_run", None)
    if chosen is None:
        return usage(args.command_parser)
    return int(chosen(args))
