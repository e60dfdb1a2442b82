"""The workbench's front door: which requests reach the app at all, and the headers every answer carries.

A page on another site can make the browser send requests to 127.0.0.1, and DNS rebinding can give
that site's own name a loopback address. So: the Host header must name this server exactly (a rebound
name does not); a request carrying an Origin must come from this server's own origin; a request the
browser marks as sent by another site (`Sec-Fetch-Site`: an `<img>` or `<script>` there sends no
Origin) is refused, a read as much as a write, except a link from elsewhere opening the page; every request
that changes anything (POST) must carry the session's CSRF token in a header, which a cross-site form
cannot set and a cross-site script cannot read (the token comes from a JSON answer, and no CORS header
lets another origin read one). The Content-Security-Policy allows scripts from this server only, so
even text that slipped into the page as markup could not run. A server for clients that are no browser
page (`dotprompt mcp serve --http`) takes the same Host, Origin and Sec-Fetch-Site rules without the
token (`token=None`).
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import socket
from collections.abc import Iterable, MutableMapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "CSP",
    "CSRF_HEADER",
    "HEADERS",
    "LOOPBACK_NAMES",
    "OWN_SITES",
    "SAFE_METHODS",
    "WILDCARDS",
    "Guard",
    "allowed_hosts",
    "machine_names",
    "new_token",
    "with_headers",
]

CSRF_HEADER = "x-csrf-token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "x-frame-options": "DENY",
           "referrer-policy": "no-referrer", "cross-origin-opener-policy": "same-origin",
           "cross-origin-resource-policy": "same-origin", "cache-control": "no-store"}
SAFE_METHODS = frozenset({"GET", "HEAD"})
# Sec-Fetch-Site values of requests the page or its user made: from the page itself, or typed / bookmarked.
OWN_SITES = frozenset({"same-origin", "none"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def new_token() -> str:
    return secrets.token_urlsafe(32)


WILDCARDS = ("0.0.0.0", "::", "")


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host header values that name this server, with its port: its loopback names; the address it
    was bound to; for a wildcard bind (0.0.0.0), also this machine's name and addresses."""
    names = set(LOOPBACK_NAMES)
    if host in WILDCARDS:
        names |= machine_names()
    elif host not in ("localhost", "::1"):
        names.add(f"[{host}]" if ":" in host else host)
    return frozenset(f"{name}:{port}".lower() for name in names)


def machine_names() -> set[str]:
    found = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        for *_, address in socket.getaddrinfo(socket.gethostname(), None):
            ip = str(address[0])
            found.add(f"[{ip}]" if ":" in ip else ip)
    return found


class Guard:
    """ASGI middleware: refuses foreign hosts and origins (403) and state-changing requests without the token
    (`token=None`: no token, for clients that are no browser page; the Host and Origin rules still hold)."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str | None) -> None:
        self.app = app
        self.hosts = frozenset(h.lower() for h in hosts)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self.problem(Request(scope))
        if problem is not None:
            await with_headers(JSONResponse({"error": problem}, status_code=403))(scope, receive, send)
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def problem(self, request: Request) -> str | None:
        """Why this request is refused, or None."""
        host = request.headers.get("host", "").lower()
        if host not in self.hosts:
            return "this server answers only to its own address (Host header refused)"
        origin = request.headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "cross-origin requests are refused"
        site = request.headers.get("sec-fetch-site")
        if site is not None and site.lower() not in OWN_SITES and not _opens_the_page(request):
            return "cross-site requests are refused (open the workbench from its own address)"
        if self.token is None or request.method in SAFE_METHODS:
            return None
        if request.method != "POST":
            return "method not allowed"
        if not hmac.compare_digest(request.headers.get(CSRF_HEADER, ""), self.token):
            return "missing or wrong CSRF token (reload the page)"
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "state-changing requests send JSON"
        return None


def _opens_the_page(request: Request) -> bool:
    """A link on another site (a chat, a README) opening the page itself: a top-level navigation to `/`,
    which shows nothing but the page's own code; everything it then loads comes from the page."""
    headers = request.headers
    return (request.method in SAFE_METHODS and request.url.path == "/"
            and headers.get("sec-fetch-mode") == "navigate" and headers.get("sec-fetch-dest") == "document")


def with_headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response
