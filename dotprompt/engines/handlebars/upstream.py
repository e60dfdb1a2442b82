"""The one door to `dotpromptz-handlebars`: every name this package uses from it, under public names.

One job: keep the dependency on the third-party parser and renderer in one file. The engine uses
its compiled program and `render_program` directly (a render passes its helpers and pre-compiled
partials without copying or re-parsing), and the fast path reuses its printing and truth rules;
those live in the library's private `_render` module, so an upstream release that moves them
breaks this file only.
"""

from __future__ import annotations

from dotpromptz_handlebars import (
    Block,
    HelperOptions,
    InlinePartial,
    Mustache,
    Node,
    Partial,
    PartialBlock,
    SafeString,
    Text,
)
from dotpromptz_handlebars._render import _if_shows, _show, compile_template, render_program

# Plain aliases, not wrappers: the fast path calls these once per printed value and per condition.
show = _show  # show(value, *, raw, escape_html) -> str: how `{{value}}` prints (true, a,b, 1 for 1.0, ...)
if_shows = _if_shows  # if_shows(value, *, include_zero) -> bool: what `{{#if value}}` treats as yes

__all__ = [
    "Block",
    "HelperOptions",
    "InlinePartial",
    "Mustache",
    "Node",
    "Partial",
    "PartialBlock",
    "SafeString",
    "Text",
    "compile_template",
    "if_shows",
    "render_program",
    "show",
]
