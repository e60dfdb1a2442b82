"""Each provider's batch API calls, request by request, on httpx.MockTransport: paths, keys in headers
(never in URLs), the batch file's lines, the status words, and the result lines mapped to rows."""

from __future__ import annotations

import asyncio
import json

import httpx

from dotprompt.batch.api.anthropic import AnthropicBatch
from dotprompt.batch.api.base import ENDED, EXPIRED, IN_PROGRESS
from dotprompt.batch.api.gemini import GeminiBatch
from dotprompt.batch.api.openai import OpenAIBatch
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OpenAIModel
from dotprompt.types import GenerateRequest, Message, Part

REQUEST = GenerateRequest(messages=[Message(role="user", content=[Part(text="Row 1")])], config={"temperature": 0})


class Recorder:
    def __init__(self, *replies):
        self.replies, self.requests = list(replies), []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        return reply if isinstance(reply, httpx.Response) else httpx.Response(200, json=reply)


def collect(provider, model, job, status, tmp_path):
    async def go():
        return [item async for item in provider.fetch(model, job, status, tmp_path)]

    return asyncio.run(go())


def test_openai_uploads_a_file_then_creates_polls_and_downloads(tmp_path):
    lines = (json.dumps({"custom_id": "r1", "response": {"status_code": 200, "body": {
                "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}}}) + "\n"
             + json.dumps({"custom_id": "r2", "response": {"status_code": 429, "body": {
                "error": {"message": "slow down"}}}}) + "\n")
    errors = json.dumps({"custom_id": "r3", "error": {"code": "batch_expired", "message": "not run"}}) + "\n"
    server = Recorder({"id": "file-1"}, {"id": "batch_1", "status": "validating"},
                      {"id": "batch_1", "status": "finalizing"},
                      {"id": "batch_1", "status": "expired", "output_file_id": "file-o", "error_file_id": "file-e",
                       "request_counts": {"total": 3, "completed": 2}},
                      httpx.Response(200, content=lines.encode()), httpx.Response(200, content=errors.encode()))
    model = OpenAIModel("openai/gpt-x", config=ProviderConfig("openai", "https://api.test/v1", api_key="sk-test"),
                        transport=httpx.MockTransport(server))
    provider = OpenAIBatch()
    line = provider.line(model, "r1", REQUEST)
    assert line == {"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions",
                    "body": {"model": "gpt-x", "messages": [{"role": "user", "content": "Row 1"}], "temperature": 0}}
    assert asyncio.run(provider.submit(model, [line], "label")) == "batch_1"
    upload, create = server.requests[:2]
    assert upload.url.path == "/v1/files" and b'name="purpose"\r\n\r\nbatch' in upload.content
    assert b'"custom_id": "r1"' in upload.content and upload.headers["authorization"] == "Bearer sk-test"
    assert json.loads(create.content)["input_file_id"] == "file-1" and json.loads(create.content)["completion_window"] == "24h"
    assert asyncio.run(provider.poll(model, "batch_1")).state == IN_PROGRESS
    status = asyncio.run(provider.poll(model, "batch_1"))
    assert status.state == EXPIRED and "2/3" in status.detail
    fetched = collect(provider, model, "batch_1", status, tmp_path)
    assert [request.url.path for request in server.requests[-2:]] == ["/v1/files/file-o/content", "/v1/files/file-e/content"]
    assert [(f.custom_id, f.result.error) for f in fetched] == [("r1", None), ("r2", "slow down"),
                                                               ("r3", "batch_expired: not run")]
    assert fetched[1].result.status == 429 and OpenAIBatch.parse(fetched[0].result.data, "openai").message.text == "hi"
    assert all("sk-test" not in str(request.url) for request in server.requests)


def test_anthropic_posts_the_requests_then_reads_the_results_url(tmp_path):
    results = "\n".join(json.dumps(line) for line in [
        {"custom_id": "r1", "result": {"type": "succeeded", "message": {"content": [{"type": "text", "text": "ok"}],
                                                                      "stop_reason": "end_turn"}}},
        {"custom_id": "r2", "result": {"type": "errored", "error": {"type": "error",
                                                                   "error": {"type": "invalid_request", "message": "bad"}}}},
        {"custom_id": "r3", "result": {"type": "canceled"}}])
    server = Recorder({"id": "msgbatch_1", "processing_status": "in_progress"},
                      {"id": "msgbatch_1", "processing_status": "ended", "results_url": "https://api.test/v1/r/1",
                       "request_counts": {"succeeded": 1, "errored": 1, "canceled": 1}},
                      httpx.Response(200, content=results.encode()))
    model = AnthropicModel("anthropic/claude-x", config=ProviderConfig("anthropic", "https://api.test/v1", api_key="ak"),
                           transport=httpx.MockTransport(server))
    provider = AnthropicBatch()
    line = provider.line(model, "r1", REQUEST)
    assert line["custom_id"] == "r1" and line["params"]["model"] == "claude-x" and line["params"]["max_tokens"] > 0
    assert asyncio.run(provider.submit(model, [line], "label")) == "msgbatch_1"
    assert server.requests[0].url.path == "/v1/messages/batches" and server.requests[0].headers["x-api-key"] == "ak"
    assert json.loads(server.requests[0].content) == {"requests": [line]}
    status = asyncio.run(provider.poll(model, "msgbatch_1"))
    assert status.state == ENDED and "1 canceled" in status.detail
    fetched = collect(provider, model, "msgbatch_1", status, tmp_path)
    assert str(server.requests[-1].url) == "https://api.test/v1/r/1" and server.requests[-1].headers["x-api-key"] == "ak"
    assert [(f.custom_id, f.result.error) for f in fetched] == [("r1", None), ("r2", "bad"),
                                                               ("r3", "the request canceled before it ran")]


def test_gemini_sends_inline_requests_and_reads_inlined_responses(tmp_path):
    done = {"name": "batches/b1", "metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "done": True,
            "response": {"inlinedResponses": {"inlinedResponses": [
                {"metadata": {"key": "r1"}, "response": {"candidates": [{"content": {"parts": [{"text": "yo"}]},
                                                                         "finishReason": "STOP"}]}},
                {"metadata": {"key": "r2"}, "error": {"code": 400, "message": "invalid"}}]}}}
    server = Recorder({"name": "batches/b1"}, {"name": "batches/b1", "metadata": {"state": "BATCH_STATE_RUNNING"}},
                      done, done)
    model = GeminiModel("googleai/gemini-x", config=ProviderConfig("googleai", "https://api.test/v1beta", api_key="gk"),
                        transport=httpx.MockTransport(server))
    provider = GeminiBatch()
    line = provider.line(model, "r1", REQUEST)
    assert line["metadata"] == {"key": "r1"} and line["request"]["contents"][0]["parts"] == [{"text": "Row 1"}]
    assert asyncio.run(provider.submit(model, [line], "label")) == "b1"
    submitted = server.requests[0]
    assert submitted.url.path == "/v1beta/models/gemini-x:batchGenerateContent" and submitted.headers["x-goog-api-key"] == "gk"
    assert json.loads(submitted.content)["batch"]["input_config"]["requests"]["requests"] == [line]
    assert asyncio.run(provider.poll(model, "b1")).state == IN_PROGRESS
    status = asyncio.run(provider.poll(model, "b1"))
    assert status.state == ENDED and server.requests[-1].url.path == "/v1beta/batches/b1"
    fetched = collect(provider, model, "b1", status, tmp_path)
    assert [(f.custom_id, f.result.error, f.result.status) for f in fetched] == [("r1", None, None), ("r2", "invalid", 400)]
    assert GeminiBatch.parse(fetched[0].result.data, "googleai").message.text == "yo"
    assert all("gk" not in str(request.url) for request in server.requests)


def test_anthropic_never_sends_the_key_to_a_results_url_on_another_origin(tmp_path):
    # The status reply names where to download; the download carries x-api-key. A URL on another host,
    # port, scheme or with credentials gives way to the documented path on the configured API.
    line = json.dumps({"custom_id": "r1", "result": {"type": "canceled"}}).encode()
    for foreign in ["https://evil.test/v1/r/1", "http://api.test/v1/r/1", "https://api.test:8443/v1/r/1",
                    "https://user:pw@api.test/v1/r/1", "//evil.test/r", "not a url \n"]:
        server = Recorder({"id": "msgbatch_1", "processing_status": "ended", "results_url": foreign},
                          httpx.Response(200, content=line))
        model = AnthropicModel("anthropic/claude-x", config=ProviderConfig("anthropic", "https://api.test/v1",
                                                                          api_key="ak"),
                               transport=httpx.MockTransport(server))
        provider = AnthropicBatch()
        status = asyncio.run(provider.poll(model, "msgbatch_1"))
        fetched = collect(provider, model, "msgbatch_1", status, tmp_path)
        assert str(server.requests[-1].url) == "https://api.test/v1/messages/batches/msgbatch_1/results", foreign
        assert all(request.url.host == "api.test" for request in server.requests)
        assert [f.custom_id for f in fetched] == ["r1"]
