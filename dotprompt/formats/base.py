"""The shapes every output format shares: the format record, its handler, and parse results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Format", "FormatHandler", "LazyValue", "ParsedOutput", "Repair", "StreamParser"]


@dataclass(frozen=True, slots=True)  # slots: a JSONL reply can carry one per line (64 bytes each, not 112)
class Repair:
    """One fix the parser had to make. Reported on the result so CI can forbid repairs.

    `kind` is one of: extracted_from_fence, extracted_from_prose, trailing_comma, comment,
    single_quotes, unquoted_key, python_literal, control_character, completed_truncated,
    stripped_quotes, skipped_line, non_finite_number (a NaN or infinity, replaced by null). `detail`
    says what and where (line, column, offset, or the JSON path).

    `count` is how many repairs of that kind one record stands for: 1, except for the summary a
    parse reports past its first MAX_REPORTED_REPAIRS (`formats/reading/limits.py`) repairs, which counts
    the rest of a kind and says where the first of them was.
    """

    kind: str
    detail: str
    count: int = 1


@dataclass
class ParsedOutput:
    """A parsed value and every repair it took (empty for clean output)."""

    value: Any
    repairs: list[Repair] = field(default_factory=list)


class LazyValue:
    """A streamed output built only when read: `.value` (`Chunk.output` reads it once and keeps it).
    Lets a run keep every chunk's output without a copy per chunk."""

    __slots__ = ()

    @property
    def value(self) -> Any:
        raise NotImplementedError

    def map(self, function: Callable[[Any], Any]) -> LazyValue:
        """A LazyValue of `function(self.value)`, applied when read."""
        return _Mapped(self, function)


class _Mapped(LazyValue):
    __slots__ = ("_function", "_source")

    def __init__(self, source: LazyValue, function: Callable[[Any], Any]) -> None:
        self._source = source
        self._function = function

    @property
    def value(self) -> Any:
        return self._function(self._source.value)


@runtime_checkable
class StreamParser(Protocol):
    """Incremental state for one streamed message."""

    def feed(self, text: str) -> Any:
        """Append new text; return the output so far (the meaning depends on the format).

        A stream may also offer `feed_lazy(text)`, the same output as a LazyValue (or as the value
        itself when building it costs nothing); a streamed run prefers it. And `whole_output()`: what
        `parse_text` would give for the whole text fed, or None when it cannot say without parsing
        it; a streamed run whose final text is the text it streamed uses it instead of `parse_text`."""
        ...


@runtime_checkable
class FormatHandler(Protocol):
    """A format bound to one output schema."""

    instructions: str | None  # what to tell the model; None: nothing to inject

    def parse_text(self, text: str) -> ParsedOutput:
        """Parse the final, whole message text."""
        ...

    def new_stream(self) -> StreamParser:
        """Fresh incremental state for one message."""
        ...


@dataclass(frozen=True)
class Format:
    """A named output format. Built-ins register through `define_format` like user formats."""

    name: str
    content_type: str | None  # "application/json", "application/jsonl", "text/plain", "text/enum"
    constrained: bool  # native constrained output may be used with it by default
    default_instructions: bool  # its instructions are injected unless the caller says otherwise
    handler: Callable[[dict[str, Any] | None], FormatHandler]  # built from the output JSON Schema
