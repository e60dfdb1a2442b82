"""`dotprompt lsp`: the language server for editors, over stdio (or TCP with --tcp)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from .common import EXIT_OK, CommandLineError, package_version

__all__ = ["add_parser", "run"]

INSTALL_HINT = "the language server needs the lsp extra: pip install 'dotprompt-toolkit[lsp]'"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("lsp", help="the language server for editors (LSP over stdio)",
                                   description="Speak the Language Server Protocol over stdio for .prompt and "
                                               "*.test.yaml files: diagnostics, completion, hover, definitions, "
                                               "rename, code actions, a render preview. Editors start it; see "
                                               "docs/language-server.md.")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)")
    parser.add_argument("--log-file", metavar="PATH", help="write the server's log to this file")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        from ..lsp.server import make_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ("pygls", "lsprotocol"):
            raise CommandLineError(INSTALL_HINT) from None
        raise
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    server = make_server(package_version())
    if args.tcp:
        host, _, port = str(args.tcp).rpartition(":")
        if not port.isdigit():
            raise CommandLineError(f"--tcp {args.tcp!r}: give HOST:PORT, e.g. 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return EXIT_OK
