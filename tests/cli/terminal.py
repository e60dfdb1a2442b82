"""Running the real CLI with its stderr (or both streams) on a pseudo-terminal, against a slow model
server on loopback: what a person at a terminal sees while the model works."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPLY = '{"answer": "yes"}'
PIECES = ['{"ans', 'wer": ', '"ye', 's"}']


class SlowChat(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that takes its time: 1.5 s for a reply, 0.4 s between stream events."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for piece in PIECES:
                time.sleep(0.4)
                self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            self.wfile.write(b"data: [DONE]\n\n")
            return
        time.sleep(1.5)
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _event(self, data: dict) -> None:
        self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def slow_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


# An answer, not an extraction: nothing to ground (else `run` would list "yes" as not in the input).
PROMPT = """---
model: openai/gpt-test
input:
  schema:
    q: string
output:
  grounding: off
  schema:
    answer: string
---
{{ q }}
"""


def project(tmp_path: Path, port: int, env: dict[str, str]) -> dict[str, str]:
    """A prompt folder with `ask` (JSON output) and its test file; the environment pointing at the server."""
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "ask.prompt").write_text(PROMPT)
    (prompts / "ask.test.yaml").write_text("cases:\n  - name: asks\n    input: {q: hi}\n    expect:\n"
                                           "      output: {answer: 'yes'}\n")
    clean = {k: v for k, v in env.items() if k not in ("CI", "DOTPROMPT_DIR", "DOTPROMPT_MODEL")}
    return {**clean, "OPENAI_API_KEY": "test-key-not-secret", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}


def run_on_terminal(*args: str, cwd: Path, env: dict[str, str], both: bool = False) -> tuple[int, str, str]:
    """Run `dotprompt ARGS` with stderr on a pseudo-terminal (and stdout too when `both`).
    Returns (exit code, what the terminal received, stdout when it was a pipe)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "dotprompt.cli", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=follower if both else subprocess.PIPE, stderr=follower)
    os.close(follower)
    screen = bytearray()
    piped = threading.Thread(target=lambda: None)
    out: list[bytes] = []
    if not both:
        assert proc.stdout is not None
        piped = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore[union-attr]
        piped.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower side closed: the process is gone
                break
            if not chunk:
                break
            screen += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    code = proc.wait(timeout=30)
    if not both:
        piped.join(timeout=30)
    return code, screen.decode("utf-8", "replace"), b"".join(out).decode()
