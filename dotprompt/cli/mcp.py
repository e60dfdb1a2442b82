"""`dotprompt mcp tools [--refresh]`: the Model Context Protocol, the configured servers' tools (docs/mcp.md)."""

from __future__ import annotations

import argparse
from typing import Any

from . import mcp_tools
from .common import usage

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("mcp", help="MCP servers: the tools of those a project configures")
    commands = parser.add_subparsers(dest="mcp_command", help="what to do")
    mcp_tools.add_subparser(commands)
    return parser


def run(args: argparse.Namespace) -> int:
    """`dotprompt mcp` without a subcommand."""
    return usage(args.command_parser)
