"""Helper markers and markers -> messages: the engine-neutral step of rendering.

Helpers (`role`, `history`, `media`, `section`) write markers into the rendered text; `to_messages`
turns the text into messages in one pass. Every marker carries a nonce drawn fresh for each render,
so text that comes from input data can never pose as a marker: it cannot switch roles, insert
history or add media.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..types import Message

__all__ = ["ROLES", "Helper", "Markers", "to_messages"]

ROLES = ("system", "user", "model", "tool")


class Markers:
    """The helpers of one render. Each returns a marker string only this render can recognise."""

    __slots__ = ("end", "start")

    def __init__(self) -> None:
        nonce = secrets.token_hex(12)
        self.start = f"\x02{nonce}:"
        self.end = f"\x03{nonce}"

    def role(self, name: str) -> str:
        if name not in ROLES:
            raise ValueError(f"role() takes one of {', '.join(ROLES)}, got {name!r}")
        return f"{self.start}role:{name}{self.end}"

    def history(self) -> str:
        return f"{self.start}history:{self.end}"

    def media(self, url: str, content_type: str | None = None, contentType: str | None = None) -> str:  # noqa: N803 - Dotprompt spelling accepted
        payload = json.dumps([str(url), content_type or contentType])
        return f"{self.start}media:{payload}{self.end}"

    def section(self, name: str) -> str:
        return f"{self.start}section:{name}{self.end}"

    def variables(self) -> dict[str, Callable[..., str]]:
        return {name: Helper(name, getattr(self, name), usage) for name, usage in _USAGE.items()}

    def tokens(self, text: str) -> Iterable[tuple[str, str]]:
        """(kind, value) pairs in order; kind "text" for plain text."""
        pieces = text.split(self.start)
        yield "text", pieces[0]
        for piece in pieces[1:]:
            head, found, rest = piece.partition(self.end)
            if not found:  # cannot happen without the nonce; keep the text rather than lose it
                yield "text", self.start + piece
                continue
            kind, _, value = head.partition(":")
            yield kind, value
            yield "text", rest


_USAGE = {"role": 'role("system")', "history": "history()", "media": 'media(url, "image/png")',
          "section": 'section("output")'}


class Helper:
    """A marker helper as a jinja2 template sees it: called, it writes its marker; printed uncalled
    (`{{ role }}`, often meant as an input field of that name) it fails instead of writing
    `<bound method ...>` into the prompt."""

    __slots__ = ("function", "name", "usage")

    def __init__(self, name: str, function: Callable[..., str], usage: str) -> None:
        self.name = name
        self.function = function
        self.usage = usage

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return self.function(*args, **kwargs)

    def __str__(self) -> str:
        raise ValueError(f"`{self.name}` is the template helper {self.name}(), not a value: call it, as in "
                         f"{{{{ {self.usage} }}}}; an input field named `{self.name}` cannot be read in a jinja2 "
                         f"template: rename the field")

    __html__ = __str__


class _MessageBuilder:
    def __init__(self, make: Callable[..., Any], message: Any) -> None:
        self.make = make
        self.message = message
        self.messages: list[Any] = []
        self.role = "user"
        self.parts: list[Any] = []
        self.history_placed = False

    def flush(self, next_role: str) -> None:
        if self.parts:
            self.messages.append(self.make(self.message, role=self.role, content=self.parts))
            self.parts = []
        self.role = next_role

    def add_history(self, history: Sequence[Message]) -> None:
        self.flush("model")
        self.messages.extend(_marked_as_history(history))
        self.history_placed = True


def to_messages(text: str, markers: Markers, history: Sequence[Message] = (), *, view: bool = False) -> list[Message]:
    """Rendered text -> messages, as Dotprompt defines it. `view=True`: the same messages as the plain
    classes of document/view.py (for `dotprompt render`'s printout, which loads no pydantic)."""
    message: Any
    part: Any
    media_of: Any
    make: Callable[..., Any]
    if view:
        from ..document.view import ViewMedia, ViewMessage, ViewPart

        message, part, media_of, make = ViewMessage, ViewPart, ViewMedia, _call
    else:
        types = _types if _types is not None else _load_types()
        message, part, media_of, make = types.Message, types.Part, types.Media, types.construct
    build = _MessageBuilder(make, message)
    for kind, value in markers.tokens(text):
        if kind == "text":
            if value.strip():
                build.parts.append(make(part, text=value))
        elif kind == "role":
            build.flush(value)
        elif kind == "history":
            build.add_history(history)
        elif kind == "media":
            url, content_type = json.loads(value)
            build.parts.append(make(part, media=make(media_of, url=url, content_type=content_type)))
        elif kind == "section":
            build.parts.append(make(part, metadata={"purpose": value, "pending": True}))
    build.flush("user")
    if history and not build.history_placed:
        return _place_history(build.messages, list(history))
    return build.messages


def _call(cls: Callable[..., Any], **values: Any) -> Any:
    return cls(**values)


# dotprompt.types (pydantic), imported on the first render rather than with this module: `check` compiles
# every prompt and renders none. Kept here once loaded: an import statement on every render cost a few µs.
_types: Any = None


def _load_types() -> Any:
    global _types
    from .. import types

    _types = types
    return types


def _marked_as_history(history: Sequence[Message]) -> list[Message]:
    return [m.model_copy(update={"metadata": {**(m.metadata or {}), "purpose": "history"}}) for m in history]


def _place_history(messages: list[Message], history: list[Message]) -> list[Message]:
    # The template never placed history: before the final user turn, else at the end.
    if messages and messages[-1].role == "user":
        return [*messages[:-1], *history, messages[-1]]
    return [*messages, *history]
