"""Scripted provider endpoints shared by the tests: `Server` for httpx.MockTransport, and `Loopback`,
the one real HTTP server on 127.0.0.1 for what must cross a socket (the CLI, a `base_url`, a schema URL)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from dotprompt import Message, tool
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OpenAIModel

FIXTURES = Path(__file__).parent / "fixtures"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Server:
    """Serves scripted replies (fixture names, dicts or responses) and records every request.

    Every request body is first checked against the vendor SDK's own request type for its endpoint
    (vendor_types.py): a body the vendor's types reject fails the test that sent it."""

    def __init__(self, *replies, conform: bool = True):
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.conform = conform

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.conform:
            from tests.providers.vendor_types import (
                check_request,  # the SDKs load on first use: children that never check skip them
            )

            check_request(request.url.path, json.loads(request.content))
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return fixture(reply)
        return reply if isinstance(reply, httpx.Response) else httpx.Response(200, json=reply)

    def body(self, index: int) -> dict:
        return json.loads(self.requests[index].content)


def fixture(name: str, status: int = 200, headers: dict | None = None) -> httpx.Response:
    kind = "text/event-stream" if name.endswith(".sse") else "application/json"
    return httpx.Response(status, content=(FIXTURES / name).read_bytes(), headers={"content-type": kind, **(headers or {})})


def merge_history() -> list[Message]:
    """A system message, two user turns in a row, a tool round and a user turn: what providers must merge and map."""
    return [Message.model_validate(m) for m in (
        {"role": "system", "content": [{"text": "Be exact."}]},
        {"role": "user", "content": [{"text": "first"}]},
        {"role": "user", "content": [{"text": "second"}]},
        {"role": "model", "content": [{"toolRequest": {"name": "add", "input": {"a": 1, "b": 1}}}]},
        {"role": "tool", "content": [{"toolResponse": {"name": "add", "output": {"sum": 2}}}]},
        {"role": "user", "content": [{"text": "and now?"}]})]


def openai_model(server: Server) -> OpenAIModel:
    """`openai/gpt-test` answering through `server` (no network)."""
    return OpenAIModel("openai/gpt-test", config=ProviderConfig("openai", "https://api.example.test/v1", "k"),
                       transport=httpx.MockTransport(server))


def anthropic_model(server: Server) -> AnthropicModel:
    return AnthropicModel("anthropic/claude-test", config=ProviderConfig("anthropic", "https://api.example.test/v1", "k"),
                          transport=httpx.MockTransport(server))


def gemini_model(server: Server, name: str = "googleai/gemini-2.5-flash") -> GeminiModel:
    return GeminiModel(name, config=ProviderConfig("googleai", "https://api.example.test/v1beta", "k"),
                       transport=httpx.MockTransport(server))


Reply = httpx.Response | Mapping[str, Any]
# Headers of the reply that the server writes itself (the body is sent whole, with its length).
_OWN_HEADERS = {"content-length", "transfer-encoding", "connection", "content-encoding"}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets connections when a test opens a few dozen at once


class Loopback:
    """A real HTTP server on 127.0.0.1 (a free port) answering every request with `reply(request)`.

    `reply` gets the request as an httpx.Request (method, URL, headers, body) and returns an
    httpx.Response, or a dict sent as JSON with status 200 (a `Server` fits: scripted replies in
    order). Every request is kept in `requests`, and `connections` counts the TCP connections
    accepted. With `keep_alive` it speaks HTTP/1.1 and keeps each connection open for the next request,
    as a provider does (HTTP/1.0 otherwise: one connection per request). Use it as a context manager,
    or `start`/`stop`."""

    def __init__(self, reply: Callable[[httpx.Request], Reply], *, keep_alive: bool = False) -> None:
        self.reply = reply
        self.requests: list[httpx.Request] = []
        self.connections = 0
        self.keep_alive = keep_alive
        self._counting = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.port: int = self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Loopback:
        threading.Thread(target=self._httpd.serve_forever, name="loopback-server", daemon=True).start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Loopback:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.reply(request)
        return reply if isinstance(reply, httpx.Response) else httpx.Response(200, json=dict(reply))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if loopback.keep_alive else "HTTP/1.0"

            def setup(self) -> None:
                with loopback._counting:  # one handler per accepted connection, each in its own thread
                    loopback.connections += 1
                super().setup()

            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = httpx.Request(self.command, f"{loopback.url}{self.path}", headers=list(self.headers.items()),
                                        content=body)
                response = loopback._answer(request)
                content = response.read()
                self.send_response(response.status_code)
                for name, value in response.headers.multi_items():
                    if name.lower() not in _OWN_HEADERS:
                        self.send_header(name, value)
                self.send_header("content-length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def log_message(self, *args: object) -> None:
                pass

        return Handler
