"""JSON Schema -> the subset a provider enforces with constrained decoding (OpenAI `strict: true`,
Anthropic `output_config.format`), or the reason it cannot be.

Strict mode (OpenAI's rules, which OpenAI-compatible servers follow): every object lists all its
properties in `required` and says `additionalProperties: false`; a property that was optional
becomes nullable instead, and `restore` later drops the nulls the model sent for those, so the
loop's validation against the author's schema still passes. Keywords the provider does not
enforce are moved into the node's `description` (as `keyword: value` lines), so the model still
reads them; the loop validates the final output against the full schema either way.

A schema that cannot be made strict -- a free-form object or map, a root that is not an object,
`allOf` with several members, nesting deeper than the provider allows -- gets a `reason`, and the
provider falls back to its non-strict mechanism and logs the reason.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._util.cache import LRU
from ...schema.refs import definition_name, ref_target
from ...types import GenerateRequest

__all__ = ["ANTHROPIC_STRICT", "LLAMA_CPP_STRICT", "NATIVE_STRICT",
           "OPENAI_STRICT", "OWN_CONFIG_KEYS", "TOOL", "Profile", "StrictSchema",
           "Structured", "log_fallback", "response_note", "strict_schema", "structured_output"]

log = logging.getLogger("dotprompt.models")

# Which mechanism enforced the output schema; reported as `custom["structuredOutput"]` on the response.
NATIVE_STRICT = "native-strict"  # constrained decoding on the (transformed) schema
NATIVE = "native"  # the provider's JSON mode with the schema, not guaranteed to follow it
TOOL = "tool"  # a forced tool call whose input schema is the output schema
INSTRUCTIONS = "instructions"  # only the format instructions in the prompt
MECHANISM_KEY = "structuredOutput"
# Config keys of dotprompt's own (read by the providers that have the feature, never sent to any API):
# Anthropic's `cacheControl` and `structuredOutput`. A prompt written for one provider keeps working on another.
OWN_CONFIG_KEYS = frozenset({"cacheControl", "structuredOutput"})
REASON_KEY = "structuredOutputFallback"

_STRUCTURE = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
                        "$ref", "$defs", "definitions", "description", "title", "nullable"})
_DROPPED = frozenset({"$schema", "$id", "$comment", "examples", "default", "readOnly", "writeOnly", "deprecated",
                       "x-derived", "x-grounded"})  # ours, for grounding: nothing the model needs to see


@dataclass(frozen=True)
class Profile:
    """What one provider's constrained decoding accepts."""

    name: str
    keywords: frozenset[str]  # validation keywords kept as they are (others go into the description)
    require_all: bool = True  # every property required, optional ones made nullable
    recursion: bool = True  # $ref cycles allowed
    max_depth: int = 10
    max_properties: int = 5000  # over the whole schema
    formats: frozenset[str] | None = None  # string formats kept; None: all


OPENAI_STRICT = Profile("OpenAI strict", frozenset({"pattern", "format", "minimum", "maximum", "exclusiveMinimum",
                                                   "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}),
                        formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6",
                                           "uuid"}))
# llama.cpp's llama-server turns the schema into a grammar and enforces string lengths too: the local
# model's tuning bounds every string with `maxLength`, which must reach the grammar, not the description.
LLAMA_CPP_STRICT = Profile("llama.cpp grammar", OPENAI_STRICT.keywords | {"minLength", "maxLength"},
                           formats=OPENAI_STRICT.formats)
# Anthropic's structured outputs: optional properties allowed, no recursion, no numeric/string limits.
ANTHROPIC_STRICT = Profile("Anthropic structured outputs", frozenset({"format"}), require_all=False, recursion=False,
                           formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri",
                                              "ipv4", "ipv6", "uuid"}))


@dataclass
class StrictSchema:
    """The transformed schema, or why there is none; `restore` undoes the nullability it added."""

    original: dict[str, Any]
    schema: dict[str, Any] | None
    reason: str | None = None
    _made_nullable: bool = field(default=False, repr=False)

    @property
    def strict(self) -> bool:
        return self.schema is not None

    def restore(self, value: Any) -> Any:
        """The model's value with the nulls removed that strict mode allowed only in place of an absent property."""
        if not self._made_nullable:
            return value
        return _restore(value, self.original, self.original, 0)

    def restore_text(self, text: str) -> str:
        """`restore` on JSON text; text that is not JSON is returned unchanged (the loop reports it)."""
        if not self._made_nullable:
            return text
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes: the loop reports it
            return text
        restored = self.restore(value)
        return text if restored == value else json.dumps(restored, ensure_ascii=False)


@dataclass(frozen=True)
class Structured:
    """How one request's output schema is enforced: the mechanism, and the strict transformation when tried."""

    mechanism: str
    strict: StrictSchema | None = None

    @property
    def reason(self) -> str | None:
        return self.strict.reason if self.strict is not None else None

    def note(self) -> dict[str, Any]:
        return response_note(self.mechanism, self.reason)

    def restore_text(self, text: str) -> str:
        return self.strict.restore_text(text) if self.strict is not None and self.strict.strict else text


def structured_output(request: GenerateRequest, profile: Profile | None = OPENAI_STRICT, *,
                      fallback: str = NATIVE) -> Structured | None:
    """None without an output schema; `instructions` when the loop did not ask for native output;
    else `native-strict` when the schema can be made strict for `profile`, `fallback` when not
    (or always, with no profile)."""
    output = request.output
    if output is None or output.json_schema is None:
        return None
    if not output.constrained:
        return Structured(INSTRUCTIONS)
    if profile is None:
        return Structured(fallback)
    strict = strict_schema(output.json_schema, profile)
    return Structured(NATIVE_STRICT if strict.strict else fallback, strict)


class _NotStrict(Exception):  # noqa: N818 - an internal signal, caught in strict_schema()
    pass


def strict_schema(schema: Mapping[str, Any], profile: Profile = OPENAI_STRICT) -> StrictSchema:
    """`schema` transformed to `profile`'s rules, or a StrictSchema with `reason` set when impossible.

    Made once per schema and profile (every call of a batch sends the same one); the result is shared,
    so what is built from it (a request body) must not be changed in place."""
    try:
        key = (profile, json.dumps(schema, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return _strict_schema(schema, profile)
    found = _MADE.get(key, "")
    if found is None:
        found = _strict_schema(schema, profile)
        _MADE.put(key, "", found)
    return found


_MADE: LRU[StrictSchema] = LRU(256)  # by (profile, the schema's JSON)


def _strict_schema(schema: Mapping[str, Any], profile: Profile) -> StrictSchema:
    original = dict(schema)  # never changed: the builder makes new nodes
    builder = _Builder(profile, original)
    try:
        node = builder.node(original, "$", 0, ())
        if node.get("type") != "object" or "properties" not in node:
            raise _NotStrict("the root is not an object with properties")
        defs = builder.definitions()
        if defs:
            node["$defs"] = defs
    except _NotStrict as exc:
        return StrictSchema(original, None, f"{profile.name} cannot enforce this schema: {exc}")
    except RecursionError:  # a keyword value nested past what json.dumps takes
        return StrictSchema(original, None, f"{profile.name} cannot enforce this schema: it is nested too deeply")
    return StrictSchema(original, node, None, builder.made_nullable)


# What each model object has already said, by reason: a batch or a loop reuses the registry's one
# model object per name, and the notice is worth saying once for it, not once per row or call.
_said: weakref.WeakKeyDictionary[Any, set[tuple[str, str]]] = weakref.WeakKeyDictionary()


def log_fallback(structured: Structured | None, model: str, owner: Any = None) -> None:
    """Warn that the schema is enforced but not strictly, once per `owner` (the model) and reason."""
    if structured is None or not structured.reason:
        return
    if owner is not None:
        said = _said.setdefault(owner, set())
        if (structured.mechanism, structured.reason) in said:
            return
        said.add((structured.mechanism, structured.reason))
    log.warning("%s: output schema enforced by %r, not strictly: %s", model, structured.mechanism, structured.reason)


def response_note(mechanism: str, reason: str | None = None) -> dict[str, Any]:
    """What a provider puts in `ModelResponse.custom` to say how the output schema was enforced."""
    return {MECHANISM_KEY: mechanism, REASON_KEY: reason} if reason else {MECHANISM_KEY: mechanism}


class _Builder:
    def __init__(self, profile: Profile, root: Mapping[str, Any]) -> None:
        self.profile = profile
        self.root = root
        self.done: dict[str, dict[str, Any]] = {}
        self.sources: dict[str, str] = {}  # definition name -> the reference it was made from
        self.made_nullable = False
        self.properties = 0

    def definitions(self) -> dict[str, Any]:
        return dict(self.done)

    def node(self, node: Any, path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(node, Mapping):
            raise _NotStrict(f"{path} is not a schema object")
        if depth > self.profile.max_depth:
            raise _NotStrict(f"{path} is nested deeper than {self.profile.max_depth} levels")
        node = _merged_all_of(node, path)
        if "$ref" in node:
            return self._ref(node, path, depth, refs)
        notes: list[str] = []
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _STRUCTURE or key in _DROPPED:
                continue
            if key == "oneOf":
                continue  # handled with anyOf below
            if key in self.profile.keywords and (key != "format" or self._format_ok(value)):
                out[key] = value
            else:
                notes.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        for key in ("type", "enum", "const", "title"):
            if key in node:
                out[key] = node[key]
        variants = node.get("anyOf") if "anyOf" in node else node.get("oneOf")
        if variants is not None:
            if not isinstance(variants, list) or not variants:
                raise _NotStrict(f"{path}.anyOf is not a list of schemas")
            out["anyOf"] = [self.node(v, f"{path}.anyOf[{i}]", depth + 1, refs) for i, v in enumerate(variants)]
        if _is_object(node):
            self._object(node, out, path, depth, refs)
        if "items" in node:
            if isinstance(node["items"], list):
                raise _NotStrict(f"{path}.items is a tuple (a list of schemas)")
            out["items"] = self.node(node["items"], f"{path}.items", depth + 1, refs)
        elif _types(node) & {"array"}:
            raise _NotStrict(f"{path} is an array without `items`")
        description = node.get("description") if isinstance(node.get("description"), str) else None
        if notes:
            description = "\n".join(([description] if description else []) + notes)
        if description:
            out["description"] = description
        if not out or set(out) <= {"description", "title"}:
            raise _NotStrict(f"{path} accepts any value (no type)")
        return _nullable(out) if node.get("nullable") is True else out  # OpenAPI's spelling of ["...", "null"]

    def _format_ok(self, value: Any) -> bool:
        return self.profile.formats is None or value in self.profile.formats

    def _ref(self, node: Mapping[str, Any], path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        ref = node["$ref"]
        if ref == "#":
            raise _NotStrict(f"{path} refers to the root schema")
        name, target = definition_name(ref), ref_target(self.root, ref)
        if name is None or not isinstance(target, Mapping):
            raise _NotStrict(f"{path}.$ref {ref!r} does not name a local definition")
        if self.sources.setdefault(name, ref) != ref:  # `#/definitions/X` and `#/$defs/X` both: one name out
            raise _NotStrict(f"{path}.$ref {ref!r}: two definitions are named {name!r}")
        if name in refs and not self.profile.recursion:
            raise _NotStrict(f"{path} is recursive ({name})")
        if name not in self.done and name not in refs:
            self.done[name] = {}  # reserved first: a recursive reference finds it
            self.done[name] = self.node(target, f"$defs.{name}", depth + 1, (*refs, name))
        out: dict[str, Any] = {"$ref": f"#/$defs/{name}"}
        if isinstance(node.get("description"), str):
            out["description"] = node["description"]
        return out

    def _object(self, node: Mapping[str, Any], out: dict[str, Any], path: str, depth: int, refs: tuple[str, ...]) -> None:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if not isinstance(properties, Mapping) or not properties:
            raise _NotStrict(f"{path} is an object without listed properties (a free-form object or map)")
        if extra not in (None, False):
            raise _NotStrict(f"{path} allows additional properties")
        for key in ("patternProperties", "propertyNames", "unevaluatedProperties"):
            if key in node:
                raise _NotStrict(f"{path} uses {key}")
        self.properties += len(properties)
        if self.properties > self.profile.max_properties:
            raise _NotStrict(f"the schema has more than {self.profile.max_properties} properties")
        required = [r for r in node.get("required") or [] if r in properties]
        out["type"] = out.get("type", "object")
        out["properties"] = {}
        for name, value in properties.items():
            child = self.node(value, f"{path}.{name}", depth + 1, refs)
            if self.profile.require_all and name not in required:
                child = _nullable(child)
                self.made_nullable = True
            out["properties"][name] = child
        out["required"] = list(properties) if self.profile.require_all else required
        out["additionalProperties"] = False


def _merged_all_of(node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    while (all_of := node.get("allOf")) is not None:  # a loop, not recursion: a chain of them may be long
        if not (isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping)):
            raise _NotStrict(f"{path} uses allOf with several schemas")
        node = {**{k: v for k, v in node.items() if k != "allOf"}, **all_of[0]}
    return node


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    return {kind} if isinstance(kind, str) else {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


def _is_object(node: Mapping[str, Any]) -> bool:
    return "object" in _types(node) or ("properties" in node and "type" not in node)


def _with_null(kind: Any) -> Any:
    if isinstance(kind, str):
        return kind if kind == "null" else [kind, "null"]
    if isinstance(kind, list):
        return kind if "null" in kind else [*kind, "null"]
    return kind


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node or "anyOf" in node:
        variants = node.get("anyOf") or [{"$ref": node["$ref"]}]
        if not any(v.get("type") == "null" for v in variants):
            variants = [*variants, {"type": "null"}]
        return {**{k: v for k, v in node.items() if k not in ("$ref", "anyOf")}, "anyOf": variants}
    out = {**node, "type": _with_null(node["type"])} if "type" in node else dict(node)
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _allows_null(node: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> bool:
    if depth > 50 or not isinstance(node, Mapping):
        return True
    if isinstance(node.get("$ref"), str):
        target = ref_target(root, node["$ref"])
        return _allows_null(target, root, depth + 1) if isinstance(target, Mapping) else True
    if "null" in _types(node) or node.get("nullable") is True or None in (node.get("enum") or [1]):
        return True
    variants = node.get("anyOf") or node.get("oneOf")
    if isinstance(variants, list):
        return any(_allows_null(v, root, depth + 1) for v in variants)
    return "type" not in node and "enum" not in node and "const" not in node


def _restore(value: Any, node: Any, root: Mapping[str, Any], depth: int) -> Any:
    if depth > 200 or not isinstance(node, Mapping):
        return value
    if isinstance(node.get("$ref"), str):
        return _restore(value, ref_target(root, node["$ref"]), root, depth + 1)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        return _restore(value, all_of[0], root, depth + 1)
    if isinstance(value, dict) and isinstance(node.get("properties"), Mapping):
        required = set(node.get("required") or [])
        out = {}
        for key, item in value.items():
            child = node["properties"].get(key)
            if item is None and key not in required and child is not None and not _allows_null(child, root, 0):
                continue
            out[key] = _restore(item, child, root, depth + 1) if child is not None else item
        return out
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [_restore(item, node["items"], root, depth + 1) for item in value]
    variants = node.get("anyOf") or node.get("oneOf")
    if isinstance(variants, list) and isinstance(value, dict):
        for variant in variants:
            restored = _restore(value, variant, root, depth + 1)
            if restored != value:
                return restored
    return value
