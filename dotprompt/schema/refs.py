"""Local `$ref`s (`#/$defs/Item`): the one place a reference inside a schema is followed.

Only references into the schema document itself are followed: nothing here fetches (the load-time
check, `compiled.unresolvable_ref`, tells the user about any other).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["definition_name", "ref_target", "resolve"]


def ref_target(root: Any, ref: Any) -> Any:
    """What the local `$ref` `ref` (`#`, or a JSON pointer such as `#/$defs/Item`) points to in `root`, or None."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return None
    target = root
    for part in ref[2:].split("/") if ref != "#" else ():
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or key not in target:
            return None
        target = target[key]
    return target


def resolve(root: Any, node: Any) -> Any:
    """`node` with its `$ref`s followed, a chain of them too; one that leads nowhere, or back, is returned as is."""
    seen: set[str] = set()
    while isinstance(node, Mapping) and isinstance(ref := node.get("$ref"), str) and ref not in seen:
        seen.add(ref)
        target = ref_target(root, ref)
        if target is None:
            return node
        node = target
    return node


def definition_name(ref: Any) -> str | None:
    """`Item` for `#/$defs/Item` or `#/definitions/Item`; None for a reference to anything else."""
    parts = ref.split("/") if isinstance(ref, str) else []
    if len(parts) == 3 and parts[0] == "#" and parts[1] in ("$defs", "definitions") and "~" not in parts[2]:
        return parts[2]
    return None
