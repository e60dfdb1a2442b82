"""HttpModel: the call every HTTP provider's model shares, and the stream-state protocol it drives.

A provider fills in the hooks (headers, path, body, reply, stream state); the HTTP itself is
`_http/client.py`. One streamed event takes one path: the client frames it (`_http/sse.py`), the
provider's state parses and checks it (`events.py`, `dialects/shape.py`) and hands on the chunk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from .._http.client import HttpClient
from .._http.errors import request_id
from .._http.sse import SSEEvent
from ..errors import ModelError
from ..types import GenerateRequest, ModelChunk, ModelResponse
from .base import Model, ModelInfo, OnChunk
from .config import ProviderConfig, ProviderSpec, provider_config
from .dialects.strict import Structured, log_fallback
from .tool_names import ToolNames

__all__ = ["HttpModel", "StreamedReply"]


class StreamedReply(Protocol):
    """A provider's reply being built from its stream events (the hooks `HttpModel._stream` calls)."""

    request_id: str | None
    chars: int  # text and arguments received so far (for the error messages)

    def parse(self, event: SSEEvent) -> Any:
        """The event's data, checked: an error event or a wrongly shaped one is a ModelError keeping the partial."""

    def add(self, data: Any, on_chunk: OnChunk) -> None: ...

    @property
    def finished(self) -> bool:
        """The last event has come: stop reading (a provider whose stream just ends says False)."""

    def incomplete(self) -> str | None:
        """Why the stream as read so far is no whole reply, or None when it is."""

    def reply(self) -> Any:
        """The reply as the provider's non-streamed JSON, for `HttpModel.reply`."""

    def snapshot(self) -> Any: ...

    def fail(self, message: str, *, retryable: bool = False) -> ModelError: ...


class HttpModel(Model):
    """What every HTTP provider's model shares: its name, the provider's model id, settings and client,
    and the call itself (build the body, POST it or read the stream, map the reply, errors).

    `specs` are the providers this class serves (the one whose prefix the name carries supplies the
    settings when none are given; a class serving one provider uses it for any name);
    `default_info` is the capabilities unless `info=` says otherwise. A provider fills in the hooks:
    `headers`, `path`, `structured`, `body`, `reply` and `stream_state`.
    """

    specs: tuple[ProviderSpec, ...] = ()
    default_info = ModelInfo()

    def __init__(self, name: str, *, model_id: str | None = None, config: ProviderConfig | None = None,
                 info: ModelInfo | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 deadline: float | None = None, max_response_bytes: int | None = None, auth: httpx.Auth | None = None,
                 params: Mapping[str, str] | None = None) -> None:
        prefix, _, rest = name.partition("/")
        self.name = name
        self.model_id = model_id or rest or name
        self.config = config or provider_config(self.spec_for(prefix))
        self.info = info or self.default_info
        self.http = HttpClient(self.config, transport=transport, deadline=deadline, max_response_bytes=max_response_bytes,
                               auth=auth, params=params)

    @classmethod
    def spec_for(cls, prefix: str) -> ProviderSpec:
        found = next((spec for spec in cls.specs if spec.prefix == prefix), None)
        if found is None and len(cls.specs) == 1:
            return cls.specs[0]
        return found or ProviderSpec(prefix)

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        names = ToolNames(request)  # tool names the provider refuses are sent wire-safe, and mapped back
        request = names.outbound(request)
        structured = self.structured(request)
        log_fallback(structured, self.name, self)
        body = self.body(request, stream=on_chunk is not None, structured=structured)
        if on_chunk is None:
            data, response = await self.http.post_json(self.path(False), body, self.headers())
            return names.inbound(self.reply(data, request_id(response), structured))
        if names:
            outer = on_chunk

            def on_chunk(chunk: ModelChunk) -> None:
                outer(names.chunk(chunk))
        return names.inbound(await self._stream(body, on_chunk, structured))

    def wire_request(self, request: GenerateRequest, *, stream: bool = False) -> dict[str, Any]:
        """The body this model would POST for `request` (what `preview_request(..., wire=True)` shows),
        with the wire-safe tool names the provider is sent."""
        request = ToolNames(request).outbound(request)
        return self.body(request, stream=stream, structured=self.structured(request))

    async def _stream(self, body: dict[str, Any], on_chunk: OnChunk, structured: Structured | None) -> ModelResponse:
        state = self.stream_state(structured)
        async with self.http.stream(self.path(True), body, self.headers()) as stream:
            state.request_id = stream.request_id
            try:
                async for event in stream.events(partial=state.snapshot):
                    state.add(state.parse(event), on_chunk)
                    if state.finished:
                        break
            except httpx.HTTPError as exc:
                raise state.fail(f"the stream broke after {state.chars} characters: {type(exc).__name__}: {exc}",
                                 retryable=True) from exc
        if (why := state.incomplete()) is not None:  # never hand on a reply that was silently cut short
            raise state.fail(why, retryable=True)
        return self.reply(state.reply(), state.request_id, structured)

    # -- the provider's hooks ----------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        return {}

    def path(self, stream: bool) -> str:
        """The endpoint below the base URL, for a streamed call or not."""
        raise NotImplementedError

    def structured(self, request: GenerateRequest) -> Structured | None:
        """How this request's output schema is enforced (None without one)."""
        raise NotImplementedError

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        raise NotImplementedError

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        """The provider's JSON reply as our response (`request`: the provider's request id, if it sent one)."""
        raise NotImplementedError

    def stream_state(self, structured: Structured | None) -> StreamedReply:
        raise NotImplementedError

