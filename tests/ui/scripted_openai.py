"""A scripted OpenAI-compatible chat server on loopback for the workbench's tests: real HTTP, real SSE.

What it answers depends on the conversation it is sent, so any run (and a resumed one) gets the
same script: a request without tools -> the final JSON; no tool result yet -> a call of
`lookup_order`; one tool result -> a call of `approve_refund` (a tool that interrupts until it is
answered or restarted); two -> the final JSON. Text is streamed in `chunks` pieces `delay` seconds
apart, a call's arguments in `call_pieces`. A user message holding HOSTILE gets a reply full of markup;
TWICE: two calls of `approve_refund` in one turn (two interrupts), then the final JSON; LEAK: a text
reply holding the API key (`LEAKED`), split across chunks.

It counts the streams it is sending (`Script.active`, the most at once in `Script.most`) and the ones
the client dropped before their end (`Script.aborted`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from tests.ui.workbench_project import KEY

HOSTILE_REPLY = {"answer": "<script>document.title='owned'</script><img src=x onerror=alert(1)>\" onmouseover=\"alert(2)",
                 "link": "javascript:alert(3)", "amount": 5}
FINAL = {"answer": "refund approved for order A1", "amount": 5}
LEAKED = f"the key is {KEY} and that is all"


def final_text(hostile: bool) -> str:
    return json.dumps(HOSTILE_REPLY if hostile else FINAL)


class Script(BaseHTTPRequestHandler):
    chunks: ClassVar[int] = 20
    delay: ClassVar[float] = 0.02
    call_pieces: ClassVar[int] = 1
    bodies: ClassVar[list[dict[str, Any]]] = []
    active: ClassVar[int] = 0
    most: ClassVar[int] = 0
    aborted: ClassVar[int] = 0
    lock: ClassVar[threading.Lock] = threading.Lock()
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        Script.bodies.append(body)
        messages = body["messages"]
        tools_done = sum(m["role"] == "tool" for m in messages)
        said = " ".join(json.dumps(m.get("content")) for m in messages if m["role"] == "user")
        hostile = "HOSTILE" in said
        if "LEAK" in said:
            self.reply(body, text=LEAKED)
        elif not body.get("tools"):
            self.reply(body, text=final_text(hostile))
        elif "TWICE" in said:
            if tools_done == 0:
                self.reply(body, calls=[("c1", "approve_refund", {"order_id": "A1", "amount": 5}),
                                        ("c2", "approve_refund", {"order_id": "A2", "amount": 7})])
            else:
                self.reply(body, text=final_text(hostile))
        elif tools_done == 0:
            self.reply(body, call=("call_1", "lookup_order", {"order_id": "A1"}))
        elif tools_done == 1:
            self.reply(body, call=("call_2", "approve_refund", {"order_id": "A1", "amount": 5}))
        else:
            self.reply(body, text=final_text(hostile))

    def reply(self, body: dict[str, Any], *, text: str | None = None, call: tuple[str, str, Any] | None = None,
              calls: list[tuple[str, str, Any]] | None = None) -> None:
        calls = calls or ([call] if call else [])
        with Script.lock:
            Script.active += 1
            Script.most = max(Script.most, Script.active)
        try:
            self.send(body, text, calls)
        except (BrokenPipeError, ConnectionResetError):
            with Script.lock:
                Script.aborted += 1
        finally:
            with Script.lock:
                Script.active -= 1

    def send(self, body: dict[str, Any], text: str | None, calls: list[tuple[str, str, Any]]) -> None:
        usage = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [{"id": c[0], "type": "function",
                                          "function": {"name": c[1], "arguments": json.dumps(c[2])}} for c in calls]
            self.send_json({"id": "x", "object": "chat.completion", "model": body["model"], "usage": usage,
                            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        if calls:
            for position, (ref, name, arguments) in enumerate(calls):
                self.stream_call(position, ref, name, json.dumps(arguments))
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

    def stream_call(self, position: int, ref: str, name: str, arguments: str) -> None:
        """One call as OpenAI streams it: the id and name first, then the arguments in `call_pieces` pieces."""
        size = max(1, -(-len(arguments) // self.call_pieces))
        pieces = [arguments[start:start + size] for start in range(0, len(arguments), size)]
        for number, piece in enumerate(pieces):
            fragment: dict[str, Any] = {"index": position, "function": {"arguments": piece}}
            if number == 0:
                fragment.update(id=ref, type="function")
                fragment["function"]["name"] = name
            self.event({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [fragment]}}]})
            time.sleep(self.delay)

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
def scripted_server(*, chunks: int = 20, delay: float = 0.02, call_pieces: int = 1) -> Iterator[str]:
    """The server's OpenAI base URL (`http://127.0.0.1:PORT/v1`) while the block runs."""
    Script.chunks, Script.delay, Script.call_pieces = chunks, delay, call_pieces
    Script.active = Script.most = Script.aborted = 0
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
