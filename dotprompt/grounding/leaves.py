"""The leaves of an output, each with the part of the schema that describes it.

Walked with an explicit stack (an output nested thousands deep cannot overflow the interpreter's),
stopping at `max_depth` and `max_leaves`. The schema is followed through `properties`, `items`,
`prefixItems`, `additionalProperties`, local `$ref`s and the branches of `anyOf`/`oneOf`/`allOf`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..schema.compiled import json_path
from ..schema.picoschema import (
    DERIVED,  # the value is computed, not read (a total, an age)
    GROUNDED_MARK,  # true: copied from the input however long; false: written
)

__all__ = ["Leaf", "Walk", "walk"]

_MAX_REF_HOPS = 32


@dataclass(frozen=True)
class Leaf:
    path: str
    value: Any
    exempt: str | None  # why the value is not looked for: boolean, null, enum, derived, empty, generated text
    copied: bool = False  # the schema says the value is copied (`x-grounded: true`): never taken for generated text


@dataclass
class Walk:
    leaves: list[Leaf]
    skipped: str | None


def walk(output: Any, schema: Any, *, max_depth: int, max_leaves: int) -> Walk:
    root = schema if isinstance(schema, Mapping) else None
    leaves: list[Leaf] = []
    stack: list[tuple[tuple[str | int, ...], Any, Any, bool, bool | None]] = [((), output, root, False, None)]
    too_deep = 0
    while stack:
        parts, value, node, derived, grounded = stack.pop()
        node = _resolve(node, root)
        derived = derived or _marks(node, DERIVED, root)
        grounded = _grounded_mark(node, grounded)
        if isinstance(value, (Mapping, list)):
            if len(parts) >= max_depth:
                too_deep += 1
                continue
            children = list(value.items()) if isinstance(value, Mapping) else list(enumerate(value))
            stack.extend(((*parts, key), child, _child(node, key, root), derived, grounded)
                         for key, child in reversed(children))
            continue
        if len(leaves) >= max_leaves:
            return Walk(leaves, f"only the first {max_leaves} values were grounded")
        exempt = "generated text" if grounded is False else _exempt(value, node, derived, root)
        leaves.append(Leaf(json_path(parts), value, exempt, copied=grounded is True))
    return Walk(leaves, f"{too_deep} value(s) nested deeper than {max_depth} levels were not grounded" if too_deep else None)


def _grounded_mark(node: Mapping[str, Any] | None, inherited: bool | None) -> bool | None:
    """`x-grounded` on the node (or on every non-null branch of an optional field), else the parent's."""
    if node is None:
        return inherited
    mark = node.get(GROUNDED_MARK)
    if isinstance(mark, bool):
        return mark
    for combinator in ("anyOf", "oneOf"):
        marks = {b.get(GROUNDED_MARK) for b in node.get(combinator) or ()
                 if isinstance(b, Mapping) and b.get("type") != "null"}
        if len(marks) == 1 and isinstance(next(iter(marks)), bool):
            return bool(next(iter(marks)))
    return inherited


def _exempt(value: Any, node: Mapping[str, Any] | None, derived: bool, root: Mapping[str, Any] | None) -> str | None:
    if derived:
        return "derived"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, str) and not value.strip():
        return "empty"
    if node is not None and (_marks(node, "enum", root) or _marks(node, "const", root)):
        return "enum"
    return None


def _marks(node: Any, keyword: str, root: Mapping[str, Any] | None, depth: int = 0) -> bool:
    """The keyword is on the node, or on every non-null branch of its anyOf/oneOf (an optional enum)."""
    node = _resolve(node, root)
    if node is None or depth > 16:
        return False
    present = node.get(DERIVED) is True if keyword == DERIVED else keyword in node
    if present:
        return True
    for combinator in ("anyOf", "oneOf"):
        branches = [b for b in node.get(combinator) or () if isinstance(b, Mapping) and b.get("type") != "null"]
        if branches and all(_marks(b, keyword, root, depth + 1) for b in branches):
            return True
    return any(_marks(b, keyword, root, depth + 1) for b in node.get("allOf") or () if isinstance(b, Mapping))


def _resolve(node: Any, root: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(node, Mapping):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#") or root is None:
            return node
        target: Any = root
        for token in ref[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return node
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return None


def _child(node: Mapping[str, Any] | None, key: str | int, root: Mapping[str, Any] | None) -> Any:
    """The schema of `key` under `node`: found on the node itself or on one of its branches."""
    pending: list[Any] = [node]
    for _ in range(64):  # branches of branches, bounded
        if not pending:
            return None
        current = _resolve(pending.pop(0), root)
        if current is None:
            continue
        found = _direct_child(current, key)
        if found is not None:
            return found
        for combinator in ("anyOf", "oneOf", "allOf"):
            pending.extend(b for b in current.get(combinator) or () if isinstance(b, Mapping))
    return None


def _direct_child(node: Mapping[str, Any], key: str | int) -> Any:
    if isinstance(key, int):
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and key < len(prefix):
            return prefix[key]
        items = node.get("items")
        return items if isinstance(items, Mapping) else None
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        return properties[key]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None
