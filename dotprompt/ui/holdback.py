"""A live run's chunk events made safe to send whole: no secret split across two chunks reaches a page.

Each event is redacted on its own (safejson), so a key the model repeats in two pieces would pass as
two harmless halves. So a message's text is redacted as it accumulates and its end is held back while
it could still be the start of a known secret (or of a URL's credentials): the next piece shows what
it is, and the message's next event, or its end, sends it (masked if it was a secret). The parsed
output is held with it, since it is parsed from the same text. A tool call's arguments, streamed as
the whole text so far, are shown without such an end.
"""

from __future__ import annotations

from typing import Any

from .._util.redact import redact, unsafe_tail

__all__ = ["HeldText"]


class HeldText:
    """The held ends of a run's messages, by message index."""

    def __init__(self) -> None:
        self._held: dict[int, dict[str, Any]] = {}  # index -> an event holding the held text (and output)

    def chunk(self, event: dict[str, Any], secrets: list[str]) -> list[dict[str, Any]]:
        """The events to send for a chunk event: the held ends of other messages first, then this one's
        safe part (none when it is all held)."""
        out = self.flush(keep=event["index"])
        held = self._held.pop(event["index"], None)
        text = redact((held["text"] if held else "") + event["text"], secrets)
        cut = unsafe_tail(text, secrets)
        event = {**event, "text": text[:len(text) - cut]}
        if "toolRequests" in event:
            event["toolRequests"] = [_safe_request(r, secrets) for r in event["toolRequests"]]
        if cut:
            self._hold(event, text[len(text) - cut:], held)
        elif held is not None and "output" in held and "output" not in event:
            event["output"] = held["output"]  # the newest output there is, held with the text it came from
        if event["text"] or event.get("toolRequests") or "output" in event:
            out.append(event)
        return out

    def _hold(self, event: dict[str, Any], tail: str, before: dict[str, Any] | None) -> None:
        held = {"type": "chunk", "index": event["index"], "role": event["role"], "text": tail}
        output = event.pop("output", (before or {}).get("output"))
        if output is not None:
            held["output"] = output  # parsed from text that includes the held end: sent with it
        self._held[event["index"]] = held

    def flush(self, keep: int | None = None) -> list[dict[str, Any]]:
        """The held ends of every message but `keep`'s, as chunk events (a message's end is its own)."""
        return [self._held.pop(index) for index in [i for i in self._held if i != keep]]


def _safe_request(request: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    value = request.get("input")
    if not request.get("partial") or not isinstance(value, str):
        return request
    text = redact(value, secrets)
    return {**request, "input": text[:len(text) - unsafe_tail(text, secrets)]}
