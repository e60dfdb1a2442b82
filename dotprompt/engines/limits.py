"""The template engines' internal limits: what a template may compute, the partials kept, how much
`engine: auto` reads. (The render budget a user sets is in settings.py.)"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ENGINE_MANIFEST_BYTES",
    "ENGINE_SCAN_FILES",
    "PARTIAL_CACHE_SIZE",
    "RENDER_MAX_INT_BITS",
    "RENDER_MAX_JSON_INDENT",
]

PARTIAL_CACHE_SIZE: Final = 256
"""Parsed partials (jinja2 and Handlebars) kept per library: one entry per partial, least recently used dropped."""

RENDER_MAX_INT_BITS: Final = 65_536
"""The largest whole number a template may compute (about 19,700 digits); `10**(10**10)` is refused."""

RENDER_MAX_JSON_INDENT: Final = 1_000
"""The largest `indent=` of the `json` / `tojson` filters and the Handlebars `{{json}}` helper."""

ENGINE_SCAN_FILES: Final = 2000
"""`engine: auto`, a file either engine reads alike: at most this many of its folder's files are read for their engine."""

ENGINE_MANIFEST_BYTES: Final = 256 * 1024
"""`engine: auto`: at most this much of a project manifest (package.json, pyproject.toml, ...) is read."""
