"""`dotprompt mcp serve` as a real process for the tests: its environment, its command, a model server
on loopback that never answers (for calls cut off in the middle), and the HTTP server started and stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import ROOT
from tests.providers.mock_server import Loopback

KEY = "sk-mcp-serve-secret-0123456789"


def environment(root: Path, base_url: str = "http://127.0.0.1:9") -> dict[str, str]:
    """The child's environment: no DOTPROMPT_* of the caller's, a run log of its own, the model server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOTPROMPT_")}
    env.update(XDG_DATA_HOME=str(root / "data"), OPENAI_BASE_URL=base_url, OPENAI_API_KEY=KEY, PYTHONPATH=str(ROOT))
    return env


def command(folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dotprompt.cli", "mcp", "serve", "--dir", str(folder), *extra]


class Stalled:
    """A model server on loopback that takes every request and answers none until released."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.asked = threading.Event()
        self.server = Loopback(self._hold)

    def _hold(self, request: httpx.Request) -> httpx.Response:
        self.asked.set()
        self.released.wait(60)
        return httpx.Response(503, json={"error": {"message": "released"}})

    def __enter__(self) -> Stalled:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.server.stop()

    @property
    def url(self) -> str:
        return self.server.url


@contextmanager
def http_server(folder: Path, env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`dotprompt mcp serve --http --port 0`: its endpoint URL while the block runs; Ctrl-C after."""
    process = subprocess.Popen(command(folder, "--http", "--port", "0"), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        if found is None:
            raise AssertionError(f"no URL printed: {line!r} {process.stderr.read() if process.stderr else ''}")
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
