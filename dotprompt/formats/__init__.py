"""Output formats: what to tell the model, and how to read its reply, whole or streamed.

Built-ins: `json`, `jsonl`, `array`, `enum`, `text`; more with `define_format`. Streaming parsers
do work in proportion to each new chunk (`IncrementalJsonParser`), and final parses report every
repair they made (`ParsedOutput.repairs`) so CI can forbid them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import OutputParseError, UnknownFormatError
from .base import Format, FormatHandler, ParsedOutput, Repair, StreamParser
from .builtin import register_builtins
from .registry import define_format, get_format, list_formats

if TYPE_CHECKING:
    from .reading.extract import extract_json
    from .reading.incremental import IncrementalJsonParser

register_builtins()

__all__ = [
    "Format",
    "FormatHandler",
    "IncrementalJsonParser",
    "OutputParseError",
    "ParsedOutput",
    "Repair",
    "StreamParser",
    "UnknownFormatError",
    "define_format",
    "extract_json",
    "get_format",
    "list_formats",
]


def __getattr__(name: str) -> Any:
    """The reply readers (`reading/`) load on first use: `dotprompt check` needs none of them."""
    if name == "extract_json":
        from .reading.extract import extract_json

        return extract_json
    if name == "IncrementalJsonParser":
        from .reading.incremental import IncrementalJsonParser

        return IncrementalJsonParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
