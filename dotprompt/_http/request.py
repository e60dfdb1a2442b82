"""A provider's POST built from parts worked out once, and sent past `client.send` where it adds nothing.

The trick, alone with its proof. httpx's `client.build_request` merges URL, headers, cookies and
parameters anew on every call: it was a quarter of httpx's time per call; and `client.send` updates
the cookie jar on every reply, a tenth of a call even with no cookie to keep (bench/HISTORY.md has
the figures). Here the client's own headers are read once per pooled client, and what the aiohttp
transport is given directly skips `client.send` (no auth, no redirects to follow: only the cookie
jar, updated here when a reply sets a cookie). The same request results:
`tests/_http/test_request.py` sends each call both ways (`HttpClient.BUILD_REQUESTS`) and compares
what the server sees: headers, body, cookies, redirects and errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Pooled", "build_post", "pooled_client", "send"]


@dataclass
class Pooled:
    """A pooled client, with what its requests reuse: its own headers (httpx's defaults and the
    configured ones, names in lower case), and its transport when that is called directly."""

    client: httpx.AsyncClient
    headers: dict[str, str]
    direct: httpx.AsyncBaseTransport | None
    busy: int = 0  # requests in flight on it


def pooled_client(client: httpx.AsyncClient, direct: httpx.AsyncBaseTransport | None) -> Pooled:
    """`client` with its headers read once; `direct`: the transport to call past client.send, if any."""
    return Pooled(client, {name.lower(): value for name, value in client.headers.items()}, direct)


def build_post(pooled: Pooled, url: httpx.URL, body: Mapping[str, Any], headers: Mapping[str, str],
               timeout: dict[str, Any]) -> httpx.Request:
    """The request `client.build_request("POST", url, json=body, headers=headers)` would make."""
    client = pooled.client
    merged = {**pooled.headers, **{name.lower(): value for name, value in headers.items()}}
    merged.setdefault("content-type", "application/json")
    # The bytes httpx's `json=` sends (allow_nan=False: a NaN is a ValueError there too).
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    request = httpx.Request("POST", url, headers=merged, content=content, extensions={"timeout": timeout})
    if client.cookies:  # a provider's cookies (a load balancer's) go back, as build_request sends them
        client.cookies.set_cookie_header(request)
    return request


async def send(pooled: Pooled, request: httpx.Request) -> httpx.Response:
    """The streamed response to `request`, through client.send or straight to the transport."""
    if pooled.direct is None:
        return await pooled.client.send(request, stream=True)
    # What client.send adds around the transport is auth (none here), redirects (not followed) and the
    # cookie jar, whose update cost a tenth of the call even with no cookie to keep.
    response = await pooled.direct.handle_async_request(request)
    if "set-cookie" in response.headers:
        pooled.client.cookies.extract_cookies(response)
    return response
