"""The hand-written request path (`_http/request.py`) against httpx's own (`client.stream`): the same calls,
both ways, to a real loopback server, must look the same to the server and to the caller: headers, body,
cookies kept and sent back, redirects not followed, errors translated alike. Both transports: the
aiohttp one is also called past `client.send`."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest

from dotprompt._http.client import HttpClient, batch_transport
from dotprompt.errors import ModelError
from dotprompt.providers.config import ProviderConfig
from tests.providers.mock_server import Loopback

BODY = {"model": "m", "messages": [{"role": "user", "content": "é ✓ 😀 \u2028"}], "n": 1.5, "none": None}
CALL_HEADERS = {"Authorization": "Bearer k", "X-Call": "one", "user-agent": "mine/1"}


def reply(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path.endswith("/first"):  # cookies of every kind: kept for this path, for another, and one to drop later
        return httpx.Response(200, json={"ok": 1}, headers=[
            ("set-cookie", "affinity=node-7; Path=/v1"), ("set-cookie", "elsewhere=x; Path=/other"),
            ("set-cookie", "short=lived; Path=/"), ("set-cookie", "other-host=1; Domain=example.com; Path=/"),
            ("x-request-id", "req-1")])
    if path.endswith("/second"):
        return httpx.Response(200, json={"ok": 2}, headers=[("set-cookie", "short=gone; Max-Age=0; Path=/")])
    if path.endswith("/moved"):
        return httpx.Response(307, json={"moved": True}, headers={"location": "/v1/first"})
    if path.endswith("/limited"):
        return httpx.Response(429, json={"error": {"message": "slow down", "type": "rate_limit"}},
                              headers={"retry-after": "7", "x-request-id": "req-9"})
    return httpx.Response(200, content=b"not json")


def seen(request: httpx.Request) -> tuple[str, str, list[tuple[str, str]], bytes]:
    """What the server saw, header names in lower case (their case and order mean nothing in HTTP)."""
    headers = sorted((name.lower(), value) for name, value in request.headers.multi_items())
    return request.method, request.url.raw_path.decode(), headers, request.content


def outcome(result: Any) -> Any:
    if isinstance(result, ModelError):
        return ("error", str(result), result.status, result.retryable, result.retry_after, result.request_id)
    data, response = result
    return ("reply", data, response.status_code)


async def calls(http: HttpClient) -> list[Any]:
    results: list[Any] = []
    async with batch_transport():
        for path in ("/first", "/second", "/third", "/moved", "/limited", "/text"):
            try:
                results.append(outcome(await http.post_json(path, BODY, CALL_HEADERS)))
            except ModelError as exc:
                results.append(outcome(exc))
    return results


def run_both_ways(base_path: str, monkeypatch) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """(our results, httpx's, what the server saw of ours, of httpx's) for the same calls."""
    monkeypatch.setattr(HttpClient, "POOLS", 1)  # one client, one cookie jar, as a run of calls one after another

    def one_way(built: bool, server: Loopback, config: ProviderConfig) -> tuple[list[Any], list[Any]]:
        monkeypatch.setattr(HttpClient, "BUILD_REQUESTS", built)
        start = len(server.requests)
        results = asyncio.run(calls(HttpClient(config)))
        return results, [seen(r) for r in server.requests[start:]]

    with Loopback(reply, keep_alive=True) as server:
        config = ProviderConfig("openai", f"{server.url}{base_path}", "k",
                                headers={"X-Team": "extraction", "Accept": "application/json"})
        ours, ours_seen = one_way(True, server, config)
        plain, plain_seen = one_way(False, server, config)
    return ours, plain, ours_seen, plain_seen


@pytest.fixture(params=["httpx", "aiohttp"])
def kind(request, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_HTTP_TRANSPORT", request.param)
    return request.param


@pytest.mark.parametrize("base", ["/v1", "/v1/"], ids=["base", "base-with-slash"])
def test_the_server_sees_the_same_requests_both_ways(kind, base, monkeypatch):
    _, _, ours_seen, plain_seen = run_both_ways(base, monkeypatch)
    assert ours_seen == plain_seen
    assert len(ours_seen) == 6  # the 307 was not followed either way
    cookies = [dict(headers).get("cookie") for _, _, headers, _ in ours_seen]
    assert cookies[0] is None and cookies[1] == "affinity=node-7; short=lived" and cookies[2] == "affinity=node-7"


@pytest.mark.parametrize("base", ["/v1"])
def test_the_caller_gets_the_same_replies_and_errors_both_ways(kind, base, monkeypatch):
    ours, plain, _, _ = run_both_ways(base, monkeypatch)
    assert ours == plain
    assert ours[3] == ("reply", {"moved": True}, 307)
    assert ours[4] == ("error", "openai HTTP 429 request req-9: slow down", 429, True, 7.0, "req-9")
    assert ours[5][0] == "error" and "not JSON" in ours[5][1]


def test_a_closed_port_is_the_same_error_both_ways(kind, monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ProviderConfig("openai", f"http://127.0.0.1:{port}/v1", "k")

    def error(built: bool) -> str:
        monkeypatch.setattr(HttpClient, "BUILD_REQUESTS", built)

        async def go() -> str:
            async with batch_transport():
                with pytest.raises(ModelError) as caught:
                    await HttpClient(config).post_json("/chat/completions", BODY, CALL_HEADERS)
            return str(caught.value)

        return asyncio.run(go())

    assert error(True) == error(False)


def test_a_body_httpx_refuses_is_refused_alike(kind, monkeypatch):
    # NaN is no JSON: httpx's json= raises ValueError before sending; so does the hand-built body.
    async def go() -> type[BaseException]:
        async with batch_transport():
            try:
                await HttpClient(ProviderConfig("openai", "http://127.0.0.1:9/v1", "k")).post_json(
                    "/x", {"n": float("nan")}, {})
            except BaseException as exc:  # which kind is what is compared
                return type(exc)
        return type(None)

    monkeypatch.setattr(HttpClient, "BUILD_REQUESTS", True)
    ours = asyncio.run(go())
    monkeypatch.setattr(HttpClient, "BUILD_REQUESTS", False)
    assert ours is asyncio.run(go()) is ValueError
