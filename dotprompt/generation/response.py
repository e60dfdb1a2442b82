"""What a generate run returns (GenerateResponse) and streams (Chunk)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic

from pydantic import Field
from typing_extensions import TypeVar

from ..formats.base import LazyValue
from ..identity import PromptIdentity
from ..types import FinishReason, GenerateRequest, Message, Part, ToolRequest, Usage, WireModel

__all__ = ["Attempt", "Chunk", "ChunkCallback", "ChunkHistory", "GenerateResponse", "OutputT", "PartialT"]

# What a typed prompt's output and its streamed chunks' output are (`Prompt[Input, Output, Partial]`,
# `dotprompt types`); Any when untyped: the JSON data, as before.
OutputT = TypeVar("OutputT", default=Any)
PartialT = TypeVar("PartialT", default=Any)


@dataclass(frozen=True)
class Attempt:
    """One failed try of `validate_and_retry`: what the model said, why it failed, what it cost."""

    text: str
    problems: list[str]
    usage: Usage | None


class GenerateResponse(WireModel, Generic[OutputT]):
    """The final model message plus the whole conversation, the request of the last turn and the output."""

    message: Message
    finish_reason: FinishReason | None = None  # None when the model gave none, as in Genkit
    finish_message: str | None = None
    usage: Usage | None = None  # summed over every model call of the run (`{}` when none reported any)
    request: GenerateRequest | None = None
    custom: Any = None
    raw: Any = None
    # Not part of the wire shape: the parsed output and how we got it, and each call's usage.
    parsed: Any = Field(default=None, exclude=True)
    output_repairs: list[Any] = Field(default_factory=list, exclude=True)
    attempts: list[Attempt] = Field(default_factory=list, exclude=True)
    usage_per_call: list[Usage | None] = Field(default_factory=list, exclude=True)
    identity: PromptIdentity | None = Field(default=None, exclude=True)  # the prompt run (name, variant, hash)
    # Where each output value is in the input (a dotprompt.grounding.Grounding), when the run grounded it.
    grounding: Any = Field(default=None, exclude=True)

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; with `grounding` (by JSON path) added when the run grounded its output."""
        out = super().to_dict()
        if self.grounding is not None:
            out["grounding"] = self.grounding.to_dict()
        return out

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def output(self) -> OutputT:
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


class _MessageText:
    """One message's streamed text: pieces merged as they come (each character copied O(log n)
    times), and where each of its chunks ended, as machine integers (8 bytes a chunk)."""

    __slots__ = ("ends", "length", "parts")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.ends = array("q")

    def add(self, text: str) -> int:
        if text:
            parts = self.parts
            parts.append(text)
            self.length += len(text)
            if len(parts) > 32:
                parts[-16:] = ["".join(parts[-16:])]
                while len(parts) > 1 and len(parts[-1]) >= len(parts[-2]):
                    last = parts.pop()
                    parts[-1] += last
        self.ends.append(self.length)
        return self.length

    def upto(self, end: int) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0][:end] if self.parts else ""


class ChunkHistory:
    """Shared across every chunk of one run: what `previous_chunks` and `accumulated_text` need,
    kept compact so that a caller who keeps no chunks does not pay for them. Per chunk it holds
    the end of its text in its message (8 bytes); role and message index once per message; the
    content itself only for a chunk that is not one plain text part (a tool request, metadata).
    Earlier chunks are rebuilt when asked for, with their output parsed again from their text
    (`reparse`, set by the run for each parsed message) when it is read."""

    def __init__(self) -> None:
        self.count = 0
        self.texts: dict[int, _MessageText] = {}
        self._messages: list[tuple[int, int, str]] = []  # (first chunk, message index, role)
        self._contents: dict[int, list[Part]] = {}  # chunk position -> content, when not one plain text part
        self.reparse: dict[int, Callable[[str, str], Any]] = {}  # message index -> output of (text before, chunk text)

    def add(self, index: int, role: str, content: list[Part], text: str) -> tuple[int, int]:
        """Record one chunk; its position in the run and the end of its text in its message."""
        position = self.count
        self.count += 1
        if not self._messages or self._messages[-1][1] != index or self._messages[-1][2] != role:
            self._messages.append((position, index, role))
        if not (len(content) == 1 and content[0].model_fields_set <= {"text"} and content[0].text):
            self._contents[position] = content
        message = self.texts.get(index)
        if message is None:
            message = self.texts[index] = _MessageText()
        return position, message.add(text)

    def chunks(self, stop: int) -> list[Chunk]:
        """The chunks before position `stop`, rebuilt: equal to the ones handed out."""
        rebuilt: list[Chunk] = []
        bounds = [first for first, _, _ in self._messages[1:]] + [self.count]
        for (first, index, role), after in zip(self._messages, bounds, strict=True):
            message, offset = self.texts[index], self._chunk_offset(index, first)
            for position in range(first, min(after, stop)):
                number = offset + position - first
                end = message.ends[number]
                start = message.ends[number - 1] if number else 0
                content = self._contents.get(position)
                if content is None:  # the whole text once (`upto` joins it), then each chunk's own slice
                    content = [Part(text=message.upto(message.length)[start:end])]
                rebuilt.append(Chunk._rebuilt(index, role, content, self, position, start, end))
        return rebuilt

    def _chunk_offset(self, index: int, first: int) -> int:
        """How many chunks of message `index` came before position `first` (a message index
        recurs only if a role alternates back, which the loop never does; counted to be safe)."""
        earlier = 0
        bounds = [start for start, _, _ in self._messages[1:]] + [self.count]
        for (start, other, _), after in zip(self._messages, bounds, strict=True):
            if start >= first:
                break
            if other == index:
                earlier += after - start
        return earlier


class _Reparsed(LazyValue):
    """An earlier chunk's output, parsed again from its message's text when read."""

    __slots__ = ("_end", "_index", "_start", "_state")

    def __init__(self, state: ChunkHistory, index: int, start: int, end: int) -> None:
        self._state, self._index, self._start, self._end = state, index, start, end

    @property
    def value(self) -> Any:
        reparse = self._state.reparse.get(self._index)
        if reparse is None:
            return None
        text = self._state.texts[self._index].upto(self._end)
        output = reparse(text[:self._start], text[self._start:])
        return output.value if isinstance(output, LazyValue) else output


class Chunk(Generic[PartialT]):
    """One streamed piece. `index` is the message it belongs to; it advances when the role changes."""

    __slots__ = ("_end", "_output", "_position", "_state", "content", "index", "role")

    def __init__(self, index: int, role: str, content: list[Part], state: ChunkHistory) -> None:
        self.index = index
        self.role = role
        self.content = content
        self._output: Any = None
        self._state = state
        self._position, self._end = state.add(index, role, content, self.text)

    @classmethod
    def _rebuilt(cls, index: int, role: str, content: list[Part], state: ChunkHistory, position: int, start: int,
                 end: int) -> Chunk:
        chunk = cls.__new__(cls)
        chunk.index, chunk.role, chunk.content = index, role, content
        chunk._state, chunk._position, chunk._end = state, position, end
        chunk._output = _Reparsed(state, index, start, end) if index in state.reparse else None
        return chunk

    def __repr__(self) -> str:
        return f"Chunk(index={self.index}, role={self.role!r}, text={self.text!r})"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, as Genkit's `chunk.toJSON()`: index, role and content."""
        return {"index": self.index, "role": self.role, "content": [p.to_dict() for p in self.content]}

    @property
    def output(self) -> PartialT:
        """The output parsed so far. Built on first read (a copy per chunk would cost memory
        quadratic in the reply), then kept: later chunks never change it."""
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
    def previous_chunks(self) -> list[Chunk[PartialT]]:
        """The chunks of the run before this one. Rebuilt from the run's compact record (the run
        does not keep chunk objects): equal in index, role, content and output, not the same objects."""
        return self._state.chunks(self._position)

    @property
    def accumulated_text(self) -> str:
        """This message's text up to and including this chunk."""
        return self._state.texts[self.index].upto(self._end)

    @property
    def tool_requests(self) -> list[ToolRequest]:
        return [p.tool_request for p in self.content if p.tool_request is not None]


ChunkCallback = Callable[[Chunk], Any]
