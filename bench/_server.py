"""A tiny loopback HTTP/1.1 server that answers like the model providers, for the provider and batch benchmarks.

It speaks just enough HTTP for httpx: keep-alive, Content-Length request bodies, replies with
Content-Length or (streams) chunked transfer encoding, one HTTP chunk per server-sent event as a
real provider flushes them. Every reply body is built once and cached, so answering costs a
request parse and a socket write. Routes (any prefix before them is ignored):

    POST .../chat/completions                     OpenAI Chat Completions, JSON or SSE (`"stream": true`)
    POST .../messages                             Anthropic Messages, JSON or SSE (`"stream": true`)
    POST .../models/M:generateContent             Gemini, JSON
    POST .../models/M:streamGenerateContent       Gemini, SSE
    GET  /stats                                   requests, connections opened, first request / last reply, peak in flight
    GET  /reset                                   zero the stats

A streamed reply has as many text chunks as the number that ends the model's name (`bench-1000`:
1,000 chunks); other models get one canned reply. `--delay S` holds every model reply S seconds.

`spawn(...)` runs it in a child process and yields its port, so its work never shares an
interpreter (or the GIL) with the client being timed; `python _server.py` runs it in the foreground.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_REPLY = ("The order #A-1042 shipped on 3 March by express courier and should arrive within two working days; "
                 "the tracking number is in the confirmation email. No refund is due, as nothing was damaged or late.")
CHUNK_TEXT = "tok "  # the text of every streamed chunk
_TRAILING_NUMBER = re.compile(r"(\d+)$")
_GEMINI_MODEL = re.compile(r"/models/([^/:]+):")


def chunk_count(model: str) -> int:
    found = _TRAILING_NUMBER.search(model)
    return int(found[1]) if found else 1


# -- canned replies -----------------------------------------------------------------------------------

def openai_json(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 40, "total_tokens": 82}}


def openai_events(n: int) -> list[str]:
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench"}
    delta = json.dumps({**head, "choices": [{"index": 0, "delta": {"content": CHUNK_TEXT}, "finish_reason": None}]})
    last = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {**head, "choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": n, "total_tokens": 42 + n}}
    return [f"data: {delta}\n\n"] * n + [f"data: {json.dumps(last)}\n\n", f"data: {json.dumps(usage)}\n\n",
                                         "data: [DONE]\n\n"]


def anthropic_json(text: str) -> dict[str, Any]:
    return {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 42, "output_tokens": 40}}


def anthropic_events(n: int) -> list[str]:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = {"type": "message_start", "message": {**anthropic_json(""), "content": [], "stop_reason": None,
                                                  "usage": {"input_tokens": 42, "output_tokens": 1}}}
    delta = event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": CHUNK_TEXT}})
    return [event("message_start", start),
            event("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}),
            *[delta] * n,
            event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                    "usage": {"output_tokens": n}}),
            event("message_stop", {"type": "message_stop"})]


def gemini_json(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 42, "candidatesTokenCount": 40, "totalTokenCount": 82},
            "modelVersion": "bench", "responseId": "resp-bench"}


def gemini_events(n: int) -> list[str]:
    def event(finish: bool) -> str:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": CHUNK_TEXT}], "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        return f"data: {json.dumps({'candidates': [candidate], 'modelVersion': 'bench', 'responseId': 'r'})}\n\n"

    return [event(False)] * (n - 1) + [event(True)]


def json_reply(data: dict[str, Any]) -> bytes:
    body = json.dumps(data).encode()
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def sse_reply(events: list[str]) -> bytes:
    out = [b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"]
    for event in events:
        data = event.encode()
        out.append(b"%x\r\n%s\r\n" % (len(data), data))
    out.append(b"0\r\n\r\n")
    return b"".join(out)


# -- the server -------------------------------------------------------------------------------------

class BenchServer:
    def __init__(self, reply_text: str = DEFAULT_REPLY, delay: float = 0.0) -> None:
        self.reply_text = reply_text
        self.delay = delay
        self.cache: dict[tuple[str, bool, int], bytes] = {}
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.connections = 0
        self.first_request: float | None = None
        self.last_reply: float | None = None
        self.in_flight = 0
        self.peak_in_flight = 0

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "connections": self.connections, "first_request": self.first_request,
                "last_reply": self.last_reply, "peak_in_flight": self.peak_in_flight}

    def reply(self, path: str, body: bytes) -> bytes:
        if path == "/stats":
            return json_reply(self.stats())
        if path == "/reset":
            self.reset()
            return json_reply({"ok": True})
        data = json.loads(body) if body else {}
        if path.endswith("/chat/completions"):
            key = ("openai", bool(data.get("stream")), chunk_count(data.get("model", "")))
        elif path.endswith("/messages"):
            key = ("anthropic", bool(data.get("stream")), chunk_count(data.get("model", "")))
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            found = _GEMINI_MODEL.search(path)
            key = ("gemini", ":stream" in path, chunk_count(found[1] if found else ""))
        else:
            raise LookupError(path)
        if key not in self.cache:
            self.cache[key] = self.build(*key)
        return self.cache[key]

    def build(self, provider: str, stream: bool, n: int) -> bytes:
        if stream:
            return sse_reply({"openai": openai_events, "anthropic": anthropic_events, "gemini": gemini_events}[provider](n))
        return json_reply({"openai": openai_json, "anthropic": anthropic_json, "gemini": gemini_json}[provider](self.reply_text))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path, headers = parse_head(head)
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self.answer(writer, method, path, body):
                    break
                if headers.get("connection", "").lower() == "close":
                    break
        writer.close()

    async def answer(self, writer: asyncio.StreamWriter, method: str, path: str, body: bytes) -> bool:
        """Write the reply; False when the connection should close (an unknown route)."""
        model_call = method == "POST"
        if model_call:
            self.requests += 1
            if self.first_request is None:
                self.first_request = time.monotonic()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            payload = self.reply(path, body)
            if model_call and self.delay:
                await asyncio.sleep(self.delay)
            writer.write(payload)
            await writer.drain()
        except (LookupError, ValueError) as exc:
            message = str(exc).encode()
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: %d\r\n\r\n%s" % (len(message), message))
            return False
        finally:
            if model_call:
                self.in_flight -= 1
        if model_call:
            self.last_reply = time.monotonic()
        return True


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    return method, target.split("?", 1)[0], headers


async def serve(reply_text: str, delay: float, port: int = 0) -> None:
    bench = BenchServer(reply_text, delay)
    server = await asyncio.start_server(bench.handle, "127.0.0.1", port, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


@contextlib.contextmanager
def spawn(reply_text: str = DEFAULT_REPLY, delay: float = 0.0) -> Iterator[int]:
    """Run the server in a child process (the current interpreter); yields its port, stops it on exit."""
    child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--reply", reply_text, "--delay", str(delay)],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline() if child.stdout else ""
        if not line.strip().isdigit():
            raise SystemExit(f"the bench server did not start (it printed {line!r})")
        yield int(line)
    finally:
        child.terminate()
        child.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="the text of every non-streamed reply")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to hold every model reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.reply, args.delay, args.port))


if __name__ == "__main__":
    main()
