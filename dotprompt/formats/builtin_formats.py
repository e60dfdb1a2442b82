"""Registers the built-in formats through the same `define_format` a user calls."""

from __future__ import annotations

from .array_format import ARRAY_FORMAT
from .enum_format import ENUM_FORMAT
from .json_format import JSON_FORMAT
from .jsonl_format import JSONL_FORMAT
from .registry import define_format
from .text_format import TEXT_FORMAT

BUILTIN_FORMATS = (JSON_FORMAT, JSONL_FORMAT, ARRAY_FORMAT, ENUM_FORMAT, TEXT_FORMAT)


def register_builtins() -> None:
    for fmt in BUILTIN_FORMATS:
        define_format(fmt)
