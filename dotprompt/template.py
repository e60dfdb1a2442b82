"""The jinja2 engine: a sandboxed environment with the Dotprompt filters, line offsets, included names.

The helpers that write role/history/media/section markers, and the step from rendered text to
messages, are engine-neutral and live in markers.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2 import BaseLoader, ChainableUndefined, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

# Names a template sees besides the caller's input; they win over input keys of the same name.
RESERVED_NAMES = frozenset({"role", "history", "media", "section", "ctx"})
_HANDLEBARS = re.compile(r"{{~?\s*(?:[#/>^!@]|(?:role|history|media|section|json|ifEquals|unlessEquals)\s+[\"'\w@])")
HANDLEBARS_HINT = ("this looks like Handlebars syntax; write jinja2 "
                   "({{ role(\"system\") }}, {% if x %}, {% include \"name\" %}) or use the handlebars engine: "
                   "add `dotprompt.engine: handlebars` to the frontmatter or PromptLibrary(engine=\"handlebars\")")


def looks_like_handlebars(source: str) -> bool:
    return _HANDLEBARS.search(source) is not None


class SandboxUndefined(ChainableUndefined):
    """Missing values render as empty text (as in Handlebars); blocked attributes fail loudly."""

    __slots__ = ()

    def _blocked(self) -> bool:
        return self._undefined_exception is SecurityError

    def __str__(self) -> str:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__str__()

    def __getattr__(self, name: str) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getattr__(name)

    def __getitem__(self, name: Any) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getitem__(name)


def to_json(value: Any, indent: int | None = None) -> str:
    """`{{ value | json }}`: compact by default, pretty with indent=N; non-ASCII kept as is."""
    if isinstance(value, SandboxUndefined):
        return ""
    if indent:
        return json.dumps(value, indent=int(indent), ensure_ascii=False, default=_jsonable)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _finalize(value: Any) -> Any:
    # None renders as empty text, like a missing value, never as the word "None".
    return "" if value is None else value


def make_environment(loader: BaseLoader | None) -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=loader,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,  # a block tag on its own line leaves no blank line behind
        lstrip_blocks=True,
        undefined=SandboxUndefined,
        finalize=_finalize,
        auto_reload=True,
        cache_size=-1,
    )
    env.filters["json"] = to_json
    return env


def with_line_offset(body: str, first_line: int) -> str:
    """Prefix a body so jinja's line numbers are the file's: a comment spanning the frontmatter.

    The body is already stripped of leading whitespace, so the comment's `-` eats nothing.
    """
    if first_line <= 1:
        return body
    return "{#" + "\n" * (first_line - 1) + "-#}" + body


def included_names(ast: nodes.Template) -> list[tuple[str, int]]:
    """Constant partial names used by `{% include %}` / `{% import %}`, with their lines."""
    found: list[tuple[str, int]] = []
    for node in ast.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        if isinstance(node.template, nodes.Const) and isinstance(node.template.value, str):
            found.append((node.template.value, node.lineno))
    return found
