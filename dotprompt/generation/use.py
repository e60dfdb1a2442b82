"""`use:` entries -> middleware layers: the one place an entry is resolved, whoever wrote it.

An entry is a name (`retry`, or one registered with `lib.define_middleware`), `{name: {arguments}}` (a
prompt file's form; Genkit's `{name, config}` is rewritten to it when the file is read), or a middleware
object the caller made. A prompt's entries stay plain data in its options (`GenerateActionOptions.use`)
and become layers here, once per run, in the order written: the first is the outermost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._util.suggest import close_matches
from ..errors import UsageError
from .lookup import ToolLookup
from .policies import BUILT_IN

__all__ = ["resolve_use"]


def resolve_use(entries: Iterable[Any], library: ToolLookup | None) -> list[Any]:
    """One layer per entry (per name, for a mapping of several), in order; an unknown name is a UsageError."""
    layers: list[Any] = []
    for entry in entries:
        if isinstance(entry, str):
            layers.append(_named(entry, {}, library))
        elif isinstance(entry, Mapping):
            layers += [_named(str(name), dict(arguments or {}), library) for name, arguments in entry.items()]
        else:
            layers.append(entry)
    return layers


def _named(name: str, arguments: dict[str, Any], library: ToolLookup | None) -> Any:
    """The library's middleware first (it may shadow a built-in), then the built-ins."""
    found = library.middleware(name, **arguments) if library is not None else None
    if found is not None:
        return found
    factory = BUILT_IN.get(name)
    if factory is None:
        near = close_matches(name, BUILT_IN)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise UsageError(f"unknown middleware {name!r} in `use`; {hint}register it with "
                         f"lib.define_middleware({name!r}, ...) or use a built-in: {', '.join(sorted(BUILT_IN))}")
    return factory(**arguments)
