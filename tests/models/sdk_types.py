"""Checking our wire bodies and fixtures against the vendors' own SDK types (test-only dependencies).

pydantic validates the SDKs' `Iterable[...]` fields lazily, as iterators: `conforms` consumes every
one (so a wrong item fails) and compares the result with the body, so a key the SDK type does not
know (which a TypedDict silently drops) fails too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter


def consume(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: consume(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Iterable):
        return [consume(v) for v in value]
    return value


_ADAPTERS: dict[Any, TypeAdapter] = {}


def conforms(params_type: Any, body: Mapping[str, Any]) -> None:
    """`body` validates as the SDK's request params, every item of it, and no key of it is unknown to them."""
    # The adapter must outlive the lazy iterators it returns (pydantic-core panics when it is collected first).
    adapter = _ADAPTERS.setdefault(params_type, TypeAdapter(params_type))
    validated = consume(adapter.validate_python(body))
    assert validated == consume(body), "the SDK's type drops or changes part of the body"
