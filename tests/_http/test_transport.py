"""The aiohttp transport (httpx-aiohttp) under the providers: replies, streaming, timeouts and error
translation are the same as with httpx's own, against a real loopback server."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
from httpx_aiohttp import AiohttpTransport

from dotprompt._http.client import HttpClient, batch_transport
from dotprompt.errors import ModelError, UsageError
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai import OpenAIModel
from dotprompt.types import GenerateRequest, Message, Part
from tests.batch.fake_server import FakeProviders

TRANSPORTS = ["httpx", "aiohttp"]


@pytest.fixture(scope="module")
def server():
    with FakeProviders() as fake:
        yield fake


def model(base_url: str, **config) -> OpenAIModel:
    return OpenAIModel("openai/fake", config=ProviderConfig(provider="openai", base_url=f"{base_url}/v1", api_key="k",
                                                             **config))


def request(text: str) -> GenerateRequest:
    return GenerateRequest(messages=[Message(role="user", content=[Part(text=text)])])


def call(kind: str, chosen: OpenAIModel, text: str, chunks: list | None = None, monkeypatch=None):
    async def go():
        async with batch_transport() as used:
            assert used == kind
            transport = chosen.http.client()._transport
            on_chunk = chunks.append if chunks is not None else None
            return transport, await chosen.generate(request(text), on_chunk)

    return asyncio.run(go())


@pytest.fixture(params=TRANSPORTS)
def kind(request, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_HTTP_TRANSPORT", request.param)
    return request.param


def test_a_reply_comes_through_the_chosen_transport(server, kind):
    transport, response = call(kind, model(server.url), "row 21")
    assert isinstance(transport, AiohttpTransport if kind == "aiohttp" else httpx.AsyncHTTPTransport)
    assert response.message.content[0].text == '{"double": 42}' and response.usage.input_tokens == 10


def test_a_stream_arrives_in_chunks(server, kind):
    chunks: list = []
    _, response = call(kind, model(server.url), "row 5", chunks)
    assert len(chunks) >= 3 and "".join(p.text for c in chunks for p in c.content) == '{"double": 10}'
    assert response.message.content[0].text == '{"double": 10}'


def test_credentials_in_the_base_url_are_sent_as_httpx_sends_them(server, kind):
    _, response = call(kind, model(server.url.replace("http://", "http://user:pa55word-long@")), "row 3")
    assert response.message.content[0].text == '{"double": 6}'


def test_an_http_error_keeps_status_and_provider_message(server, kind):
    with pytest.raises(ModelError) as caught:
        call(kind, model(server.url), "FAIL500")
    assert caught.value.status == 500 and caught.value.retryable and "server exploded" in str(caught.value)


def test_the_proxy_from_the_environment_is_used_as_httpx_uses_it(server, kind, monkeypatch):
    # The fake server doubles as a plain HTTP proxy: it answers the absolute-form request a proxy gets.
    # The model host does not exist, so only a request through the proxy can succeed.
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    _, response = call(kind, model("http://models.invalid"), "row 4")
    assert response.message.content[0].text == '{"double": 8}'
    assert server.targets[-1] == "http://models.invalid/v1/chat/completions"


def test_no_proxy_exempts_the_model_host(server, kind, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there: using it would fail
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    _, response = call(kind, model(server.url), "row 6")
    assert response.message.content[0].text == '{"double": 12}'
    assert server.targets[-1] == "/v1/chat/completions"


def test_the_request_is_what_httpx_would_build(server, kind):
    # The providers build their requests without httpx's build_request; the server must not see a difference.
    chosen = model(server.url)
    chosen.config.headers["x-team"] = "extraction"  # a configured header, merged under the call's own
    call(kind, chosen, "row 7 — é ✓ 😀")
    headers, body = server.received[-1]
    assert body == json.dumps(json.loads(body), ensure_ascii=False, separators=(",", ":")).encode()
    assert "é ✓ 😀" in body.decode("utf-8") and headers["content-length"] == str(len(body))
    assert headers["content-type"] == "application/json" and headers["authorization"] == "Bearer k"
    assert headers["x-team"] == "extraction" and headers["host"] == server.url.removeprefix("http://")
    assert server.targets[-1] == "/v1/chat/completions"


def test_a_cookie_the_server_set_goes_back_with_the_next_request(server, kind, monkeypatch):
    # Load balancers pin a client with a cookie; an httpx client sends it back, so must the providers'
    # (each pooled client keeps its own cookies, as before: one pool here, so the next call reuses it).
    monkeypatch.setattr(HttpClient, "POOLS", 1)
    chosen = model(server.url)

    async def two_calls():
        async with batch_transport():
            await chosen.generate(request("row 1"))
            await chosen.generate(request("row 2"))

    asyncio.run(two_calls())
    assert "affinity=node-7" in server.received[-1][0].get("cookie", "")


@pytest.mark.parametrize(("proxy", "problem"), [("::::", "is not a usable URL"),
                                               ("socks5://127.0.0.1:1080", "is a socks5 proxy")])
def test_a_proxy_the_aiohttp_transport_cannot_use_is_a_clear_error(server, proxy, problem, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_HTTP_TRANSPORT", "aiohttp")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with pytest.raises(UsageError, match=problem) as caught:
        call("aiohttp", model("http://models.invalid"), "row 1")
    assert "HTTP_PROXY" in str(caught.value) and "models.invalid" in str(caught.value)


def test_a_slow_server_is_a_retryable_timeout(server, kind):
    with pytest.raises(ModelError, match=r"timed out after 0\.3 s") as caught:
        call(kind, model(server.url, timeout=0.3), "SLOW20 row 1")
    assert caught.value.retryable
    # ... and says how to wait longer
    assert "raise `timeout` in [tool.dotprompt.providers.openai] of pyproject.toml" in str(caught.value)


def test_a_closed_port_is_a_connect_error(kind):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError, match="cannot connect to") as caught:
        call(kind, model(f"http://127.0.0.1:{port}"), "row 1")
    assert caught.value.retryable


def test_a_hang_up_is_a_failed_connection_not_a_timeout(server, kind):
    with pytest.raises(ModelError) as caught:
        call(kind, model(server.url), "HANGUP")
    assert "timed out" not in str(caught.value) and caught.value.retryable


def test_a_stream_cut_short_keeps_what_arrived(server, kind):
    with pytest.raises(ModelError, match=r"the stream (broke|ended)") as caught:
        call(kind, model(server.url), "row 123456 STREAMCUT", chunks=[])
    assert caught.value.retryable and caught.value.partial


def test_the_size_cap_still_applies(server, kind):
    with pytest.raises(ModelError, match="larger than max_response_bytes"):
        call(kind, model(server.url, max_response_bytes=50), "row 1")


def test_the_deadline_still_ends_a_stream_that_keeps_coming(server, kind):
    # About ten events 10 ms apart: past a 40 ms deadline while bytes still arrive.
    with pytest.raises(ModelError, match="within the deadline") as caught:
        call(kind, model(server.url, deadline=0.04, timeout=5), "row 123456789012345678901234", chunks=[])
    assert caught.value.retryable


def test_batch_transport_closes_its_sessions_on_leaving(server, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_HTTP_TRANSPORT", "aiohttp")
    chosen = model(server.url)

    async def go():
        async with batch_transport():
            await chosen.generate(request("row 2"))
            clients = {chosen.http.client() for _ in range(chosen.http.POOLS)}  # the clients made so far
        return [client.is_closed for client in clients]

    assert asyncio.run(go()) == [True]  # one call, one client made: closed on leaving


def test_an_unknown_transport_name_is_a_clear_error(server, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_HTTP_TRANSPORT", "curl")
    with pytest.raises(UsageError, match="DOTPROMPT_HTTP_TRANSPORT must be one of httpx, aiohttp"):
        call("curl", model(server.url), "row 1")
