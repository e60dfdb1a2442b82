"""The Handlebars fast path: a template that converts exactly to jinja2 renders through jinja2.

Used by `engine.HandlebarsTemplate`; anything it cannot vouch for falls back to the reference
renderer (dotpromptz-handlebars), at compile time (no fast template) or at render time (FallbackError).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jinja2 import Template, Undefined
from jinja2.runtime import LoopContext

from ..budget import BudgetExceededError
from ..jinja import LOOP_FILTER, BudgetEnvironment, metered_loop, render_metered
from ..markers import Markers
from .helpers import BASE_HELPERS, DOTPROMPT_HELPERS, KNOWN_HELPERS, json_helper, strict_equal
from .syntax import PATH_HEAD, walk
from .to_jinja import FastConverter
from .upstream import (
    Block,
    HelperOptions,
    InlinePartial,
    Mustache,
    Node,
    Partial,
    PartialBlock,
    SafeString,
    Text,
    if_shows,
    show,
)

#
# `dotprompt convert` already turns a Handlebars AST into jinja2 source. For templates made only of
# constructs whose conversion is exact, that source is compiled once in an environment that keeps
# Handlebars' semantics: printing is dotpromptz-handlebars' own `show` (true, "", a,b, 1 for 1.0,
# [object Object]); paths step like its `_step` (mapping keys and list indexes, never attributes);
# `#if`/`#unless` use its `if_shows`, `ifEquals` the engine's strict equality, `#each` iterates lists
# only. Whatever the fast render cannot vouch for at run time (an object in `#each`, a function in the
# input, an error of any kind) raises, and the reference renderer renders instead.

__all__ = ["FallbackError", "FastTemplate", "fast_helpers", "fast_inputs_ok", "fast_template"]

_FAST_BLOCKS = frozenset({"if", "unless", "each", "ifEquals", "unlessEquals"})
_HELPER_NAMES = DOTPROMPT_HELPERS | frozenset(BASE_HELPERS)  # {{name}} with no arguments calls these
_JINJA_SPECIAL = frozenset({"self", "varargs", "kwargs", "caller", "super", "loop"})
_LOOP_DATA = frozenset({"key", "index", "first", "last"})
_INVERTED = re.compile(r"\{\{~?\s*\^")
_OTHER_ELSE = re.compile(r"\{\{~?\s*else\s+(?!(?:if|unless)\b)[^\s~}]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")


class FallbackError(Exception):
    """A value the fast render does not handle exactly: the reference renderer takes over."""


def _none(value: Any) -> Any:
    if isinstance(value, Undefined):
        return None
    if callable(value):
        raise FallbackError("function in the input")
    return value


def _step(obj: Any, key: Any) -> Any:
    """dotpromptz-handlebars' path step: a mapping key or a list index, nothing else."""
    if isinstance(obj, LoopContext):
        return getattr(obj, key)
    if isinstance(key, int) and not isinstance(key, bool):
        key = str(key)
    if isinstance(obj, Mapping) and key in obj:
        value = obj[key]
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and isinstance(key, str) and key.isdigit() \
            and int(key) < len(obj):
        value = obj[int(key)]
    else:
        return None
    if callable(value):
        raise FallbackError("function in the input")
    return value


def _fast_finalize(value: Any) -> str:
    return show(_none(value), raw=True, escape_html=False)


def _fast_truthy(value: Any) -> bool:
    return if_shows(_none(value), include_zero=False)


def _fast_equal(a: Any, b: Any) -> bool:
    return strict_equal(_none(a), _none(b))


def _fast_iter(value: Any) -> Any:
    value = _none(value)
    if isinstance(value, Mapping):
        raise FallbackError("#each over an object")
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return value
    return ()


def _no_block(context: Any = None) -> SafeString:
    """The `fn` / `inverse` of a helper called without a block, as the upstream renderer passes them."""
    return SafeString("")


def _fast_json(value: Any, indent: Any = None) -> str:
    return json_helper([_none(value)], HelperOptions(hash={"indent": _none(indent)}, fn=_no_block, inverse=_no_block,
                                                     data={}, context=None, is_block=False))


def fast_helpers(markers: Markers) -> dict[str, Callable[..., str]]:
    def role(name: Any) -> str:
        return markers.role(str(_none(name)))

    def history() -> str:
        return markers.history()

    def media(url: Any = None, content_type: Any = None) -> str:
        url = _none(url)
        if not url:
            raise ValueError("media needs url=...")
        return markers.media(str(url), _none(content_type) or None)

    def section(name: Any) -> str:
        return markers.section(str(_none(name)))

    return {"role": role, "history": history, "media": media, "section": section}


class _FastEnvironment(BudgetEnvironment):
    def getitem(self, obj: Any, argument: Any) -> Any:
        return _step(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        return _step(obj, attribute)


def _make_fast_environment() -> _FastEnvironment:
    env = _FastEnvironment(autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                           finalize=_fast_finalize, cache_size=0)
    env.globals.clear()
    env.filters.clear()
    env.tests.clear()
    env.filters.update({"json": _fast_json, "hb_truthy": _fast_truthy, "hb_eq": _fast_equal, "hb_iter": _fast_iter,
                        LOOP_FILTER: metered_loop})
    return env


_FAST_ENV = _make_fast_environment()


def fast_inputs_ok(variables: Mapping[str, Any], context: Mapping[str, Any] | None) -> bool:
    """Top-level values the fast render reads without a path step: no functions; `@root` is the input."""
    if context and ("root" in context or any(callable(v) for v in context.values())):
        return False
    return not any(callable(v) for v in variables.values())


def _token_head(token: str) -> str | None:
    rest = token
    while rest.startswith("../"):
        rest = rest[3:]
    for prefix in ("@root.", "this.", "this/", "./"):
        if rest.startswith(prefix):
            rest = rest[len(prefix):]
    m = PATH_HEAD.match(rest)
    return m.group(1) if m else None


def _fast_data_token(token: str) -> bool:
    """An @-variable the conversion maps exactly: loop data only as @index/@first/@last, never @key."""
    if "[" in token or token == "@key":
        return False
    head = re.split(r"[./]", token[1:], maxsplit=1)[0]
    return head not in _LOOP_DATA or token[1:] in _LOOP_DATA


def _fast_eligible(source: str, program: list[Node]) -> bool:
    """Only constructs whose jinja2 conversion renders exactly what dotpromptz-handlebars renders."""
    if "\r" in source or "{{{{" in source or _INVERTED.search(source) or _OTHER_ELSE.search(source):
        return False
    upward: set[str] = set()
    params: set[str] = set()

    def visit(nodes: list[Any], in_equals: bool) -> bool:
        for node in nodes:
            if isinstance(node, (Partial, PartialBlock, InlinePartial)):
                return False
            if isinstance(node, Text):
                if node.value.endswith("{"):
                    return False
                continue
            call = getattr(node, "call", None)
            if call is None:
                return False
            name, args, hashed = call["name"], call["args"], call["hash"]
            if call.get("literal") or name in ("lookup", "log"):
                return False
            tokens = [*args, *hashed.values()] + ([] if name in KNOWN_HELPERS else [name])
            if isinstance(node, Mustache) and not args and not hashed and name in _HELPER_NAMES and name != "history":
                return False
            for token in tokens:
                if in_equals and ".." in token:
                    return False
                if token.startswith("@") and not _fast_data_token(token):
                    return False
                head = _token_head(token)
                if head in _JINJA_SPECIAL:
                    return False
                if head and (token.startswith("../") or token.startswith("@root.")):
                    upward.add(head)
            if isinstance(node, Block):
                if name not in _FAST_BLOCKS:
                    return False
                for param in call.get("params") or []:
                    if not _IDENTIFIER.match(param) or param in _JINJA_SPECIAL:
                        return False
                    params.add(param)
                inner = in_equals or name in ("ifEquals", "unlessEquals")
                if not visit(node.body, inner) or not visit(node.inverse, inner):
                    return False
        return True

    return visit(program, False) and not (upward & params)


def _all_heads(program: list[Node]) -> set[str]:
    heads: set[str] = set()
    for node in walk(program):
        call = getattr(node, "call", None)
        if call is not None:
            for token in [*call["args"], *call["hash"].values(), call["name"], *(call.get("params") or [])]:
                head = _token_head(token)
                if head:
                    heads.add(head)
    return heads


class FastTemplate:
    """The converted template; `render` raises FallbackError for inputs it does not render exactly."""

    __slots__ = ("template",)

    def __init__(self, template: Template) -> None:
        self.template = template

    def render(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        if not fast_inputs_ok(variables, context):
            raise FallbackError("inputs the fast path does not render exactly")
        names = dict(variables)
        names.update(fast_helpers(markers))
        names["ctx"] = context or {}
        try:
            return render_metered(self.template, names)
        except BudgetExceededError as exc:
            exc.line = exc.line or _line_in(exc, self.template.filename)  # the converted body keeps the lines
            raise


def _line_in(exc: BaseException, filename: str | None) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in (filename, "<template>"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def fast_template(source: str, program: list[Node]) -> FastTemplate | None:
    """The jinja2 template rendering exactly what `program` renders, or None (then the reference renderer)."""
    try:
        if not _fast_eligible(source, program):
            return None
        converter = FastConverter(source, 1, "<fast path>", _all_heads(program))
        text, problems = converter.run()
        if problems:
            return None
        return FastTemplate(_FAST_ENV.from_string(text))
    except Exception:  # no fast path; the reference renderer is always there
        return None
