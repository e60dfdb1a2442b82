"""Serve the folder's MCP server: over stdio, or streamable HTTP on loopback behind the workbench's guard.

stdio: the SDK points file descriptor 1 at stderr while it serves, so nothing our code or the
project's (a tool that prints) writes can corrupt the protocol on stdout.

HTTP binds loopback only (a prompt folder's tools run models with this machine's keys) and answers
at `/mcp`. The workbench's `Guard` (`ui/guard.py`) decides which requests reach it, with the same
rules: the Host header names this server exactly (DNS rebinding gives another site's name a loopback
address), a request carrying an Origin comes from this server's own origin, and one a browser marks
as sent by another site is refused. MCP clients are no browser page, so there is no CSRF token
(`token=None`); the SDK's own host check is off, so the one rule is the workbench's.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import anyio

from ..prompts.library import PromptLibrary
from ..settings import MCP_SERVE_DEFAULT_PORT as DEFAULT_PORT
from ..ui.guard import Guard, allowed_hosts
from ..ui.serve import bind, url_of
from .server import create_server

__all__ = ["DEFAULT_PORT", "ENDPOINT", "HOST", "http_app", "serve_http", "serve_stdio"]

HOST = "127.0.0.1"
ENDPOINT = "/mcp"


def serve_stdio(library: PromptLibrary, *, version: str = "") -> None:
    """Serve over this process's stdin and stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    server = create_server(library, version=version)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def http_app(library: PromptLibrary, port: int, *, version: str = "") -> Any:
    """The ASGI app: the SDK's streamable HTTP endpoint at `/mcp`, behind the workbench's Host/Origin guard."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = create_server(library, version=version)
    app = server.streamable_http_app(streamable_http_path=ENDPOINT, host=HOST,
                                     transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return Guard(app, hosts=allowed_hosts(HOST, port), token=None)


def serve_http(library: PromptLibrary, *, port: int = DEFAULT_PORT, version: str = "", out: TextIO = sys.stdout) -> None:
    """Serve streamable HTTP on loopback until interrupted; says where first (`--port 0`: the real port)."""
    import uvicorn

    sock = bind(HOST, port)
    port = sock.getsockname()[1]
    app = http_app(library, port, version=version)
    print(f"dotprompt mcp serve: {url_of(HOST, port).rstrip('/')}{ENDPOINT}  (folder {library.directory}; Ctrl-C stops)",
          file=out, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])
