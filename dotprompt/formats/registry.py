"""The one registry of output formats: built-ins and user formats go through `define_format`."""

from __future__ import annotations

from ..errors import UnknownFormatError, UsageError
from .base import Format

__all__ = ["define_format", "get_format", "list_formats"]

_FORMATS: dict[str, Format] = {}


def define_format(fmt: Format) -> None:
    """Register a format. A later definition with the same name replaces the earlier one,
    so an application may override a built-in. Anything but a named Format is a UsageError."""
    if not isinstance(fmt, Format):
        raise UsageError(f"define_format() takes a Format, not {type(fmt).__name__}")
    if not fmt.name:
        raise UsageError("a format needs a non-empty name")
    _FORMATS[fmt.name] = fmt


def get_format(name: str) -> Format:
    """The format registered under `name`; UnknownFormatError (a KeyError) suggests the closest."""
    try:
        return _FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name, list(_FORMATS)) from None


def list_formats() -> list[str]:
    """Registered format names, sorted."""
    return sorted(_FORMATS)
