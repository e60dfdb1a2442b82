"""A loopback fake of the providers for the batch and transport tests: live chat calls with injected faults, and the
three batch APIs (OpenAI Batch, Anthropic Message Batches, Gemini batch mode).

A real HTTP/1.1 server (threads) on 127.0.0.1; what each row's model answers is decided by the row's
text, so a test chooses a fault by writing it into the row:

    FAIL500  the call is an HTTP 500 (live) or that row's result is an error (batch)
    BADJSON  the model replies with text that is not JSON (the format's parsing must fail the row)
    HANGUP   the server closes the connection without a reply (live; streamed: after two events)
    SLOWn    the reply waits n tenths of a second (live)
    STREAMCUT  a streamed reply stops after two events, the connection closed (live)

Otherwise the model answers `{"double": N * 2}` for the first integer N in the user's text.
Batch jobs stay in progress for `polls_before_done` polls; `scenario` makes them end `expired`
(only the first half of the rows have results) or `failed` (the whole job).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer(text: str) -> tuple[int, str]:
    """(HTTP status, the model's text) for a user message."""
    if "FAIL500" in text:
        return 500, "server exploded"
    if "BADJSON" in text:
        return 200, "this is not json"
    found = re.search(r"-?\d+", text.replace("SLOW", "S"))
    number = int(found[0]) if found else 0
    return 200, json.dumps({"double": number * 2})


def user_text(messages: list[Any]) -> str:
    parts = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(block.get("text", "")) for block in content if isinstance(block, dict))
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            parts.append(str(part.get("text", "")))
    return " ".join(parts)


def openai_reply(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def anthropic_reply(text: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "fake",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def gemini_reply(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up (a cancelled or killed call) is expected here, not a failure to print


class FakeProviders:
    def __init__(self, *, delay: float = 0.0, polls_before_done: int = 1, scenario: str = "ok") -> None:
        self.delay = delay
        self.polls_before_done = polls_before_done
        self.scenario = scenario
        self.lock = threading.Lock()
        self.calls = 0
        self.targets: list[str] = []  # request targets as sent: absolute URLs when it served as a proxy
        self.received: list[tuple[dict[str, str], bytes]] = []  # headers and body of every POST
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.submitted: list[Any] = []  # the batch requests as received
        self.result_override: bytes | None = None  # hostile tests: serve these bytes as the results
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeProviders:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- batch jobs -----------------------------------------------------------------------------

    def new_job(self, kind: str, requests: list[tuple[str, str]]) -> str:
        """requests: (custom id, user text). Results are computed now and served when the job ends."""
        job = f"{kind}-{uuid.uuid4().hex[:8]}"
        with self.lock:
            self.jobs[job] = {"kind": kind, "requests": requests, "polls": 0}
        return job

    def poll(self, job: str) -> str:
        """in_progress, ended (results ready), expired or failed."""
        with self.lock:
            state = self.jobs[job]
            state["polls"] += 1
            if state["polls"] <= self.polls_before_done:
                return "in_progress"
        return {"expired": "expired", "failed": "failed"}.get(self.scenario, "ended")

    def results(self, job: str) -> list[tuple[str, str, int, str]]:
        """(custom id, kind, status, model text) of the rows that have results."""
        requests = self.jobs[job]["requests"]
        if self.scenario == "expired":
            requests = requests[: len(requests) // 2]
        return [(custom_id, self.jobs[job]["kind"], *answer(text)) for custom_id, text in requests]

    # -- HTTP ------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            def send(self, status: int, data: Any, kind: str = "application/json") -> None:
                raw = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(raw)))
                self.send_header("set-cookie", "affinity=node-7; Path=/")  # as a load balancer sets one
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                raw = self.body()
                with fake.lock:
                    fake.targets.append(self.path)
                    fake.received.append(({k.lower(): v for k, v in self.headers.items()}, raw))
                path = self.path.split("?")[0]
                if path.endswith("/chat/completions"):
                    return self.live(json.loads(raw))
                if path.endswith("/files"):
                    return self.upload(raw)
                if path.endswith("/batches") and "/messages/" not in path:
                    return self.openai_batch(json.loads(raw))
                if path.endswith("/messages/batches"):
                    return self.anthropic_batch(json.loads(raw))
                if path.endswith(":batchGenerateContent"):
                    return self.gemini_batch(json.loads(raw))
                self.send(404, {"error": {"message": f"no route {path}"}})

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if found := re.fullmatch(r".*/v1/batches/([\w-]+)", path):
                    return self.openai_status(found[1])
                if found := re.fullmatch(r".*/v1/files/([\w-]+)/content", path):
                    return self.send(200, fake.files[found[1]], "application/jsonl")
                if found := re.fullmatch(r".*/messages/batches/([\w-]+)/results", path):
                    return self.send(200, fake.result_override or self.anthropic_results(found[1]), "application/jsonl")
                if found := re.fullmatch(r".*/messages/batches/([\w-]+)", path):
                    return self.anthropic_status(found[1])
                if found := re.fullmatch(r".*/batches/([\w-]+)", path):
                    return self.gemini_status(found[1])
                self.send(404, {"error": {"message": f"no route {path}"}})

            def live(self, body: dict[str, Any]) -> None:
                with fake.lock:
                    fake.calls += 1
                text = user_text(body.get("messages", []))
                if "HANGUP" in text:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                slow = re.search(r"SLOW(\d+)", text)
                time.sleep(fake.delay + (int(slow[1]) / 10 if slow else 0))
                status, reply = answer(text)
                if status != 200:
                    return self.send(status, {"error": {"message": reply, "type": "server_error"}})
                if body.get("stream"):
                    return self.stream(reply, cut="STREAMCUT" in text)
                self.send(200, openai_reply(reply))

            def stream(self, text: str, cut: bool) -> None:
                """Server-sent events, one HTTP chunk each; `cut`: hang up after two of them."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                pieces = [text[i:i + 4] for i in range(0, len(text), 4)]
                events = [{"id": "c", "object": "chat.completion.chunk", "model": "fake",
                           "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]} for piece in pieces]
                events.append({"id": "c", "object": "chat.completion.chunk", "model": "fake",
                               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                for number, event in enumerate(events):
                    if cut and number == 2:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    data = f"data: {json.dumps(event)}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                    time.sleep(0.01)
                data = b"data: [DONE]\n\n"
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))

            # OpenAI: upload the .jsonl, create the batch, poll it, download the output file.
            def upload(self, raw: bytes) -> None:
                start = raw.index(b"\r\n\r\n", raw.index(b'name="file"')) + 4
                content = raw[start: raw.index(b"\r\n--", start)]
                file_id = f"file-{uuid.uuid4().hex[:8]}"
                fake.files[file_id] = content
                self.send(200, {"id": file_id, "object": "file", "purpose": "batch"})

            def openai_batch(self, body: dict[str, Any]) -> None:
                lines = [json.loads(line) for line in fake.files[body["input_file_id"]].splitlines() if line.strip()]
                fake.submitted.extend(lines)
                job = fake.new_job("openai", [(line["custom_id"], user_text(line["body"]["messages"])) for line in lines])
                self.send(200, {"id": job, "object": "batch", "status": "validating"})

            def openai_status(self, job: str) -> None:
                state = fake.poll(job)
                status = {"in_progress": "in_progress", "ended": "completed"}.get(state, state)
                reply: dict[str, Any] = {"id": job, "object": "batch", "status": status}
                if state in ("ended", "expired"):
                    out, errors = [], []
                    for custom_id, _, code, text in fake.results(job):
                        if code == 200:
                            out.append({"id": "r", "custom_id": custom_id, "error": None,
                                        "response": {"status_code": 200, "body": openai_reply(text)}})
                        else:
                            errors.append({"id": "r", "custom_id": custom_id, "response": {
                                "status_code": code, "body": {"error": {"message": text, "type": "server_error"}}},
                                "error": None})
                    if state == "expired":  # the rows never run are in the error file, as OpenAI does
                        done = {r[0] for r in fake.results(job)}
                        errors.extend({"id": "r", "custom_id": cid, "response": None,
                                       "error": {"code": "batch_expired", "message": "This request could not be executed"}}
                                      for cid, _ in fake.jobs[job]["requests"] if cid not in done)
                    for key, lines in (("output_file_id", out), ("error_file_id", errors)):
                        if lines:
                            file_id = f"file-{uuid.uuid4().hex[:8]}"
                            fake.files[file_id] = fake.result_override or b"".join(
                                json.dumps(line).encode() + b"\n" for line in lines)
                            reply[key] = file_id
                self.send(200, reply)

            def anthropic_batch(self, body: dict[str, Any]) -> None:
                fake.submitted.extend(body["requests"])
                job = fake.new_job("anthropic", [(r["custom_id"], user_text(r["params"]["messages"]))
                                                 for r in body["requests"]])
                self.send(200, {"id": job, "type": "message_batch", "processing_status": "in_progress"})

            def anthropic_status(self, job: str) -> None:
                state = fake.poll(job)
                if state == "failed":
                    return self.send(500, {"type": "error", "error": {"type": "api_error", "message": "batch lost"}})
                status = "in_progress" if state == "in_progress" else "ended"
                self.send(200, {"id": job, "type": "message_batch", "processing_status": status,
                                "results_url": f"{fake.url}/v1/messages/batches/{job}/results" if status == "ended" else None})

            def anthropic_results(self, job: str) -> bytes:
                lines = []
                done = set()
                for custom_id, _, code, text in fake.results(job):
                    done.add(custom_id)
                    result = ({"type": "succeeded", "message": anthropic_reply(text)} if code == 200 else
                              {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": text}}})
                    lines.append({"custom_id": custom_id, "result": result})
                lines.extend({"custom_id": cid, "result": {"type": "expired"}}
                             for cid, _ in fake.jobs[job]["requests"] if cid not in done)
                return b"".join(json.dumps(line).encode() + b"\n" for line in lines)

            def gemini_batch(self, body: dict[str, Any]) -> None:
                requests = body["batch"]["input_config"]["requests"]["requests"]
                fake.submitted.extend(requests)
                job = fake.new_job("gemini", [(r["metadata"]["key"], user_text(r["request"]["contents"]))
                                              for r in requests])
                self.send(200, {"name": f"batches/{job}", "metadata": {"state": "BATCH_STATE_PENDING"}})

            def gemini_status(self, job: str) -> None:
                state = fake.poll(job)
                name = {"in_progress": "BATCH_STATE_RUNNING", "ended": "BATCH_STATE_SUCCEEDED",
                        "expired": "BATCH_STATE_EXPIRED", "failed": "BATCH_STATE_FAILED"}[state]
                reply: dict[str, Any] = {"name": f"batches/{job}", "metadata": {"state": name}, "done": state != "in_progress"}
                if state in ("ended", "expired"):
                    inlined = []
                    for custom_id, _, code, text in fake.results(job):
                        item: dict[str, Any] = {"metadata": {"key": custom_id}}
                        if code == 200:
                            item["response"] = gemini_reply(text)
                        else:
                            item["error"] = {"code": code, "message": text}
                        inlined.append(item)
                    reply["response"] = {"inlinedResponses": {"inlinedResponses": inlined}}
                self.send(200, reply)

        return Handler
