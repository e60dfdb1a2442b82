"""`dotprompt mcp tools [--refresh] [--server NAME]`: the configured MCP servers' tools, from the cached
lists `check` reads; `--refresh` starts each server, lists its tools and writes the cache."""

from __future__ import annotations

import argparse
from typing import Any

from .._util.escape import terminal
from .common import EXIT_FAILED, EXIT_OK, CommandLineError

__all__ = ["add_subparser", "run"]


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    about = ("list the configured MCP servers' tools (from the cache `check` reads); --refresh starts the "
             "servers and caches their lists again")
    parser = subparsers.add_parser("tools", help=about, description=about)
    parser.add_argument("--refresh", action="store_true",
                        help="start each server, list its tools and write .dotprompt/mcp-tools.json (commit it)")
    parser.add_argument("--server", metavar="NAME", action="append", default=None,
                        help="only this server (repeatable)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..mcp.cache import cache_path, cached_servers, fingerprint
    from ..mcp.config import configured_servers

    servers = configured_servers()
    chosen = _chosen(servers, args.server)
    failed: dict[str, str] = {}
    if args.refresh:
        from ..mcp.tools import refresh_tool_cache  # the SDK, with the one command that starts servers

        failed = refresh_tool_cache({n: servers[n] for n in chosen}, cache_path())
    cached = cached_servers()
    for name in chosen:
        entry = cached.get(name)
        if name in failed:
            print(terminal(f"{name}: {failed[name]}"))
        elif entry is None:
            print(terminal(f"{name}: no cached tool list (dotprompt mcp tools --refresh)"))
        else:
            stale = "" if entry.fingerprint == fingerprint(servers[name]) else " (stale: its configuration changed)"
            print(terminal(f"{name}: {len(entry.tools)} tools{stale}"))
            for tool, description in zip(entry.tools, entry.descriptions or [""] * len(entry.tools), strict=False):
                print(terminal(f"  {name}/{tool}" + (f"  {description.splitlines()[0][:100]}" if description else "")))
    return EXIT_FAILED if failed else EXIT_OK


def _chosen(servers: dict[str, Any], named: list[str] | None) -> list[str]:
    if not servers:
        raise CommandLineError("no MCP server is configured: add [tool.dotprompt.mcp.servers.NAME] to pyproject.toml "
                               "(docs/mcp.md)")
    for name in named or ():
        if name not in servers:
            raise CommandLineError(f"--server {name!r}: not configured (configured: {', '.join(servers)})")
    return list(named or servers)
