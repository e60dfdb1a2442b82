"""Start the workbench: bind the socket, say where it is, serve until interrupted.

The socket is bound here, before the server starts, so `--port 0` still prints the real address
and nothing is served on a host the user did not ask for. Loopback is the default; any other host
exposes the prompts, the run log and the models' keys' use to the network, so it is said loudly.
On Ctrl-C the workbench ends its open streams and cancels its runs before uvicorn waits for them, so
a page left open does not turn the stop into a cancelled task's traceback.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path
from typing import TextIO

from ..prompts.library import PromptLibrary
from ..settings import UI_DEFAULT_PORT as DEFAULT_PORT
from .app import create_app, workbench_of
from .guard import allowed_hosts

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "bind", "is_loopback", "serve", "url_of"]

DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}/"


def serve(library: PromptLibrary, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, log_path: Path | None,
          out: TextIO = sys.stdout) -> None:
    import uvicorn

    sock = bind(host, port)
    port = sock.getsockname()[1]
    if not is_loopback(host):
        print(f"warning: serving on {host}, not loopback: anyone who can reach this address can read the prompts "
              "and the run log and run models with this machine's keys", file=sys.stderr)
    app = create_app(library, log_path=log_path, hosts=allowed_hosts(host, port))
    print(f"dotprompt ui: {url_of(host, port)}  (folder {library.directory}; Ctrl-C stops)", file=out, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    stop_first = server.shutdown

    async def shutdown(sockets: list[socket.socket] | None = None) -> None:
        workbench_of(app).stop()  # the streams end now, so the connections close within uvicorn's grace
        await stop_first(sockets)

    server.shutdown = shutdown  # type: ignore[method-assign]  # uvicorn has no hook before its shutdown waits
    server.run(sockets=[sock])
