"""Registers the built-in formats through the same `define_format` a user calls."""

from __future__ import annotations

from .array import ARRAY_FORMAT
from .enum import ENUM_FORMAT
from .json import JSON_FORMAT
from .jsonl import JSONL_FORMAT
from .media import MEDIA_FORMAT
from .registry import define_format
from .text import TEXT_FORMAT

__all__ = ["BUILTIN_FORMATS", "register_builtins"]

BUILTIN_FORMATS = (JSON_FORMAT, JSONL_FORMAT, ARRAY_FORMAT, ENUM_FORMAT, TEXT_FORMAT, MEDIA_FORMAT)


def register_builtins() -> None:
    for fmt in BUILTIN_FORMATS:
        define_format(fmt)
