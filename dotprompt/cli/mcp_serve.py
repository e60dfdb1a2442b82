"""`dotprompt mcp serve`: the prompt folder as an MCP server, over stdio or streamable HTTP on loopback."""

from __future__ import annotations

import argparse
from typing import Any

from ..settings import MCP_SERVE_DEFAULT_PORT
from .common import DIR_HELP, EXIT_OK, CommandLineError, library, package_version

__all__ = ["add_subparser", "run"]


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "serve", help="serve the prompt folder over MCP: each prompt a prompt and a tool, plus check and render",
        description="Serve the prompt folder to MCP clients (Claude Desktop, VS Code, Cursor, the MCP Inspector): "
                    "each prompt is an MCP prompt and a tool that runs it; `check` and `render` are tools too. "
                    "Over stdio unless --http.")
    parser.add_argument("--dir", help=DIR_HELP)
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 (at /mcp) instead of stdio")
    parser.add_argument("--port", type=int, default=None,
                        help=f"with --http: the port (default {MCP_SERVE_DEFAULT_PORT}; 0: any free port)")
    return parser


def run(args: argparse.Namespace) -> int:
    from .mcp import INSTALL

    try:
        import mcp.server  # noqa: F401
    except ImportError:
        raise CommandLineError(f"dotprompt mcp serve needs the MCP SDK: {INSTALL}") from None
    if args.port is not None and not args.http:
        raise CommandLineError("--port is for --http (stdio has no port)")
    port = MCP_SERVE_DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise CommandLineError("--port must be between 0 and 65535")
    from ..mcpserve.transports import serve_http, serve_stdio

    lib = library(args.dir, log=None)
    try:
        if args.http:
            serve_http(lib, port=port, version=package_version())
        else:
            serve_stdio(lib, version=package_version())
    except OSError as exc:
        raise CommandLineError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        pass
    return EXIT_OK
