"""JSON Schema -> Gemini's `Schema` (a subset of OpenAPI 3.0).

We keep the keys it documents, inline `$ref`s (a recursive reference becomes an untyped OBJECT),
turn `["x", "null"]` types, null enum members and `anyOf [..., {"type": "null"}]` into `nullable`,
`const` into a one-value enum and `oneOf` into `anyOf`, and upper-case the types. Everything else is
dropped -- notably `additionalProperties`, `$schema`, `$id`, `title`, `examples`,
`exclusiveMinimum/Maximum` and `uniqueItems` -- since the API refuses unknown keys. The loop still
validates the final output against the full schema, so nothing dropped here goes unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...schema.refs import ref_target

__all__ = ["gemini_schema"]

SCHEMA_KEYS = frozenset({"description", "format", "default", "example", "minItems", "maxItems", "minimum", "maximum",
                         "minLength", "maxLength", "pattern", "minProperties", "maxProperties"})


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    return _schema(schema, schema, ())


def _schema(node: Any, root: Mapping[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        return {}
    node, seen = _resolved(node, root, seen)
    if node.get("$ref"):
        return {"type": "OBJECT"}  # a recursive (or dangling) reference: the subset cannot say more
    variants = node.get("anyOf") or node.get("oneOf")
    if isinstance(variants, list):
        return _any_of(node, variants, root, seen)
    out = {k: v for k, v in node.items() if k in SCHEMA_KEYS}
    _set_type(out, node)
    _set_enum(out, node)
    if isinstance(node.get("properties"), Mapping):
        out["properties"] = {k: _schema(v, root, seen) for k, v in node["properties"].items()}
        out["propertyOrdering"] = list(node["properties"])  # else Gemini 2.0 emits keys in alphabetical order
        out.setdefault("type", "OBJECT")
        if node.get("required"):
            out["required"] = [r for r in node["required"] if r in node["properties"]]
    if isinstance(node.get("items"), Mapping):
        out["items"] = _schema(node["items"], root, seen)
        out.setdefault("type", "ARRAY")
    return out


def _resolved(node: Mapping[str, Any], root: Mapping[str, Any],
              seen: tuple[str, ...]) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The node with its `$ref` and a one-element `allOf` merged in, and the references followed so far."""
    while True:
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            node = {**{k: v for k, v in node.items() if k != "allOf"}, **all_of[0]}
            continue
        ref = node.get("$ref")
        target = ref_target(root, ref)
        if ref in seen or not isinstance(target, Mapping):
            return node, seen
        seen = (*seen, str(ref))  # a str: ref_target found a target for it
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def _any_of(node: Mapping[str, Any], variants: list[Any], root: Mapping[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    kept = [v for v in variants if not (isinstance(v, Mapping) and v.get("type") == "null")]
    base = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    if len(kept) == 1:
        out = _schema({**base, **kept[0]}, root, seen)
    else:
        out = {k: v for k, v in base.items() if k in SCHEMA_KEYS}
        out["anyOf"] = [_schema(v, root, seen) for v in kept]
    if len(kept) < len(variants):
        out["nullable"] = True
    return out


def _set_type(out: dict[str, Any], node: Mapping[str, Any]) -> None:
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if "null" in kinds or node.get("nullable"):
        out["nullable"] = True
    kinds = [k for k in kinds if k != "null"]
    if len(kinds) == 1:
        out["type"] = kinds[0].upper()
    elif kinds:
        out["anyOf"] = [{"type": k.upper()} for k in kinds]


def _set_enum(out: dict[str, Any], node: Mapping[str, Any]) -> None:
    values = [node["const"]] if "const" in node else node.get("enum")
    if not isinstance(values, list):
        return
    if None in values:
        out["nullable"] = True
    out["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in values if v is not None]  # the API takes strings
    out.setdefault("type", "STRING")
