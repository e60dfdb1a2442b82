"""The little JSON Schema handling formats need: local `$ref`s, type tests, a fenced listing."""

from __future__ import annotations

import json
from typing import Any


def resolve(root: dict[str, Any], node: Any) -> Any:
    """Follow local `$ref`s (`#/$defs/Item`) from `node`; anything unresolvable is returned as is."""
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(ref := node.get("$ref"), str) and ref.startswith("#") and ref not in seen:
        seen.add(ref)
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or key not in target:
                return node
            target = target[key]
        node = target
    return node


def has_type(node: Any, name: str) -> bool:
    """True when the schema's `type` is `name` or a list containing it (a nullable type)."""
    kind = node.get("type") if isinstance(node, dict) else None
    return kind == name or (isinstance(kind, list) and name in kind)


def with_definitions(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` carrying the root's `$defs`/`definitions`, so a sub-schema shown alone keeps its refs."""
    extra: dict[str, Any] = {key: root[key] for key in ("$defs", "definitions") if key in root and key not in node}
    return {**node, **extra}


def fenced(schema: Any) -> str:
    """The schema pretty printed in a ```json block, for instructions."""
    return f"```json\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n```"
