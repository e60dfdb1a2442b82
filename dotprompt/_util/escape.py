"""One escaping rule per output channel: what we write must never be read as the channel's own syntax.

Text from a model, a dataset, a test file or a pull request reaches five channels, each with its
own control syntax: a terminal (ESC sequences: colours, titles, OSC 52 clipboard writes, hidden
text), GitHub workflow commands (`::error ...::` lines), Markdown (the step summary, where a
newline or `<!--` changes what a reader sees), XML (JUnit, where most control characters make the
whole file invalid) and JSON (where NaN and Infinity are not values). Every writer passes foreign
text through the rule of its channel here, so a rule is fixed once for all of them.

Controls are made visible (`\\x1b`, `\\u202e`) rather than dropped: a reviewer should see that
something odd was there. It imports nothing of ours, so any module can use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

__all__ = ["finite_json", "github_message", "github_property", "json_dumps", "markdown", "terminal", "view_body",
           "xml_text"]

# C0 and C1 controls, DEL, lone surrogates (unprintable and unencodable), and the invisible
# format characters that reorder or hide text (bidirectional overrides and isolates, zero widths).
_UNSAFE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
# What XML 1.0 forbids outright beyond that set.
_XML_UNSAFE: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069"
                                "\ufeff\ud800-\udfff\ufffe\uffff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _unsafe_except(keep: str) -> re.Pattern[str]:
    allowed = "".join(f"\\x{ord(c):02x}" for c in keep)
    return re.compile(f"(?![{allowed}]){_UNSAFE.pattern}") if keep else _UNSAFE


_TERMINAL_LINES: Final = _unsafe_except("\n\t")
_TERMINAL_ONE_LINE: Final = _UNSAFE


def terminal(text: str, *, lines: bool = True) -> str:
    """`text` safe to print: every control and invisible character shown as an escape. With
    `lines`, newlines and tabs stay (a model reply shown whole); without, they are escaped too
    (one table cell, one line of a list)."""
    pattern = _TERMINAL_LINES if lines else _TERMINAL_ONE_LINE
    return pattern.sub(_visible, text)


# A line that could pass for a section header of a readable view (`--- output ---` in `logs ID`).
_HEADER_LIKE: Final = re.compile(r"^(?=---)", re.MULTILINE)


def view_body(text: str) -> str:
    """Foreign text shown whole under the `--- title ---` headers of a readable view: as `terminal`,
    and a line that starts with `---` is shown with a backslash first, so it never reads as a header.
    (What sits on a header's own line is foreign too: `terminal(value, lines=False)`.)"""
    return terminal(_HEADER_LIKE.sub("\\\\", text))


_GITHUB_LINES: Final = _unsafe_except("\n\r")
_GITHUB_MESSAGE: Final = {"%": "%25", "\r": "%0D", "\n": "%0A"}
_GITHUB_PROPERTY: Final = {**_GITHUB_MESSAGE, ":": "%3A", ",": "%2C"}


def github_message(text: str) -> str:
    """The message of a workflow command (`::error file=...::MESSAGE`), escaped as the runner
    decodes it: a newline in it can then never start a command of its own."""
    return _percent(_GITHUB_LINES.sub(_visible, text), _GITHUB_MESSAGE)


def github_property(text: str) -> str:
    """A property value of a workflow command (`file=VALUE`): as a message, and `:` and `,` too."""
    return _percent(_GITHUB_LINES.sub(_visible, text), _GITHUB_PROPERTY)


def _percent(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in text) if any(c in text for c in table) else text


# Inline Markdown syntax (emphasis, code spans, links and images, table cells, escapes) is escaped
# with a backslash; `<` `>` `&` become entities so no HTML (a comment, a tag) can open. With no
# newline left no block syntax (a heading, a list, a row) can start: the line stays the writer's.
_MARKDOWN_SYNTAX: Final = re.compile(r"[\\`*_\[\]|~]")
_HTML: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_NEWLINE: Final = re.compile(r"\r\n|\r|\n")


def markdown(text: str) -> str:
    """`text` as literal inline Markdown: one line (newlines become `<br>`), no syntax, no HTML."""
    text = _MARKDOWN_SYNTAX.sub(lambda m: "\\" + m.group(), text)
    text = "".join(_HTML.get(c, c) for c in text) if any(c in text for c in "&<>") else text
    return _UNSAFE.sub(_visible, _NEWLINE.sub("<br>", text))


def xml_text(text: str) -> str:
    """`text` fit for an XML 1.0 attribute or element (the XML writer escapes `<`, `&`, quotes):
    characters XML forbids, and other controls, shown as escapes; newlines and tabs stay."""
    return _XML_UNSAFE.sub(_visible, text)


def finite_json(value: Any) -> Any:
    """`value` with every NaN and ±Infinity replaced by None (JSON's `null`, as JavaScript's
    JSON.stringify writes them): for writers, whose input was checked where it entered."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def json_dumps(value: Any, **options: Any) -> str:
    """`json.dumps` that never writes the non-JSON tokens NaN or Infinity (they become null)."""
    options.setdefault("ensure_ascii", False)
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as exc:
        if "not JSON compliant" not in str(exc):
            raise  # a circular reference: not ours to hide
        default = options.pop("default", None)
        if default is not None:
            options["default"] = lambda o: finite_json(default(o))
        return json.dumps(finite_json(value), allow_nan=False, **options)
