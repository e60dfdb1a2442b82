"""What a generate run returns (GenerateResponse) and streams (Chunk)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ..formats.types import LazyValue
from ..types import FinishReason, GenerateRequest, Message, Part, ToolRequest, Usage, WireModel


@dataclass(frozen=True)
class Attempt:
    """One failed try of `validate_and_retry`: what the model said, why it failed, what it cost."""

    text: str
    problems: list[str]
    usage: Usage | None


class GenerateResponse(WireModel):
    """The final model message plus the whole conversation, the request of the last turn and the output."""

    message: Message
    finish_reason: FinishReason = "stop"
    finish_message: str | None = None
    usage: Usage | None = None
    request: GenerateRequest | None = None
    custom: Any = None
    raw: Any = None
    # Not part of the wire shape: the parsed output and how we got it.
    parsed: Any = Field(default=None, exclude=True)
    output_repairs: list[Any] = Field(default_factory=list, exclude=True)
    attempts: list[Attempt] = Field(default_factory=list, exclude=True)

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def output(self) -> Any:
        """The validated output: a pydantic instance when an output type was given, else JSON data or text."""
        return self.parsed

    @property
    def messages(self) -> list[Message]:
        """The whole conversation: everything sent in the last request, then the final model message."""
        sent = self.request.messages if self.request is not None else []
        return [*sent, self.message]

    @property
    def tool_requests(self) -> list[ToolRequest]:
        return [p.tool_request for p in self.message.content if p.tool_request is not None]

    @property
    def interrupts(self) -> list[Part]:
        """The tool-request parts that interrupted (exit C), each with `metadata["interrupt"]`."""
        return [p for p in self.message.content if p.tool_request is not None and p.metadata and "interrupt" in p.metadata]


@dataclass
class StreamState:
    """Shared across every chunk of one run: the chunks so far and each message's text pieces."""

    chunks: list[Chunk] = field(default_factory=list)
    texts: dict[int, list[str]] = field(default_factory=dict)


class Chunk:
    """One streamed piece. `index` is the message it belongs to; it advances when the role changes."""

    __slots__ = ("_output", "_position", "_state", "_upto", "content", "index", "role")

    def __init__(self, index: int, role: str, content: list[Part], state: StreamState) -> None:
        self.index = index
        self.role = role
        self.content = content
        self._output: Any = None
        self._state = state
        self._position = len(state.chunks)
        pieces = state.texts.setdefault(index, [])
        text = self.text
        if text:
            pieces.append(text)
        self._upto = len(pieces)
        state.chunks.append(self)

    def __repr__(self) -> str:
        return f"Chunk(index={self.index}, role={self.role!r}, text={self.text!r})"

    @property
    def output(self) -> Any:
        """The output parsed so far. Built on first read (the run keeps every chunk, so a copy per
        chunk would cost memory quadratic in the reply), then kept: later chunks never change it."""
        if isinstance(self._output, LazyValue):
            self._output = self._output.value
        return self._output

    @output.setter
    def output(self, value: Any) -> None:
        self._output = value

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if p.text is not None)

    @property
    def previous_chunks(self) -> list[Chunk]:
        return self._state.chunks[: self._position]

    @property
    def accumulated_text(self) -> str:
        """This message's text up to and including this chunk."""
        return "".join(self._state.texts[self.index][: self._upto])

    @property
    def tool_requests(self) -> list[ToolRequest]:
        return [p.tool_request for p in self.content if p.tool_request is not None]


ChunkCallback = Callable[[Chunk], Any]
