"""The jinja2 engine: a sandboxed environment, the Dotprompt helpers, and markers -> messages.

Helpers write markers into the rendered text; `to_messages` turns the text into messages in
one pass. Every marker carries a nonce drawn fresh for each render, so text that comes from
input data can never pose as a marker: it cannot switch roles, insert history or add media.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from jinja2 import BaseLoader, ChainableUndefined, TemplateNotFound, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .types import Media, Message, Part, construct

# Names a template sees besides the caller's input; they win over input keys of the same name.
RESERVED_NAMES = frozenset({"role", "history", "media", "section", "ctx"})
_ROLES = ("system", "user", "model", "tool")
_HANDLEBARS = re.compile(r"{{~?\s*(?:[#/>^!@]|(?:role|history|media|section|json|ifEquals|unlessEquals)\s+[\"'\w@])")
HANDLEBARS_HINT = ("this looks like Handlebars syntax; write jinja2 "
                   "({{ role(\"system\") }}, {% if x %}, {% include \"name\" %}) or use the handlebars engine: "
                   "add `dotprompt.engine: handlebars` to the frontmatter or PromptLibrary(engine=\"handlebars\")")


def looks_like_handlebars(source: str) -> bool:
    return _HANDLEBARS.search(source) is not None


class SandboxUndefined(ChainableUndefined):
    """Missing values render as empty text (as in Handlebars); blocked attributes fail loudly."""

    __slots__ = ()

    def _blocked(self) -> bool:
        return self._undefined_exception is SecurityError

    def __str__(self) -> str:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__str__()

    def __getattr__(self, name: str) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getattr__(name)

    def __getitem__(self, name: Any) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getitem__(name)


def to_json(value: Any, indent: int | None = None) -> str:
    """`{{ value | json }}`: compact by default, pretty with indent=N; non-ASCII kept as is."""
    if isinstance(value, SandboxUndefined):
        return ""
    if indent:
        return json.dumps(value, indent=int(indent), ensure_ascii=False, default=_jsonable)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _finalize(value: Any) -> Any:
    # None renders as empty text, like a missing value, never as the word "None".
    return "" if value is None else value


def make_environment(loader: BaseLoader | None) -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=loader,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,  # a block tag on its own line leaves no blank line behind
        lstrip_blocks=True,
        undefined=SandboxUndefined,
        finalize=_finalize,
        auto_reload=True,
        cache_size=-1,
    )
    env.filters["json"] = to_json
    return env


def with_line_offset(body: str, first_line: int) -> str:
    """Prefix a body so jinja's line numbers are the file's: a comment spanning the frontmatter.

    The body is already stripped of leading whitespace, so the comment's `-` eats nothing.
    """
    if first_line <= 1:
        return body
    return "{#" + "\n" * (first_line - 1) + "-#}" + body


def included_names(ast: nodes.Template) -> list[tuple[str, int]]:
    """Constant partial names used by `{% include %}` / `{% import %}`, with their lines."""
    found: list[tuple[str, int]] = []
    for node in ast.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        if isinstance(node.template, nodes.Const) and isinstance(node.template.value, str):
            found.append((node.template.value, node.lineno))
    return found


class Markers:
    """The helpers of one render. Each returns a marker string only this render can recognise."""

    __slots__ = ("end", "start")

    def __init__(self) -> None:
        nonce = secrets.token_hex(12)
        self.start = f"\x02{nonce}:"
        self.end = f"\x03{nonce}"

    def role(self, name: str) -> str:
        if name not in _ROLES:
            raise ValueError(f"role() takes one of {', '.join(_ROLES)}, got {name!r}")
        return f"{self.start}role:{name}{self.end}"

    def history(self) -> str:
        return f"{self.start}history:{self.end}"

    def media(self, url: str, content_type: str | None = None, contentType: str | None = None) -> str:  # noqa: N803 - Dotprompt spelling accepted
        payload = json.dumps([str(url), content_type or contentType])
        return f"{self.start}media:{payload}{self.end}"

    def section(self, name: str) -> str:
        return f"{self.start}section:{name}{self.end}"

    def variables(self) -> dict[str, Callable[..., str]]:
        return {"role": self.role, "history": self.history, "media": self.media, "section": self.section}

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


class _MessageBuilder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.role = "user"
        self.parts: list[Part] = []
        self.history_placed = False

    def flush(self, next_role: str) -> None:
        if self.parts:
            self.messages.append(construct(Message, role=self.role, content=self.parts))
            self.parts = []
        self.role = next_role

    def add_history(self, history: Sequence[Message]) -> None:
        self.flush("model")
        self.messages.extend(_marked_as_history(history))
        self.history_placed = True


def to_messages(text: str, markers: Markers, history: Sequence[Message] = ()) -> list[Message]:
    """Rendered text -> messages, as Dotprompt defines it."""
    build = _MessageBuilder()
    for kind, value in markers.tokens(text):
        if kind == "text":
            if value.strip():
                build.parts.append(construct(Part, text=value))
        elif kind == "role":
            build.flush(value)
        elif kind == "history":
            build.add_history(history)
        elif kind == "media":
            url, content_type = json.loads(value)
            media = construct(Media, url=url, content_type=content_type)
            build.parts.append(construct(Part, media=media))
        elif kind == "section":
            build.parts.append(construct(Part, metadata={"purpose": value, "pending": True}))
    build.flush("user")
    if history and not build.history_placed:
        return _place_history(build.messages, list(history))
    return build.messages


def _marked_as_history(history: Sequence[Message]) -> list[Message]:
    return [m.model_copy(update={"metadata": {**(m.metadata or {}), "purpose": "history"}}) for m in history]


def _place_history(messages: list[Message], history: list[Message]) -> list[Message]:
    # The template never placed history: before the final user turn, else at the end.
    if messages and messages[-1].role == "user":
        return [*messages[:-1], *history, messages[-1]]
    return [*messages, *history]


class FunctionLoader(BaseLoader):
    """Partials by name from a callable returning (source, filename, uptodate) or None."""

    def __init__(self, find: Callable[[str], tuple[str, str | None, Callable[[], bool]] | None]) -> None:
        self._find = find

    def get_source(self, environment: Any, template: str) -> tuple[str, str | None, Callable[[], bool]]:
        found = self._find(template)
        if found is None:
            raise TemplateNotFound(template)
        return found
