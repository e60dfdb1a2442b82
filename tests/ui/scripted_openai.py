"""A scripted OpenAI-compatible chat server on loopback for the workbench's tests: real HTTP, real SSE.

What it answers depends on the conversation it is sent, so any run (and a resumed one) gets the
same script: a request without tools -> the final JSON; no tool result yet -> a call of
`lookup_order`; one tool result -> a call of `approve_refund` (a tool that interrupts until it is
answered or restarted); two -> the final JSON. Text is streamed in `chunks` pieces `delay` seconds
apart. A user message holding HOSTILE gets a reply full of markup.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

HOSTILE_REPLY = {"answer": "<script>document.title='owned'</script><img src=x onerror=alert(1)>\" onmouseover=\"alert(2)",
                 "link": "javascript:alert(3)", "amount": 5}
FINAL = {"answer": "refund approved for order A1", "amount": 5}


def final_text(hostile: bool) -> str:
    return json.dumps(HOSTILE_REPLY if hostile else FINAL)


class Script(BaseHTTPRequestHandler):
    chunks: ClassVar[int] = 20
    delay: ClassVar[float] = 0.02
    bodies: ClassVar[list[dict[str, Any]]] = []
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        Script.bodies.append(body)
        messages = body["messages"]
        tools_done = sum(m["role"] == "tool" for m in messages)
        hostile = any("HOSTILE" in json.dumps(m.get("content")) for m in messages if m["role"] == "user")
        if not body.get("tools"):
            self.reply(body, text=final_text(hostile))
        elif tools_done == 0:
            self.reply(body, call=("call_1", "lookup_order", {"order_id": "A1"}))
        elif tools_done == 1:
            self.reply(body, call=("call_2", "approve_refund", {"order_id": "A1", "amount": 5}))
        else:
            self.reply(body, text=final_text(hostile))

    def reply(self, body: dict[str, Any], *, text: str | None = None, call: tuple[str, str, Any] | None = None) -> None:
        usage = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if call:
                message["tool_calls"] = [{"id": call[0], "type": "function",
                                          "function": {"name": call[1], "arguments": json.dumps(call[2])}}]
            self.send_json({"id": "x", "object": "chat.completion", "model": body["model"], "usage": usage,
                            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}]})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        if call:
            function = {"name": call[1], "arguments": json.dumps(call[2])}
            self.event({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": call[0], "type": "function", "function": function}]}}]})
            self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        else:
            assert text is not None
            size = max(1, -(-len(text) // self.chunks))
            for start in range(0, len(text), size):
                self.event({"choices": [{"index": 0, "delta": {"content": text[start:start + size]}}]})
                time.sleep(self.delay)
            self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.event({"choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def event(self, data: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def send_json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def scripted_server(*, chunks: int = 20, delay: float = 0.02) -> Iterator[str]:
    """The server's OpenAI base URL (`http://127.0.0.1:PORT/v1`) while the block runs."""
    Script.chunks, Script.delay = chunks, delay
    Script.bodies.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Script)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
