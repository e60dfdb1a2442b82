"""Server-sent events framed as the SSE spec frames them, from a response's bytes; nothing else.

Lines are split on CR and LF only, not with `aiter_lines()`, which also splits on U+2028/U+2029/U+0085
inside a token. (httpx-sse frames the same way but owns the read loop, so the byte cap of
`HttpClient.chunks` could not act before a long line is buffered, and it refuses a stream whose
Content-Type is not text/event-stream, which works today.)
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

import httpx

__all__ = ["SSEEvent", "sse_events"]


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str



async def sse_events(source: httpx.Response | AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """Server-sent events from a streamed response (or its bytes), as the SSE spec frames them:
    lines end at CR, LF or CRLF only; a blank line ends an event; `:` lines are comments (keep-alives)."""
    chunks = source.aiter_bytes() if isinstance(source, httpx.Response) else source
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines, builder = _LineSplitter(), _EventBuilder()
    first = True
    async for chunk in chunks:
        text = decoder.decode(chunk)
        if first and text:
            text, first = text.removeprefix("\ufeff"), False  # the spec allows one leading BOM
        for line in lines.feed(text):
            if (event := builder.line(line)) is not None:
                yield event
    for line in [*lines.feed(decoder.decode(b"", final=True)), *lines.close(), ""]:  # "": a last event without its blank line
        if (event := builder.line(line)) is not None:
            yield event


class _EventBuilder:
    """Applies SSE lines to the event being built; a blank line finishes it (if it has data)."""

    def __init__(self) -> None:
        self.event: str = ""
        self.data: list[str] = []

    def line(self, line: str) -> SSEEvent | None:
        if not line:
            done = SSEEvent(self.event or "message", "\n".join(self.data)) if self.data else None
            self.event, self.data = "", []
            return done
        if line.startswith(":"):
            return None  # a comment / keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.data.append(value)
        elif name == "event":
            self.event = value
        return None


class _LineSplitter:
    """Incremental line splitting at CR, LF and CRLF only (a CRLF may be cut between two chunks).

    A line's pieces are kept in a list, not concatenated per chunk, so a long line costs linear time."""

    def __init__(self) -> None:
        self.pending: list[str] = []
        self.after_cr = False

    def feed(self, text: str) -> list[str]:
        if self.after_cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF whose CR ended the previous chunk
        self.after_cr = False
        lines, start = [], 0
        for match in _EOL.finditer(text):
            self.pending.append(text[start:match.start()])
            lines.append("".join(self.pending))
            self.pending = []
            start = match.end()
        if start < len(text):
            self.pending.append(text[start:])
        elif text.endswith("\r"):
            self.after_cr = True
        return lines

    def close(self) -> list[str]:
        return ["".join(self.pending)] if self.pending else []


_EOL = re.compile(r"\r\n|\r|\n")

