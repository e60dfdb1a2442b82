"""The Dotprompt helpers of the Handlebars engine and the tables of helper names.

One job: what `{{role}}`, `{{history}}`, `{{media}}`, `{{section}}`, `{{json}}`, `{{#ifEquals}}`,
`{{#unlessEquals}}`, `{{lookup}}` and `{{log}}` do in the reference renderer. The marker helpers
write the same per-render nonce markers as the jinja2 engine (`template.Markers`), so input text
can never forge a role, history or media.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Number
from typing import Any

from ..jinja import to_json
from ..markers import Markers
from .names import DOTPROMPT_HELPERS, KNOWN_HELPERS
from .upstream import HelperOptions, SafeString

__all__ = ["BASE_HELPERS", "DOTPROMPT_HELPERS", "KNOWN_HELPERS", "helpers_for", "json_helper", "strict_equal"]

HelperFn = Callable[[list[Any], HelperOptions], Any]


def strict_equal(a: Any, b: Any) -> bool:
    """JavaScript `===` on JSON values: no coercion, 5 != "5", 1 != true; 1 == 1.0 (one number type)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Number) and isinstance(b, Number):
        return a == b
    if a is None or b is None:
        return a is b
    return type(a) is type(b) and a == b


def json_helper(args: list[Any], options: HelperOptions) -> str:
    """`{{json value indent=2}}`: the value as JSON (non-ASCII kept), compact unless indented."""
    if not args:
        return ""
    indent = options.hash.get("indent")
    try:
        indent = int(indent) if indent not in (None, "") else None
    except (TypeError, ValueError):
        raise ValueError(f"json: indent must be a number, got {indent!r}") from None
    return SafeString(to_json(args[0], indent))


def _if_equals(args: list[Any], options: HelperOptions) -> str:
    a, b = [*args, None, None][:2]
    return options.fn(options.context) if strict_equal(a, b) else options.inverse(options.context)


def _unless_equals(args: list[Any], options: HelperOptions) -> str:
    a, b = [*args, None, None][:2]
    return options.inverse(options.context) if strict_equal(a, b) else options.fn(options.context)


def _lookup(args: list[Any], options: HelperOptions) -> Any:
    collection, key = [*args, None, None][:2]
    if isinstance(collection, Mapping):
        return collection.get(key)
    if isinstance(collection, list) and isinstance(key, int) and 0 <= key < len(collection):
        return collection[key]
    return None


def _log(args: list[Any], options: HelperOptions) -> str:
    return ""  # templates do not print to the console of the process rendering them


BASE_HELPERS: dict[str, HelperFn] = {"lookup": _lookup, "log": _log}


def helpers_for(markers: Markers) -> dict[str, HelperFn]:
    """The helpers of one render: the marker helpers are bound to this render's nonce."""

    def role(args: list[Any], options: HelperOptions) -> str:
        if len(args) != 1:
            raise ValueError("role takes one argument: {{role \"system\"}}")
        return SafeString(markers.role(str(args[0])))

    def history(args: list[Any], options: HelperOptions) -> str:
        return SafeString(markers.history())

    def media(args: list[Any], options: HelperOptions) -> str:
        url = options.hash.get("url", args[0] if args else None)
        if not url:
            raise ValueError("media needs url=...")
        content_type = options.hash.get("contentType") or options.hash.get("content_type") or None
        return SafeString(markers.media(str(url), content_type))

    def section(args: list[Any], options: HelperOptions) -> str:
        if len(args) != 1:
            raise ValueError("section takes one argument: {{section \"output\"}}")
        return SafeString(markers.section(str(args[0])))

    return {"role": role, "history": history, "media": media, "section": section, "json": json_helper,
            "ifEquals": _if_equals, "unlessEquals": _unless_equals, **BASE_HELPERS}
