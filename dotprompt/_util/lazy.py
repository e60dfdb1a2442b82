"""Names a package offers that load with their module on first use (PEP 562 module `__getattr__`).

`import dotprompt` stays cheap: the running side (providers, the loop, the batch runner) is imported
only when one of its names is read. Type checkers see the same names in each package's
`TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str], namespace: dict[str, Any],
               public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__`: `where` maps a name to the module (relative to
    `package`) that defines it; a loaded name is kept in `namespace`, so it is looked up once."""
    listed = sorted(set(public))

    def module_getattr(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module, package), name)
        return value

    def module_dir() -> list[str]:
        return sorted(set(namespace) | set(listed))

    return module_getattr, module_dir
