"""Shape checks for provider replies: one small spec language, one checker, used by every provider.

A reply that is valid JSON but not the shape the API documents (`choices: ["x"]`, `content: 5`, tool
`arguments` as an object, a stream event `[1]`) must become a ModelError naming the provider and
the field, never an AttributeError/TypeError/ValidationError from deep inside the mapping code.
Each provider declares the fields its mapping code reads; the checker walks a reply against that.

Spec language:
    Kind            a leaf: STR, COUNT, OBJECT, ... (a name for messages and a test)
    {"key": spec}   an object; each listed key that is present and not null is checked, others are free
    [spec]          a list whose every item matches spec
    By(key, {...})  an object checked by the spec its `key` (e.g. "type") selects, else `default`
    AnyOf(a, b)     either spec
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import ModelError

__all__ = ["COUNT", "OBJECT", "STR", "AnyOf", "By", "Kind", "check", "shape_guard"]


@dataclass(frozen=True)
class Kind:
    name: str  # how a message names it: "a string"
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class By:
    key: str
    specs: Mapping[str, Any]
    default: Any = field(default_factory=lambda: OBJECT)


@dataclass(frozen=True)
class AnyOf:
    options: tuple[Any, ...]

    def __init__(self, *options: Any) -> None:
        object.__setattr__(self, "options", options)


STR = Kind("a string", lambda v: isinstance(v, str))
# Token counts: an integer, or a float without a fraction (what pydantic accepts as an int).
COUNT = Kind("a whole number", lambda v: isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
OBJECT: Kind = Kind("an object", lambda v: isinstance(v, Mapping))  # typed: By's default names it before this line


def check(value: Any, spec: Any, provider: str, *, what: str = "the reply", request_id: str | None = None,
          partial: Callable[[], Any] = lambda: None) -> None:
    """Raise a ModelError naming the first field of `value` that does not match `spec`."""
    found = _problem(value, spec, "")
    if found is None:
        return
    path, expected, got = found
    where = f"{what} field {path}" if path else what
    raise ModelError(f"unexpected reply shape: {where} is {_describe(got)}, expected {expected} "
                     f"(is the base URL a {provider} API endpoint?)", provider=provider, request_id=request_id,
                     partial=partial())


@contextmanager
def shape_guard(provider: str, *, what: str = "the reply", request_id: str | None = None,
                partial: Callable[[], Any] = lambda: None):
    """Safety net around mapping code the specs should already protect: a shape we did not foresee is
    still a ModelError (with the original exception as its cause), never a bare library traceback.
    Never wrap user callbacks in this: their own TypeErrors must stay theirs."""
    try:
        yield
    except ModelError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:  # ValueError covers pydantic's
        raise ModelError(f"unexpected reply shape in {what}: {type(exc).__name__}: {str(exc)[:300]} "
                         f"(is the base URL a {provider} API endpoint?)", provider=provider, request_id=request_id,
                         partial=partial()) from exc


def _problem(value: Any, spec: Any, path: str) -> tuple[str, str, Any] | None:
    """(path, expected, actual value) of the first mismatch, or None."""
    if isinstance(spec, Kind):
        return None if spec.test(value) else (path, spec.name, value)
    if isinstance(spec, AnyOf):
        if any(_problem(value, option, path) is None for option in spec.options):
            return None
        return path, " or ".join(_expected(o) for o in spec.options), value
    if isinstance(spec, By):
        if not isinstance(value, Mapping):
            return path, "an object", value
        key = value.get(spec.key)
        chosen = spec.specs.get(key) if isinstance(key, str) else None
        return _problem(value, spec.default if chosen is None else chosen, path)
    if isinstance(spec, list):
        if not isinstance(value, list):
            return path, "a list", value
        for index, item in enumerate(value):
            if (found := _problem(item, spec[0], f"{path}[{index}]")) is not None:
                return found
        return None
    if not isinstance(value, Mapping):
        return path, "an object", value
    for key, inner in spec.items():
        if value.get(key) is None:
            continue  # absent or null: the mapping code treats both as "not given"
        if (found := _problem(value[key], inner, f"{path}.{key}" if path else key)) is not None:
            return found
    return None


def _expected(spec: Any) -> str:
    if isinstance(spec, Kind):
        return spec.name
    return "a list" if isinstance(spec, list) else "an object"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{names.get(type(value), type(value).__name__)} ({text})"
